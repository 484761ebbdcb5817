"""Streaming JSONL and CSV readers with the import limits (see `common`).

Both yield (line number, object) one row at a time; a line that is too long, not UTF-8, not JSON
or not an object is a `SourceError` naming the file and line. A CSV row's line number is the line
it starts on (a quoted field may span lines).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mathlens.errors import UserError
from mathlens.runs.importing.common import MAX_LINE_BYTES, MAX_ROWS, MAX_TEXT_CHARS, SourceError

_BOM = b"\xef\xbb\xbf"


def _open(path: Path) -> io.BufferedReader:
    try:
        return path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file."""
    count = 0
    with _open(path) as fh:
        n = 0
        while raw := fh.readline(MAX_LINE_BYTES + 2):
            n += 1
            if n == 1:
                raw = raw.removeprefix(_BOM)
            if len(raw) > MAX_LINE_BYTES + 1 or (len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n")):
                raise SourceError(path, f"line {n}", None, f"the line is longer than the limit of "
                                                           f"{MAX_LINE_BYTES:,} bytes")
            if not raw.strip():
                continue
            count += 1
            if count > MAX_ROWS:
                raise SourceError(path, f"line {n}", None, f"more than the limit of {MAX_ROWS:,} rows")
            try:
                obj = json.loads(raw)
            except UnicodeDecodeError as exc:
                raise SourceError(path, f"line {n}", None, f"not UTF-8 text ({exc.reason})") from None
            except json.JSONDecodeError as exc:
                cut = "" if raw.endswith(b"\n") else " (the file ends inside this line: was it cut off?)"
                raise SourceError(path, f"line {n}", None, f"not valid JSON ({exc.msg}, column {exc.colno})"
                                                           f"{cut}") from None
            except RecursionError:
                raise SourceError(path, f"line {n}", None, "values nest too deeply") from None
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
    # a CSV field may hold a whole response; the csv module's own cap (128 KiB) is too small for that
    csv.field_size_limit(max(csv.field_size_limit(), MAX_TEXT_CHARS * 4))
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
                if count > MAX_ROWS:
                    raise SourceError(path, f"line {line}", None, f"more than the limit of {MAX_ROWS:,} rows")
                if len(values) != len(names):
                    raise SourceError(path, f"line {line}", None, f"{len(values)} values for {len(names)} columns")
                yield line, dict(zip(names, values, strict=True))
        except UnicodeDecodeError as exc:
            raise SourceError(path, f"line {reader.line_num + 1}", None, f"not UTF-8 text ({exc.reason})") from None
        except csv.Error as exc:
            raise SourceError(path, f"line {reader.line_num}", None, f"not valid CSV ({exc})") from None

