"""Rubrics as data: the scoring units a grader scores, their scales, and the scopes they form.

Every rubric mathlens grades with becomes a list of `Unit`s. A unit has an id (and optionally a
short code), a name, the instruction a grader reads, and a scale:

- `Ordinal`: a few labelled values (the tutoring rubric's items: "no" 0, "yes" 1; "negative" -1 ...),
  listed from the lowest to the highest, with a `direction` saying whether the item asks about
  something good (`presence`) or about a failure (`absence`, whose "no" carries the top value);
- `Points`: a number of points from 0 to `max` (a calculus criterion: its weight times the
  question's points, so the same criterion has another maximum on another question).

Units are grouped into `Scope`s for agreement: a scope pools its units' ratings (`pool`, the
tutoring dimensions) or compares the sum of them (`total`, the calculus question total).

A `Target` is one record to judge with the units it is judged on. Scales parse what a person
wrote in a worksheet (`parse`) and check what a judge replied (`problem`), each in its own terms.

    >>> s = Ordinal(options=(ScaleOption(value=0, label="no", meaning="m"),
    ...                      ScaleOption(value=1, label="yes", meaning="m")), direction="presence")
    >>> s.parse("yes", "Q9", "sheet.csv:2"), s.parse(" 0 ", "Q9", "sheet.csv:3"), s.allowed
    (1, 0, '0=no | 1=yes')
    >>> Points(max=3).parse("2.5", "method", "sheet.csv:4")
    2.5
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UnknownNameError, UserError
from mathlens.runs.documents import RecordRef

#: slack allowed above a points maximum (weights times points are not exact in binary)
EPSILON = 1e-9


class ScaleOption(BaseModel):
    """One allowed answer of an ordinal scale: its numeric value, the label a grader writes, and
    what it means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: int
    label: str = Field(pattern=r"^[a-z_]+$")
    meaning: str


@dataclass(frozen=True)
class Ordinal:
    """Labelled values, lowest first. Scores are "higher is better" whatever the direction."""

    options: tuple[ScaleOption, ...]
    direction: Literal["presence", "absence"] = "presence"

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(o.value for o in self.options)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.options)

    @property
    def top(self) -> float:
        return float(self.options[-1].value)

    @property
    def allowed(self) -> str:
        """`"-1=negative | 0=no | 1=yes"`: what a grader may write."""
        return " | ".join(f"{o.value}={o.label}" for o in self.options)

    def value_of(self, label: str) -> int | None:
        return next((o.value for o in self.options if o.label == label), None)

    def label_of(self, value: float) -> str | None:
        return next((o.label for o in self.options if o.value == value), None)

    def problem(self, value: float, unit: str) -> str:
        """Why `value` is not on this scale ("" when it is)."""
        return "" if value in self.values else f"{unit}: {value:g} is not one of {self.allowed}"

    def parse(self, text: str, unit: str, where: str) -> int:
        """A value or a label as a grader wrote it (case and spaces ignored)."""
        text = text.strip()
        value: float | None
        try:
            value = float(text)
        except ValueError:
            value = self.value_of(text.lower())
        if value is None or value not in self.values:
            shown = text if value is not None else repr(text)
            raise UserError(f"{where}: score {shown} for {unit} is not one of {self.allowed}")
        return int(value)


@dataclass(frozen=True)
class Points:
    """A number of points from 0 to `max`."""

    max: float

    @property
    def top(self) -> float:
        return self.max

    def problem(self, value: float, unit: str) -> str:
        if not math.isfinite(value) or value < 0 or value > self.max + EPSILON:
            return f"{unit}: {value:g} points is outside 0..{self.max:g}"
        return ""

    def parse(self, text: str, unit: str, where: str) -> float:
        """A number of points as a grader wrote it, within 0..max."""
        try:
            value = float(text.strip())
        except ValueError:
            raise UserError(f"{where}: points {text.strip()!r} for {unit} is not a number") from None
        if not math.isfinite(value) or value < 0 or value > self.max + EPSILON:
            raise UserError(f"{where}: {value:g} points is outside 0..{self.max:g}")
        return value


Scale = Ordinal | Points


@dataclass(frozen=True)
class Unit:
    """One thing a grader scores: a calculus criterion on a question, or a tutoring rubric item."""

    id: str
    name: str
    #: what the grader reads about this unit
    instruction: str
    scale: Scale
    #: another name a grader may use for it (a tutoring item's code, `SBS` for Q9)
    code: str | None = None


@dataclass(frozen=True)
class Scope:
    """Units compared together in agreement: pooled (`pool`, a unit is a response x unit) or summed
    (`total`, a unit is a response scored on all of them)."""

    name: str
    units: tuple[str, ...]
    combine: Literal["pool", "total"] = "pool"


@dataclass(frozen=True)
class Target:
    """One record to judge, with the units it is judged on (in rubric order)."""

    record: RecordRef
    units: tuple[Unit, ...]
    #: the most the record can earn (for calculus the question's points); the units' maxima summed if None
    points: float | None = None

    @property
    def max_total(self) -> float:
        return self.points if self.points is not None else sum(u.scale.top for u in self.units)

    def unit(self, name: str, noun: str = "unit") -> Unit:
        """The unit with id or code `name`; `UnknownNameError` ("unknown <noun> ...") otherwise."""
        return find_unit(self.units, name, noun)


def find_unit(units: Sequence[Unit], name: str, noun: str = "unit") -> Unit:
    """The unit with id or code `name` among `units`."""
    for u in units:
        if name in (u.id, u.code):
            return u
    raise UnknownNameError(noun, name, [u.id for u in units])
