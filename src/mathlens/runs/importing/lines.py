"""Streaming JSONL and CSV readers, and whole-file JSON, with the import limits (see `common`).

JSONL and CSV yield (line number, object) one row at a time; a line that is too long, not UTF-8,
not JSON or not an object is a `SourceError` naming the file and line. A CSV row's line number is
the line it starts on (a quoted field may span lines). Every JSON text has its nesting measured
on the bytes before it is parsed (`mathlens.items.jsonread`), so a hostile document never reaches
a parser.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathlens.errors import UserError
from mathlens.items.jsonread import JsonLimitError, load_json
from mathlens.items.limits import SOURCE_LINE_BYTES, SOURCE_NESTING, SOURCE_ROWS
from mathlens.runs.importing.common import SourceError, check_source

_BOM = b"\xef\xbb\xbf"


def _open(path: Path) -> io.BufferedReader:
    try:
        return path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def parse_json(path: Path, where: str | None, raw: bytes) -> Any:
    """A JSON text of a source, nesting checked first; errors name the file and `where`."""
    try:
        return load_json(raw, SOURCE_NESTING.value)
    except UnicodeDecodeError as exc:
        raise SourceError(path, where, None, f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        cut = "" if raw.rstrip().endswith((b"}", b"]")) else " (the text ends early: was it cut off?)"
        at = f"line {exc.lineno}, column {exc.colno}" if where is None else f"column {exc.colno}"
        raise SourceError(path, where, None, f"not valid JSON ({exc.msg}, {at}){cut}") from None
    except JsonLimitError as exc:
        more = f", more than {SOURCE_NESTING.phrase}" if exc.problem.startswith("values nest") else ""
        raise SourceError(path, where, None, exc.problem + more) from None


def read_json_file(path: Path) -> Any:
    """The JSON document of a whole source file (size checked, nesting checked before parsing)."""
    check_source(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    return parse_json(path, None, raw.removeprefix(_BOM))


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file."""
    count = 0
    max_line, max_rows = SOURCE_LINE_BYTES.value, SOURCE_ROWS.value
    with _open(path) as fh:
        n = 0
        while raw := fh.readline(max_line + 2):
            n += 1
            if n == 1:
                raw = raw.removeprefix(_BOM)
            if len(raw) > max_line + 1 or (len(raw) > max_line and not raw.endswith(b"\n")):
                raise SourceError(path, f"line {n}", None, f"the line is longer than {SOURCE_LINE_BYTES.phrase}")
            if not raw.strip():
                continue
            count += 1
            if count > max_rows:
                raise SourceError(path, f"line {n}", None, SOURCE_ROWS.exceeded())
            obj = parse_json(path, f"line {n}", raw)
            if not isinstance(obj, dict):
                raise SourceError(path, f"line {n}", None, f"expected a JSON object, found {type(obj).__name__}")
            yield n, obj


def first_object(path: Path) -> dict[str, Any] | None:
    """The first object of a JSONL file (None when the file has no lines); for format detection."""
    for _, obj in iter_json_lines(path):
        return obj
    return None


def iter_csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: value}) for each row of a CSV file with a header row."""
    # a CSV field may hold a whole response; the csv module's own cap (128 KiB) is too small for that,
    # so a field may be as long as a line may be (the text limits then apply to the fields read)
    csv.field_size_limit(SOURCE_LINE_BYTES.value)
    max_rows = SOURCE_ROWS.value
    with _open(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = csv.reader(text)
        try:
            header = next(reader, None)
            if header is None:
                raise SourceError(path, None, None, "the file is empty (a CSV file needs a header row)")
            names = [h.strip() for h in header]
            dupes = {h for h in names if names.count(h) > 1 and h}
            if dupes:
                raise SourceError(path, "line 1", sorted(dupes)[0], "the header names this column twice")
            count = 0
            start = reader.line_num + 1
            for values in reader:
                line = start
                start = reader.line_num + 1
                if not any(v.strip() for v in values):
                    continue
                count += 1
                if count > max_rows:
                    raise SourceError(path, f"line {line}", None, SOURCE_ROWS.exceeded())
                if len(values) != len(names):
                    raise SourceError(path, f"line {line}", None, f"{len(values)} values for {len(names)} columns")
                yield line, dict(zip(names, values, strict=True))
        except UnicodeDecodeError as exc:
            raise SourceError(path, f"line {reader.line_num + 1}", None, f"not UTF-8 text ({exc.reason})") from None
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise SourceError(path, f"line {reader.line_num}", None, "a field is longer than "
                                  f"{SOURCE_LINE_BYTES.phrase}") from None
            raise SourceError(path, f"line {reader.line_num}", None, f"not valid CSV ({exc})") from None
