"""A publication table as a value: titled columns, rows of typed cells, optional row groups.

`PublicationTable` is what every builder returns and what every renderer reads. Cells are raw
values: text, numbers, `None` (no value), an `Estimate` (a value with its spread and interval) or
a `Ratio` (points out of a total). Renderers decide how each looks: Markdown and LaTeX show an
estimate as ``0.726 ± 0.051`` and a ratio as ``44/70``, CSV writes every part in its own column.

Row groups: the first `group_columns` columns label the rows (course and exam in the calculus
study's Table 8, whose rows then list the B/R/C configurations). Every row carries its full labels,
so the CSV can be read row by row; Markdown and LaTeX print a label only where it changes, as
the study lays its tables out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

#: Which part of an estimate a CSV column holds.
Part = Literal["value", "sd", "low", "high", "n"]
PARTS: tuple[Part, ...] = ("value", "sd", "low", "high", "n")


@dataclass(frozen=True)
class Estimate:
    """A value with what is known of its uncertainty (standard deviation, interval, sample size).

    `parts` names the parts the estimate is made of, so that its CSV columns do not depend on
    which happen to be missing (an interval that could not be computed still has its columns);
    None means the parts that are set."""

    value: float | None
    sd: float | None = None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    parts: tuple[Part, ...] | None = None

    def part(self, name: Part) -> float | int | None:
        value: float | int | None = getattr(self, name)
        return value

    @property
    def shape(self) -> tuple[Part, ...]:
        """The parts of this estimate, in `PARTS` order (the value always)."""
        if self.parts is not None:
            return tuple(p for p in PARTS if p == "value" or p in self.parts)
        return tuple(p for p in PARTS if p == "value" or self.part(p) is not None)

    @classmethod
    def interval(cls, value: float | None, low: float | None, high: float | None, n: int | None = None) -> Estimate:
        """A point estimate with its confidence interval (and sample size when given)."""
        return cls(value, low=low, high=high, n=n, parts=("value", "low", "high") + (("n",) if n is not None else ()))

    @classmethod
    def spread(cls, mean: float | None, sd: float | None, low: float | None = None, high: float | None = None,
               n: int | None = None) -> Estimate:
        """A mean with its standard deviation, and its interval and sample size when known."""
        return cls(mean, sd=sd, low=low, high=high, n=n, parts=("value", "sd", "low", "high", "n"))


@dataclass(frozen=True)
class Ratio:
    """Points earned out of a total (``44/70`` in the calculus study's Table 6)."""

    score: float
    total: float


Cell = str | int | float | Estimate | Ratio | None


@dataclass(frozen=True)
class Column:
    """One column: its header, and how its numbers are shown.

    `decimals` None marks a text column (left-aligned, shown as it is); a number marks a numeric
    column (right-aligned, floats rounded to that many places). `p_value` shows values below 0.001
    as ``< 0.001``."""

    header: str
    decimals: int | None = None
    p_value: bool = False

    @property
    def numeric(self) -> bool:
        return self.decimals is not None or self.p_value


@dataclass(frozen=True)
class RowGroup:
    """Consecutive rows sharing the same labels in the group columns."""

    labels: tuple[Cell, ...]
    rows: tuple[tuple[Cell, ...], ...]


@dataclass(frozen=True)
class PublicationTable:
    """A table ready to export. `id` names its files (``<id>.csv``, ``<id>.md``, ``<id>.tex``) and
    its LaTeX label; `source` is the analysis document it was read from."""

    id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    source: str = ""
    group_columns: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.group_columns <= len(self.columns):
            raise ValueError(f"{self.id}: group_columns {self.group_columns} outside 0..{len(self.columns)}")
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"{self.id}: row {i} has {len(row)} cells for {len(self.columns)} columns")

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(c.header for c in self.columns)

    def row_groups(self) -> Iterator[RowGroup]:
        """The rows in runs of equal group labels (one group of every row without group columns)."""
        k = self.group_columns
        start = 0
        for i in range(1, len(self.rows) + 1):
            if i == len(self.rows) or self.rows[i][:k] != self.rows[start][:k]:
                yield RowGroup(self.rows[start][:k], self.rows[start:i])
                start = i

    def shown_labels(self) -> Iterator[tuple[int, tuple[Cell, ...]]]:
        """For each row, the depth at which its labels change (0: a new top-level group, k: the
        same group as the row before) and the row with repeated labels blanked, as printed."""
        k = self.group_columns
        prev: tuple[Cell, ...] | None = None
        for row in self.rows:
            depth = k if prev is not None else 0
            if prev is not None:
                depth = next((j for j in range(k) if row[j] != prev[j]), k)
            prev = row
            yield depth, tuple("" if j < depth else c for j, c in enumerate(row[:k])) + row[k:]
