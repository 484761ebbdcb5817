"""The limits every reader of user files works under, one table, each raisable by name.

Item files, data files (rubrics, label sets) and the sources `mathlens import` reads are hostile
input: each reader checks them against these limits and refuses a file that crosses one with a
message naming the file, the limit and how to raise it (`ReaderLimit.exceeded`). A limit is
raised for one command by an environment variable, `MATHLENS_LIMIT_<NAME>=N`:

    MATHLENS_LIMIT_SOURCE_BYTES=1073741824 mathlens import big.eval --out runs/big

The values are read when they are used (so a test or a notebook can set the variable at any
time), or once for a whole file inside `reading()`, which the import wraps around each source (a
per-row check then costs a lookup, not an environment read); a value that is not a whole number
>= 1 is itself an error naming the variable.
docs/limits.md lists the table with what each limit guards against.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from mathlens.errors import UserError

MiB = 1024 * 1024


@dataclass(frozen=True)
class ReaderLimit:
    """One limit: its name (`source_bytes`), default value, unit and what it bounds."""

    name: str
    default: int
    unit: str
    what: str

    @property
    def env(self) -> str:
        """The environment variable that overrides the default."""
        return f"MATHLENS_LIMIT_{self.name.upper()}"

    @property
    def value(self) -> int:
        """The limit in force: the environment variable's value when it is set, else the default."""
        held = _HELD.get()
        if held is not None and self.name in held:
            return held[self.name]
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        return _parse(self.env, raw)

    def exceeded(self, found: str = "") -> str:
        """The end of a message for a crossed limit: what was found, the limit and how to raise it.

        >>> SOURCE_ROWS.exceeded("600,000 rows")  # doctest: +ELLIPSIS
        '600,000 rows, more than the limit of 500,000 rows (raise it with MATHLENS_LIMIT_SOURCE_ROWS=N)'
        """
        head = f"{found}, more than" if found else "more than"
        return f"{head} {self.phrase}"

    @property
    def phrase(self) -> str:
        """'the limit of 32 levels (raise it with MATHLENS_LIMIT_ITEM_NESTING=N)'."""
        return f"the limit of {self.value:,} {self.unit} (raise it with {self.env}=N)"


_CACHE: dict[str, int] = {}
#: the values `reading()` holds for the file being read (None outside it)
_HELD: ContextVar[dict[str, int] | None] = ContextVar("mathlens_reader_limits", default=None)


def _parse(env: str, raw: str) -> int:
    if raw in _CACHE:
        return _CACHE[raw]
    text = raw.strip().replace("_", "")
    if not text.isdigit() or int(text) < 1 or len(text) > 18:
        raise UserError(f"{env}={raw!r}: a limit must be a whole number of at least 1")
    _CACHE[raw] = int(text)
    return _CACHE[raw]


# -- item and data files (items/readers.py) --------------------------------------------------------
ITEM_YAML_BYTES = ReaderLimit("item_yaml_bytes", 4 * MiB, "bytes", "a YAML item or data file")
ITEM_JSONL_BYTES = ReaderLimit("item_jsonl_bytes", 256 * MiB, "bytes", "a JSONL item file")
ITEM_RECORD_BYTES = ReaderLimit("item_record_bytes", 1 * MiB, "bytes", "one line of a JSONL item file")
ITEM_RECORDS = ReaderLimit("item_records", 500_000, "records", "records (lines) of a JSONL item file")
ITEM_TEXT_CHARS = ReaderLimit("item_text_chars", 100_000, "characters", "any text value of an item file")
ITEM_NESTING = ReaderLimit("item_nesting", 32, "levels", "nesting of values in an item file")
YAML_VALUES = ReaderLimit("yaml_values", 1_000_000, "values",
                          "values of a YAML file once its aliases are expanded (an alias bomb expands to billions)")

# -- sources of `mathlens import` (runs/importing/) -------------------------------------------------
SOURCE_BYTES = ReaderLimit("source_bytes", 256 * MiB, "bytes", "an imported source file")
SOURCE_LINE_BYTES = ReaderLimit("source_line_bytes", 8 * MiB, "bytes", "one line of a JSONL or CSV source")
SOURCE_ROWS = ReaderLimit("source_rows", 500_000, "rows", "rows (samples, lines, records) of a source")
SOURCE_TEXT_CHARS = ReaderLimit("source_text_chars", 200_000, "characters",
                                "a question, response or reasoning text of a source")
SOURCE_MESSAGES = ReaderLimit("source_messages", 256, "messages", "messages of one row")
SOURCE_NESTING = ReaderLimit("source_nesting", 200, "levels", "nesting of JSON values in a source")
MEMBER_BYTES = ReaderLimit("member_bytes", 64 * MiB, "bytes", "one member of an Inspect .eval archive, unpacked")
UNPACKED_BYTES = ReaderLimit("unpacked_bytes", 2048 * MiB, "bytes",
                             "all members of an Inspect .eval archive together, unpacked")
ARCHIVE_MEMBERS = ReaderLimit("archive_members", 600_000, "members", "members of an Inspect .eval archive")

#: every limit, by name (docs/limits.md lists them; a test checks that it lists each one)
LIMITS: dict[str, ReaderLimit] = {lim.name: lim for lim in (
    ITEM_YAML_BYTES, ITEM_JSONL_BYTES, ITEM_RECORD_BYTES, ITEM_RECORDS, ITEM_TEXT_CHARS, ITEM_NESTING, YAML_VALUES,
    SOURCE_BYTES, SOURCE_LINE_BYTES, SOURCE_ROWS, SOURCE_TEXT_CHARS, SOURCE_MESSAGES, SOURCE_NESTING,
    MEMBER_BYTES, UNPACKED_BYTES, ARCHIVE_MEMBERS)}


@contextmanager
def reading() -> Iterator[dict[str, int]]:
    """Hold every limit's value for the body (one file's reading): read once, looked up cheaply."""
    if _HELD.get() is not None:  # already inside: keep the outer values
        yield _HELD.get() or {}
        return
    values = {name: limit.value for name, limit in LIMITS.items()}
    token = _HELD.set(values)
    try:
        yield values
    finally:
        _HELD.reset(token)
