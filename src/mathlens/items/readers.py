"""Reading user data files safely: YAML and JSONL with size, nesting and duplicate-key checks.

Limits (each breach is an `ItemFileError` naming the file, and the line and field where known):

* a YAML file holds at most `MAX_YAML_BYTES`; a JSONL file at most `MAX_JSONL_BYTES`, one record
  (line) at most `MAX_RECORD_BYTES`, and at most `MAX_RECORDS` records;
* any text value holds at most `MAX_FIELD_CHARS` characters;
* values nest at most `MAX_NESTING` levels deep;
* a YAML mapping may not repeat a key (the message names both lines);
* a UTF-8 byte-order mark at the start of a file is accepted and ignored.

JSONL is read one line at a time, so a large file never sits in memory as one string.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from mathlens.errors import UserError
from mathlens.items.errors import ItemFileError, loc_to_field, yaml_line

MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_JSONL_BYTES = 256 * 1024 * 1024
MAX_RECORD_BYTES = 1024 * 1024
MAX_RECORDS = 500_000
MAX_FIELD_CHARS = 100_000
MAX_NESTING = 32

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


def open_checked(path: Path, limit: int, kind: str = "item") -> int:
    """The size of `path` after checking it is a readable file within `limit` bytes."""
    try:
        if path.is_dir():
            raise ItemFileError(path, None, None, f"is a directory; name a {kind} file")
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"{path}: no such {kind} file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if size > limit:
        raise ItemFileError(path, None, None, f"the file is {size:,} bytes, more than the limit of {limit:,}")
    return size


def read_text(path: Path, limit: int = MAX_YAML_BYTES, kind: str = "item") -> str:
    """The whole text of a small file (UTF-8, an optional BOM dropped), within `limit` bytes."""
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
        data = loader.construct_document(node) if node is not None else None
    except _DuplicateKey as dup:
        raise ItemFileError(path, dup.second, str(dup.key),
                            f"key {dup.key!r} appears twice in one mapping (lines {dup.first} and {dup.second})"
                            ) from None
    except RecursionError:
        raise ItemFileError(path, None, None, f"values nest more than {MAX_NESTING} levels deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ItemFileError(path, line, None, f"not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    check_values(path, data, node=node)
    return data, node


def check_values(path: Path, data: Any, node: yaml.Node | None = None, line: int | None = None) -> None:
    """Nesting depth and text length of every value (iteratively: no recursion on hostile input)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if len(loc) > MAX_NESTING:
            raise _located(path, loc, node, line, f"values nest more than {MAX_NESTING} levels deep", field=False)
        if isinstance(value, str):
            if len(value) > MAX_FIELD_CHARS:
                raise _located(path, loc, node, line, f"text of {len(value):,} characters is longer than the "
                                                       f"limit of {MAX_FIELD_CHARS:,}")
        elif isinstance(value, dict):
            stack.extend((v, (*loc, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*loc, i)) for i, v in enumerate(value))


def _located(path: Path, loc: tuple[Any, ...], node: yaml.Node | None, line: int | None, problem: str,
             field: bool = True) -> ItemFileError:
    at = line if line is not None else yaml_line(node, loc) if node is not None else None
    return ItemFileError(path, at, (loc_to_field(loc) or None) if field else None, problem)


def iter_jsonl_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) for each non-blank line, streamed, with this module's limits."""
    import json

    open_checked(path, MAX_JSONL_BYTES)
    count = 0
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with fh:
        n = 0
        while True:
            raw = fh.readline(MAX_RECORD_BYTES + 2)
            if not raw:
                break
            n += 1
            if n == 1:
                raw = raw.removeprefix(_BOM)
            if len(raw) > MAX_RECORD_BYTES + 1 or (len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n")):
                raise ItemFileError(path, n, None, f"the record is longer than the limit of {MAX_RECORD_BYTES:,} bytes")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ItemFileError(path, n, None, f"not UTF-8 text ({exc.reason})") from None
            if not line.strip():
                continue
            count += 1
            if count > MAX_RECORDS:
                raise ItemFileError(path, n, None, f"more than the limit of {MAX_RECORDS:,} records")
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ItemFileError(path, n, None, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
            except RecursionError:
                raise ItemFileError(path, n, None, f"values nest more than {MAX_NESTING} levels deep") from None
            check_values(path, obj, line=n)
            yield n, obj
