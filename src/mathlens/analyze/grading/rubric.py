"""Rubrics as versioned data: criteria with weights, partial-credit bands and rules.

The built-in rubric is the calculus seed's (`rubrics/calculus_v1.yaml`); a user supplies their
own YAML file with the same fields. A criterion's maximum for a question is its weight times the
question's points (the rubric's `default_points` when the question has none), so a 10-point
question splits 3 / 4 / 1 / 1 / 1 as in the seed's worked example.

For the judging core (`mathlens.analyze.judging`) the criteria of a question are its scoring
units, each on a `Points` scale up to that maximum (`units`), and the question total is the one
scope compared in agreement (`scopes`: `overall`).

    >>> r = builtin_rubric("calculus")
    >>> [round(r.max_points(c.id, 10), 6) for c in r.criteria]
    [3.0, 4.0, 1.0, 1.0, 1.0]
    >>> [(u.id, round(u.scale.top, 6)) for u in r.units(20)][:2]
    [('method', 6.0), ('execution', 8.0)]
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mathlens.analyze.judging.units import Points, Scope, Unit
from mathlens.datafiles import load_model_file
from mathlens.errors import UnknownNameError
from mathlens.rounding import percent


class Criterion(BaseModel):
    """One rubric criterion; `weight` is its share of a question's points."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    weight: float = Field(gt=0, le=1)
    description: str
    #: mathlens' own check that also reads this criterion: `final_answer` (the answer checker: its
    #: decisive verdict supplies the points) or `steps` (the flow analysis's step checks: full
    #: points despite an invalid step are marked as a disagreement); None: the judge alone
    checked_by: Literal["final_answer", "steps"] | None = None


class CreditBand(BaseModel):
    """A partial-credit band: the share of the question's points for a kind of response."""

    model_config = ConfigDict(extra="forbid")

    when: str
    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    note: str | None = None


class Rubric(BaseModel):
    """A per-question grading rubric."""

    model_config = ConfigDict(extra="forbid")

    id: str
    version: int = 1
    name: str
    source: str | None = None
    default_points: float = Field(10, gt=0)
    criteria: list[Criterion] = Field(min_length=1)
    partial_credit: list[CreditBand] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Rubric:
        total = sum(c.weight for c in self.criteria)
        if abs(total - 1) > 1e-6:
            raise ValueError(f"criterion weights add up to {total:g}, not 1")
        ids = [c.id for c in self.criteria]
        if len(ids) != len(set(ids)):
            raise ValueError(f"criterion ids repeat: {ids}")
        for kind in ("final_answer", "steps"):
            checked = [c.id for c in self.criteria if c.checked_by == kind]
            if len(checked) > 1:
                raise ValueError(f"more than one criterion is checked_by {kind}: {checked}")
        return self

    def checked(self, kind: Literal["final_answer", "steps"]) -> Criterion | None:
        """The criterion that mathlens' `kind` check also reads (None when the rubric has none)."""
        return next((c for c in self.criteria if c.checked_by == kind), None)

    @property
    def label(self) -> str:
        """`id@version`, as recorded with every grade."""
        return f"{self.id}@{self.version}"

    def criterion(self, cid: str) -> Criterion:
        """The criterion with id `cid`."""
        for c in self.criteria:
            if c.id == cid:
                return c
        raise UnknownNameError("rubric criterion", cid, [c.id for c in self.criteria])

    def question_points(self, points: float | None) -> float:
        """The points a question is graded out of."""
        return points if points is not None and points > 0 else self.default_points

    def max_points(self, cid: str, question_points: float | None) -> float:
        """The most a response can earn on criterion `cid` for a question worth `question_points`."""
        return self.criterion(cid).weight * self.question_points(question_points)

    def units(self, question_points: float | None) -> tuple[Unit, ...]:
        """The criteria as scoring units of a question worth `question_points`."""
        total = self.question_points(question_points)
        return tuple(Unit(id=c.id, name=c.name, instruction=c.description, scale=Points(max=c.weight * total))
                     for c in self.criteria)

    def scopes(self) -> tuple[Scope, ...]:
        """What agreement compares besides each criterion: the question total (`overall`)."""
        return (Scope(name="overall", units=tuple(c.id for c in self.criteria), combine="total"),)


def rubric_dir() -> Path:
    """Where the built-in rubric files live."""
    return Path(str(resources.files("mathlens.analyze.grading") / "rubrics"))


def builtin_rubrics() -> dict[str, Path]:
    """Built-in rubric id -> file (the newest version of each)."""
    import yaml  # here, not at the top: reading stored grades (`mathlens show`) needs no YAML parser

    found: dict[str, tuple[int, Path]] = {}
    for path in sorted(rubric_dir().glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        rid, version = str(data["id"]), int(data.get("version", 1))
        if rid not in found or version > found[rid][0]:
            found[rid] = (version, path)
    return {rid: path for rid, (_, path) in found.items()}


def load_rubric(path: Path | str) -> Rubric:
    """Load a rubric YAML file; a bad file raises `UserError` naming the problem."""
    return load_model_file(path, Rubric, "rubric")


def builtin_rubric(name: str = "calculus") -> Rubric:
    """A built-in rubric by id."""
    files = builtin_rubrics()
    if name not in files:
        raise UnknownNameError("rubric", name, files)
    return load_rubric(files[name])


def resolve_rubric(spec: str | None) -> Rubric:
    """`None` -> the calculus rubric; a built-in id; or a path to a YAML file."""
    if spec is None:
        return builtin_rubric("calculus")
    if spec in builtin_rubrics():
        return builtin_rubric(spec)
    return load_rubric(spec)


def rubric_text(rubric: Rubric, question_points: float | None) -> str:
    """The rubric as the judge reads it, with each criterion's maximum for this question."""
    total = rubric.question_points(question_points)
    lines = [f"Rubric: {rubric.name} (the question is worth {total:g} points).", "Criteria:"]
    for c in rubric.criteria:
        lines.append(f"- {c.id} ({c.name}), up to {c.weight * total:g} points: {c.description}")
    if rubric.partial_credit:
        lines.append("Partial credit for the question as a whole:")
        for band in rubric.partial_credit:
            share = percent(band.low) if band.low == band.high else f"{percent(band.low)}-{percent(band.high)}"
            lines.append(f"- {band.when} -> {share} of the points" + (f" ({band.note})" if band.note else ""))
    if rubric.rules:
        lines.append("Rules:")
        lines.extend(f"- {rule}" for rule in rubric.rules)
    return "\n".join(lines)
