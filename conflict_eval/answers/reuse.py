"""Same prompt, same model, same run -> one call.

Two places send byte-identical prompts to one model within one run: the
ConflictScore grader (the same claim and document in the RAG and Balanced
samples of a report run) and the negative samples of Conflict Exposure (two
samples of one question share every call before the last). Both go through
:meth:`Reuse.call`: the first caller of a key makes the call, a caller that
arrives while it is in flight waits for it instead of racing it, later
callers get its output. A failed or cancelled call is not remembered: a
caller waiting for it then makes its own.

Why not Inspect's generate cache: concurrent samples would all miss it, and
a disk cache would also make a re-run free, hiding the cost the benchmarks
measure. :func:`reuse_for` keeps the memory per model object and event loop
(one ``eval()`` call runs in its own loop), so nothing is reused across runs.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


class _Call:
    def __init__(self, left: int | None):
        self.left = left
        """Callers still to ask (with ``uses``); ``None``: kept for the run."""
        self.done = anyio.Event()
        self.ok = False
        self.output: Any = None


class Reuse:
    """Calls by key: the ones in flight and the outputs of the ones made."""

    def __init__(self):
        self._calls: dict[Hashable, _Call] = {}

    async def call(self, key: Hashable, make: Callable[[], Awaitable[T]],
                   uses: int | None = None) -> tuple[T, bool]:
        """``(output, reused)``: the output of an earlier or in-flight call
        with ``key`` (``reused=True``), else ``await make()``.

        ``uses``: how many callers will ask for ``key`` (the samples of a
        share group); the key is forgotten once that many have asked, so the
        memory stays bounded, and if the call fails, a caller waiting for it
        makes its own call. Without it, the output is kept for the run, and
        after a failed call the first waiting caller makes the call again for
        the others."""
        while (entry := self._calls.get(key)) is not None:
            if entry.left is not None:
                entry.left -= 1
                if entry.left <= 0:
                    del self._calls[key]
            await entry.done.wait()
            if entry.ok:
                return entry.output, True
            if uses is not None:
                return await make(), False
        entry = _Call(None if uses is None else uses - 1)
        if uses is None or uses > 1:
            self._calls[key] = entry
        try:
            entry.output = await make()
            entry.ok = True
            return entry.output, False
        finally:
            if not entry.ok and self._calls.get(key) is entry:
                del self._calls[key]
            entry.done.set()


_BY_MODEL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def reuse_for(model: Any) -> Reuse | None:
    """The :class:`Reuse` of ``model`` in the running event loop (one run);
    ``None`` (make every call) off asyncio or for an object without weak
    references."""
    try:
        loop = asyncio.get_running_loop()
        per_loop = _BY_MODEL.setdefault(model, {})
    except (RuntimeError, TypeError):
        return None
    # keyed by the loop's id, checked against a weak reference to the loop itself: a
    # later run's loop may be allocated where a finished one was, and must not inherit it
    entry = per_loop.get(id(loop))
    if entry is None or entry[0]() is not loop:
        entry = per_loop[id(loop)] = (weakref.ref(loop), Reuse())
    return entry[1]
