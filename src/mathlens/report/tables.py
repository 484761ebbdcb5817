"""Tables as values: what a section shows, what its CSV download holds.

A `Table` keeps raw cell values; the template formats them for display and `to_csv` writes them
unformatted, so a download holds the numbers, not their rounded display. Cells that a spreadsheet
would read as a formula are prefixed with an apostrophe (model output is untrusted).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from mathlens.rounding import fixed
from mathlens.stats.bootstrap import CI

Cell = str | int | float | bool | None

_FORMULA_START = ("=", "+", "@", "\t", "\r", "-")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
#: Above this size the CSV is not embedded as a data: URL (the script builds it on click instead).
MAX_DATA_URL_CHARS = 200_000


@dataclass(frozen=True)
class Table:
    """A titled table. `id` is unique within the page (it names the CSV file too)."""

    id: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    #: column index -> number of decimals shown
    decimals: Mapping[int, int] = field(default_factory=dict)
    #: per row, an in-page anchor the first cell links to (None: no link)
    row_links: tuple[str | None, ...] = ()
    #: what the CSV holds when it differs from the display (e.g. mean, sd and CI as separate numbers)
    export_columns: tuple[str, ...] = ()
    export_rows: tuple[tuple[Cell, ...], ...] = ()

    def link(self, row: int) -> str | None:
        """The in-page anchor of row `row`'s first cell, if any."""
        return self.row_links[row] if row < len(self.row_links) else None

    @property
    def filename(self) -> str:
        """Download name of the CSV."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", self.id).strip("-") + ".csv"

    def to_csv(self) -> str:
        """The table as CSV text (header row first)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.export_columns or self.columns)
        for row in self.export_rows if self.export_columns else self.rows:
            writer.writerow([csv_cell(c) for c in row])
        return buf.getvalue()

    def data_url(self) -> str | None:
        """A `data:text/csv` URL of the table (percent-encoded), or None when the table is too large."""
        text = self.to_csv()
        if len(text) > MAX_DATA_URL_CHARS:
            return None
        return "data:text/csv;charset=utf-8," + quote(text, safe="")

    def display(self, col: int, value: Cell) -> str:
        """How a cell is shown on the page."""
        return display_cell(value, self.decimals.get(col))


def percent(share: float | None) -> float | None:
    """A share (0 to 1) in percent, for display: a change of unit, never a new figure.

    >>> percent(0.125)
    12.5
    """
    return None if share is None else 100 * share


def percent_ci(ci: CI | None) -> tuple[Cell, Cell, Cell]:
    """A share's estimate and interval in percent (three empty cells without an estimate)."""
    if ci is None or ci.estimate is None:
        return None, None, None
    return percent(ci.estimate), percent(ci.low), percent(ci.high)


def csv_cell(value: Cell) -> str:
    """A CSV cell; text that a spreadsheet would evaluate as a formula is prefixed with `'`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    if value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def display_cell(value: Cell, decimals: int | None = None) -> str:
    """A cell as shown: floats rounded half up (3 decimals unless told), None as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fixed(value, 3 if decimals is None else decimals)
    return str(value)


def table_from_dicts(id: str, title: str, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None,
                     caption: str = "") -> Table | None:
    """A table over the scalar fields of `rows` (the union of their keys, first-seen order), or None when empty."""
    rows = list(rows)
    if not rows:
        return None
    cols: list[str] = list(columns) if columns else []
    if not columns:
        for r in rows:
            for k, v in r.items():
                if (v is None or isinstance(v, str | int | float | bool)) and k not in cols:
                    cols.append(k)
    body = tuple(tuple(_scalar(r.get(c)) for c in cols) for r in rows)
    return Table(id=id, title=title, columns=tuple(cols), rows=body, caption=caption)


def _scalar(value: Any) -> Cell:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(str(v) for v in value)
    return str(value)
