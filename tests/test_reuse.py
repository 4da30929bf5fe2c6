"""conflict_eval.answers.reuse: same prompt, same model, same run -> one call."""

import asyncio

import anyio

from conflict_eval.answers.reuse import Reuse, reuse_for


class Counter:
    def __init__(self, fail_first=False):
        self.calls, self.fail_first = 0, fail_first

    async def __call__(self):
        self.calls += 1
        n = self.calls
        await anyio.sleep(0.01)
        if self.fail_first and n == 1:
            raise RuntimeError("rate limited")
        return f"out {n}"


async def gather(reuse, key, make, n, uses=None):
    results = [None] * n

    async def one(i):
        try:
            results[i] = await reuse.call(key, make, uses)
        except RuntimeError as err:
            results[i] = str(err)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    return results


async def test_concurrent_and_later_callers_reuse_one_call():
    reuse, make = Reuse(), Counter()
    assert await gather(reuse, "k", make, 3) == [("out 1", False), ("out 1", True), ("out 1", True)]
    assert await reuse.call("k", make) == ("out 1", True)
    assert await reuse.call("other", make) == ("out 2", False) and make.calls == 2


async def test_after_a_failure_one_waiting_caller_makes_the_call_for_the_others():
    reuse, make = Reuse(), Counter(fail_first=True)
    assert await gather(reuse, "k", make, 3) == ["rate limited", ("out 2", False), ("out 2", True)]
    assert make.calls == 2


async def test_with_uses_the_key_is_forgotten_once_every_caller_asked():
    reuse, make = Reuse(), Counter()
    assert await gather(reuse, "k", make, 2, uses=2) == [("out 1", False), ("out 1", True)]
    assert await reuse.call("k", make, uses=2) == ("out 2", False)  # a new group of askers
    assert await reuse.call("k", make, uses=2) == ("out 2", True)
    assert reuse._calls == {}


async def test_with_uses_a_failure_lets_each_waiting_caller_ask_itself():
    reuse, make = Reuse(), Counter(fail_first=True)
    assert await gather(reuse, "k", make, 2, uses=2) == ["rate limited", ("out 2", False)]
    assert reuse._calls == {}


def test_nothing_is_reused_across_runs_or_off_a_running_loop():
    class Model:
        pass

    model = Model()
    assert reuse_for(model) is None  # no running event loop

    async def get():
        return reuse_for(model)

    def run():  # a new loop per run (asyncio.run may reuse one loop once nest_asyncio has patched it)
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(get())
        finally:
            loop.close()

    first, second = run(), run()
    assert isinstance(first, Reuse) and first is not second
