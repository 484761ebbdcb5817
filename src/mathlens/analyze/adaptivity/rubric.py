"""The 19-item learner-model rubric as versioned data (`data/rubric_v<N>.yaml`).

Each item belongs to one dimension (adaptivity Q1-Q9, correctness Q10-Q12, quality Q13-Q19), has a
scale of labelled values, and a direction: `presence` items ask about something good, `absence`
items ask whether a failure occurs, and their "no" answer carries the value 1. Scores are therefore
always "higher is better", and a dimension's percentage is the share of its possible points.

Q11 is worded as a failure ("does the explanation fail to support the answer?"), where the study
prints a positive question with the scale "1 = No, 0 = Yes"; see `data/rubric_v1.yaml` and the
section "Differences from the study" of docs/adaptivity.md for why.

An adaptivity item may also say which responses are *applicable cases* for it (`applies`, an
`Applicability`): the study reports how often a model met a criterion "in applicable cases", that is
over the responses where the tutor had been told what the criterion asks it to adapt to, and, for
the motivational items, where the learner had something to be helped with. Items without it apply
to every response.

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
from mathlens.solve.tutoring import CONDITIONS, Attitude, LearnerProfile, SelfEfficacy

Dimension = Literal["adaptivity", "correctness", "quality"]
DIMENSIONS: tuple[Dimension, ...] = ("adaptivity", "correctness", "quality")

__all__ = ["DIMENSIONS", "Applicability", "Dimension", "Rubric", "RubricItem", "ScaleOption", "load_rubric"]


class Applicability(BaseModel):
    """Which responses count as applicable cases of an item.

    `needs` names the learner information the tutor must have been given for the criterion to make
    sense: `nothing` (every response), `learner` (the learner's self-description was in the user
    turn: conditions 2 and 4) or `grade` (the learner's grade was stated, in the self-description or
    in the objectives system prompt: conditions 2, 3 and 4). `attitude` and `self_efficacy`, when
    set, further restrict the item to learners who stated one of the listed levels (a learner who
    likes math leaves no attitude to improve).

    >>> a = Applicability(needs="learner", self_efficacy=("low", "moderate"))
    >>> p = LearnerProfile(id="p", grade=4, performance="low", self_efficacy="low")
    >>> (a.applies(p, 1), a.applies(p, 2), a.applies(p.model_copy(update={"self_efficacy": "high"}), 2))
    (False, True, False)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    needs: Literal["nothing", "learner", "grade"] = "nothing"
    attitude: tuple[Attitude, ...] | None = None
    self_efficacy: tuple[SelfEfficacy, ...] | None = None

    def told(self, condition: int) -> bool:
        """Whether the tutor was given the information `needs` names under a context condition."""
        c = CONDITIONS[condition]
        if self.needs == "learner":
            return c.learner_in_user
        if self.needs == "grade":
            return c.learner_in_user or c.objectives_in_system
        return True

    def concerns(self, profile: LearnerProfile) -> bool:
        """Whether the learner stated a level the item asks the response to act on."""
        if self.attitude is not None and profile.attitude not in self.attitude:
            return False
        return self.self_efficacy is None or profile.self_efficacy in self.self_efficacy

    def applies(self, profile: LearnerProfile, condition: int) -> bool:
        """Whether a response to `profile` under `condition` is an applicable case."""
        return self.told(condition) and self.concerns(profile)


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
    #: which responses are applicable cases of the item (None: every response)
    applies: Applicability | None = None

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

    def applicable(self, profile: LearnerProfile, condition: int) -> bool:
        """Whether a response to `profile` under context condition `condition` is an applicable case."""
        return self.applies is None or self.applies.applies(profile, condition)

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
