"""The 19-item learner-model rubric as versioned data (`data/rubric_v<N>.yaml`).

Each item belongs to one dimension (adaptivity Q1-Q9, correctness Q10-Q12, quality Q13-Q19), has a
scale of labelled values, and a direction: `presence` items ask about something good, `absence`
items ask whether a failure occurs, and their "no" answer carries the value 1. Scores are therefore
always "higher is better", and a dimension's percentage is the share of its possible points.

For the judging core (`mathlens.analyze.judging`) each item is a scoring unit on an `Ordinal`
scale (`RubricItem.unit`), and each dimension is a scope that pools its items (`Rubric.scopes`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mathlens.analyze.judging.units import Ordinal, ScaleOption, Scope, Unit
from mathlens.errors import UnknownNameError, UserError

Dimension = Literal["adaptivity", "correctness", "quality"]
DIMENSIONS: tuple[Dimension, ...] = ("adaptivity", "correctness", "quality")

__all__ = ["DIMENSIONS", "Dimension", "Rubric", "RubricItem", "ScaleOption", "load_rubric"]


class RubricItem(BaseModel):
    """One rubric question with its scale and scoring direction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^Q\d+$")
    code: str
    dimension: Dimension
    aspect: Literal["cognitive", "motivational", "complexity"] | None = None
    name: str
    question: str
    criterion: str
    direction: Literal["presence", "absence"]
    scale: tuple[ScaleOption, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _check_scale(self) -> RubricItem:
        values = [o.value for o in self.scale]
        labels = [o.label for o in self.scale]
        if len(set(values)) != len(values) or len(set(labels)) != len(labels):
            raise ValueError(f"{self.id}: scale values and labels must be distinct")
        if values != sorted(values):
            raise ValueError(f"{self.id}: list the scale from the lowest value to the highest")
        if self.direction == "absence" and self.scale[-1].label != "no":
            raise ValueError(f"{self.id}: an absence item must give its top value to the answer 'no'")
        return self

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(o.value for o in self.scale)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.scale)

    @property
    def max_value(self) -> int:
        return self.scale[-1].value

    @property
    def min_value(self) -> int:
        return self.scale[0].value

    def value_of(self, label: str) -> int:
        """The score of an answer label; `UserError` for a label outside the scale."""
        for o in self.scale:
            if o.label == label:
                return o.value
        raise UserError(f"{self.id}: {label!r} is not one of {', '.join(self.labels)}")

    def label_of(self, value: int) -> str:
        """The label of a score value; `UserError` for a value outside the scale."""
        for o in self.scale:
            if o.value == value:
                return o.label
        raise UserError(f"{self.id}: {value} is not one of {', '.join(map(str, self.values))}")

    def satisfied(self, value: float) -> bool:
        """Whether a score meets the criterion (the seed's Table 2 counts these): value >= 1."""
        return value >= 1

    @property
    def unit(self) -> Unit:
        """The item as a scoring unit (id, code, its question and criterion, its ordinal scale)."""
        return Unit(id=self.id, name=self.name, instruction=f"{self.question}\nCriterion: {self.criterion}",
                    scale=Ordinal(options=self.scale, direction=self.direction), code=self.code)


class Rubric(BaseModel):
    """A versioned list of items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int
    source: str
    items: tuple[RubricItem, ...]

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        ids = [i.id for i in self.items]
        if len(set(ids)) != len(ids):
            raise ValueError("rubric item ids repeat")
        return self

    @property
    def name(self) -> str:
        return f"v{self.version}"

    def item(self, item_id: str) -> RubricItem:
        """Look an item up by id (`Q7`) or code (`Exam`)."""
        for i in self.items:
            if item_id in (i.id, i.code):
                return i
        raise UnknownNameError("rubric item", item_id, [i.id for i in self.items])

    def by_dimension(self, dimension: str) -> tuple[RubricItem, ...]:
        return tuple(i for i in self.items if i.dimension == dimension)

    def select(self, ids: list[str] | None) -> tuple[RubricItem, ...]:
        """The items named in `ids` (ids or codes) in rubric order; all of them for None/empty."""
        if not ids:
            return self.items
        wanted = {self.item(i).id for i in ids}
        return tuple(i for i in self.items if i.id in wanted)

    def units(self, ids: list[str] | None = None) -> tuple[Unit, ...]:
        """The items (`select`ed by ids or codes) as scoring units."""
        return tuple(i.unit for i in self.select(ids))

    def scopes(self) -> tuple[Scope, ...]:
        """The dimensions, each pooling its items (agreement on a dimension is over response x item)."""
        return tuple(Scope(name=d, units=tuple(i.id for i in self.by_dimension(d))) for d in DIMENSIONS)


@cache
def load_rubric(version: str = "v1") -> Rubric:
    """The shipped rubric by version name (`v1`).

    >>> r = load_rubric(); (len(r.items), r.item("Q12").values, r.item("Q2").values)
    (19, (0, 1, 2), (-1, 0, 1))
    """
    folder = resources.files("mathlens.analyze.adaptivity") / "data"
    known = sorted(p.name[len("rubric_"):-len(".yaml")] for p in folder.iterdir()
                   if p.name.startswith("rubric_") and p.name.endswith(".yaml"))
    if version not in known:
        raise UnknownNameError("rubric version", version, known)
    data = yaml.safe_load((folder / f"rubric_{version}.yaml").read_text(encoding="utf-8"))
    return Rubric.model_validate(data)
