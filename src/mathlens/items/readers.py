"""Reading user data files safely: YAML and JSONL with size, nesting, alias and duplicate-key checks.

Limits (`mathlens.items.limits`; each breach is an `ItemFileError` naming the file, the line and
field where known, the limit and the variable that raises it):

* a YAML file holds at most `ITEM_YAML_BYTES`; a JSONL file at most `ITEM_JSONL_BYTES`, one record
  (line) at most `ITEM_RECORD_BYTES`, and at most `ITEM_RECORDS` records;
* any text value holds at most `ITEM_TEXT_CHARS` characters;
* values nest at most `ITEM_NESTING` levels deep;
* a YAML document expands to at most `YAML_VALUES` values once its aliases are followed. This is
  checked on the composed node graph, each node's expanded size computed once, before anything
  is constructed: a 443-byte alias bomb that expands to 387 million values is refused at once,
  and an alias that refers to its own anchor is refused too;
* numbers are finite: `NaN`, `Infinity` (JSON) and `.nan`, `.inf` (YAML) are refused, as is a
  number too large for a float;
* a YAML mapping may not repeat a key (the message names both lines);
* a UTF-8 byte-order mark at the start of a file is accepted and ignored.

JSONL is read one line at a time, so a large file never sits in memory as one string.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from mathlens.errors import UserError
from mathlens.items.errors import ItemFileError, loc_to_field, yaml_line
from mathlens.items.jsonread import JsonLimitError, load_json
from mathlens.items.limits import (
    ITEM_JSONL_BYTES,
    ITEM_NESTING,
    ITEM_RECORD_BYTES,
    ITEM_RECORDS,
    ITEM_TEXT_CHARS,
    ITEM_YAML_BYTES,
    YAML_VALUES,
    ReaderLimit,
)

_BOM = b"\xef\xbb\xbf"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_Loader):
    """A safe YAML loader that refuses a mapping repeating one of its keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            line = key_node.start_mark.line + 1
            if first is not None:
                raise _DuplicateKey(key, first, line)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


class _DuplicateKey(Exception):
    def __init__(self, key: Any, first: int, second: int) -> None:
        super().__init__(key)
        self.key, self.first, self.second = key, first, second


#: how a reader reports a located problem: (path, line or row, field, problem) -> the error raised
FileError = Callable[[Path, Any, Any, str], UserError]


def open_checked(path: Path, limit: ReaderLimit, kind: str = "item", error: FileError = ItemFileError) -> int:
    """The size of `path` after checking it is a readable file within `limit` (bytes); a directory
    or a file over the limit is `error` (the reader's own located error), a missing one `UserError`."""
    try:
        if path.is_dir():
            raise error(path, None, None, f"is a directory; name a {kind} file")
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"{path}: no such {kind} file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if size > limit.value:
        raise error(path, None, None, "the file is " + limit.exceeded(f"{size:,} bytes"))
    return size


def read_text(path: Path, limit: ReaderLimit = ITEM_YAML_BYTES, kind: str = "item") -> str:
    """The whole text of a small file (UTF-8, an optional BOM dropped), within `limit` (bytes)."""
    open_checked(path, limit, kind)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        return raw.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ItemFileError(path, _line_at(raw, exc.start), None, f"not UTF-8 text ({exc.reason})") from None


def _line_at(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def load_yaml(path: Path, text: str) -> tuple[Any, yaml.Node | None]:
    """(data, composed node) of a YAML text, with the limits of this module."""
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_expansion(path, node)
        data = loader.construct_document(node) if node is not None else None
    except _DuplicateKey as dup:
        raise ItemFileError(path, dup.second, str(dup.key),
                            f"key {dup.key!r} appears twice in one mapping (lines {dup.first} and {dup.second})"
                            ) from None
    except RecursionError:
        raise ItemFileError(path, None, None, "values nest " + ITEM_NESTING.exceeded()) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ItemFileError(path, line, None, f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    check_values(path, data, node=node)
    return data, node


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_expansion(path: Path, root: yaml.Node) -> None:
    """Refuse a composed YAML document that expands past `YAML_VALUES` values or `ITEM_NESTING`
    levels once its aliases are followed, or whose alias refers to its own anchor.

    An alias is the very node it names, so the node graph is a DAG (or has a cycle); each node's
    expanded size and depth are computed once, children first, in time linear in the number of
    distinct nodes, however large the expansion.
    """
    limit, max_depth = YAML_VALUES.value, ITEM_NESTING.value
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes on the path from the root to the current one
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0) if kids or \
                not isinstance(node, yaml.ScalarNode) else 0
            open_nodes.discard(key)
            line = node.start_mark.line + 1
            if size[key] > limit:
                raise ItemFileError(path, line, None, "with its aliases followed, the document expands to "
                                    + YAML_VALUES.exceeded(f"{size[key]:,} values"))
            if depth[key] > max_depth:
                raise ItemFileError(path, line, None, f"values nest {depth[key]:,} levels deep, more than "
                                    f"{ITEM_NESTING.phrase}")
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise ItemFileError(path, node.start_mark.line + 1, None, "an alias refers to the value that contains "
                                "it (a recursive structure)")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


def check_values(path: Path, data: Any, node: yaml.Node | None = None, line: int | None = None) -> None:
    """Nesting depth, text length and finiteness of every value (iteratively: no recursion on
    hostile input). Shared values (YAML aliases) are checked once."""
    max_depth, max_chars = ITEM_NESTING.value, ITEM_TEXT_CHARS.value
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if len(loc) > max_depth:
            raise _located(path, loc, node, line, "values nest " + ITEM_NESTING.exceeded(), field=False)
        if isinstance(value, str):
            if len(value) > max_chars:
                found = f"{len(value):,} characters"
                raise _located(path, loc, node, line, "text of " + ITEM_TEXT_CHARS.exceeded(found))
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _located(path, loc, node, line, f"the non-finite number {value} is not accepted")
        elif isinstance(value, dict | list):
            if id(value) in seen:
                continue
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((v, (*loc, k)) for k, v in items)


def _located(path: Path, loc: tuple[Any, ...], node: yaml.Node | None, line: int | None, problem: str,
             field: bool = True) -> ItemFileError:
    at = line if line is not None else yaml_line(node, loc) if node is not None else None
    return ItemFileError(path, at, (loc_to_field(loc) or None) if field else None, problem)


def iter_jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) for each non-blank line, streamed, with this module's limits."""
    import json

    open_checked(path, ITEM_JSONL_BYTES)
    max_line, max_records, max_depth = ITEM_RECORD_BYTES.value, ITEM_RECORDS.value, ITEM_NESTING.value
    count = 0
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with fh:
        n = 0
        while True:
            raw = fh.readline(max_line + 2)
            if not raw:
                break
            n += 1
            if n == 1:
                raw = raw.removeprefix(_BOM)
            if len(raw) > max_line + 1 or (len(raw) > max_line and not raw.endswith(b"\n")):
                raise ItemFileError(path, n, None, f"the record is longer than {ITEM_RECORD_BYTES.phrase}")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ItemFileError(path, n, None, f"not UTF-8 text ({exc.reason})") from None
            if not line.strip():
                continue
            count += 1
            if count > max_records:
                raise ItemFileError(path, n, None, ITEM_RECORDS.exceeded())
            try:
                obj = load_json(raw, max_depth, finite=True)
            except json.JSONDecodeError as exc:
                raise ItemFileError(path, n, None, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
            except JsonLimitError as exc:
                problem = exc.problem
                if problem.startswith("values nest "):
                    problem += f", more than {ITEM_NESTING.phrase}"
                raise ItemFileError(path, n, None, problem) from None
            check_values(path, obj, line=n)
            yield n, obj
