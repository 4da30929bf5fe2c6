"""Reading the toolkit's own JSON and YAML files (suites, plans, cost configs,
cards, stop records), with every error naming the file and line.

YAML is composed once into nodes and checked before anything is built from it:

* a key given twice in one mapping is an error naming both lines (PyYAML
  keeps the last one silently);
* aliases are bounded: the document's size with every alias expanded is
  counted once per node (a visited set), and a document over
  :data:`MAX_YAML_NODES` expanded nodes is refused. A "billion laughs" file
  of a few hundred bytes is refused in milliseconds instead of expanding
  into gigabytes wherever the data is walked or written out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

MAX_YAML_NODES = 100_000
"""The most nodes a YAML document may hold with its aliases expanded."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class ConfigFileError(ValueError):
    """A JSON or YAML file is malformed; the message names the file (and line)."""


def _where(file: str, line: int | None) -> str:
    return f"{file}, line {line}" if line else file


def compose_yaml(text: str, file: str) -> yaml.Node | None:
    """The YAML document in ``text`` as nodes, checked for duplicate keys and
    alias expansion; raises :class:`ConfigFileError` naming ``file``."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigFileError(f"{_where(file, mark.line + 1 if mark else None)}: invalid YAML: {problem}") from None
    if node is not None:
        _check_size(node, file)
        _check_duplicates(node, file)
    return node


def construct_yaml(node: yaml.Node | None) -> Any:
    """The Python data of a node from :func:`compose_yaml` (YAML's safe types)."""
    if node is None:
        return None
    return yaml.SafeLoader("").construct_document(node)


def load_yaml(text: str, file: str) -> Any:
    """``yaml.safe_load`` with the checks of :func:`compose_yaml`."""
    return construct_yaml(compose_yaml(text, file))


def read_yaml(path: str | Path) -> Any:
    """The YAML (or JSON) file at ``path``; errors name it."""
    return load_yaml(_read_text(path), str(path))


def load_json(text: str, file: str) -> Any:
    """``json.loads`` whose errors name ``file``, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(f"{file}, line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # an integer over Python's digit limit, nesting
        raise ConfigFileError(f"{file}: invalid JSON ({type(exc).__name__}: {exc})") from None


def read_json(path: str | Path) -> Any:
    """The JSON file at ``path``; errors name it."""
    return load_json(_read_text(path), str(path))


def read_config(path: str | Path, where: str) -> Any:
    """A config file's object, read as Inspect reads ``--model-cost-config``:
    JSON when the text starts with ``{``, else YAML (whatever the file's suffix).
    The one rule for telling JSON from YAML (the cost config, ``--prices`` and
    ``--batch FILE`` are read by it); errors name ``where`` and the line."""
    if not Path(path).is_file():
        raise ConfigFileError(f"{where}: no such file")
    return parse_config_text(_read_text(path, where), where)


def parse_config_text(text: str, where: str) -> Any:
    """JSON when the text starts with ``{``, else YAML (duplicate keys and alias bombs refused)."""
    return load_json(text, where) if text.strip().startswith("{") else load_yaml(text, where)


def json_or_none(path: str | Path, unreadable: Any = None) -> Any:
    """The JSON at ``path``, or None when there is no such file; ``unreadable``
    when the file is there but cannot be read or is not JSON (cut short by a
    full disk, edited by hand). For the toolkit's own state files (stop
    records, leases, ``eval-set.json``), where a missing or broken file is an
    answer, not an error."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return unreadable


def _read_text(path: str | Path, where: str | None = None) -> str:
    """The file's text (a UTF-8 byte-order mark dropped); errors name ``where`` (default: the path)."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"{where or path}: not UTF-8 text (byte {exc.start})") from None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_size(root: yaml.Node, file: str) -> None:
    """Refuse a document whose alias-expanded size is over the bound; each node is sized once."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # iterative post-order: deep nesting cannot overflow the Python stack
        node, done = stack.pop()
        key = id(node)
        if done:
            size[key] = min(1 + sum(size.get(id(c), 1) for c in _children(node)), MAX_YAML_NODES + 1)
            continue
        if key in size:
            continue
        size[key] = 1  # a recursive alias counts once where it closes the loop
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    if size[id(root)] > MAX_YAML_NODES:
        raise ConfigFileError(f"{_where(file, root.start_mark.line + 1)}: refused: with its aliases expanded the "
                              f"document holds over {MAX_YAML_NODES:,} values (nested aliases?)")


def _check_duplicates(root: yaml.Node, file: str) -> None:
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                    continue
                line = key.start_mark.line + 1
                if (key.tag, key.value) in first:
                    raise ConfigFileError(f"{_where(file, line)}: duplicate key {key.value!r} (first given on line "
                                          f"{first[(key.tag, key.value)]}; a key may appear once per mapping)")
                first[(key.tag, key.value)] = line
        stack.extend(_children(node))
