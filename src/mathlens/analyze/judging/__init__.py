"""One judging core for every rubric mathlens grades with (the calculus points rubric, the 19-item
tutoring rubric):

- `units`: a rubric as data, a list of scoring `Unit`s with an `Ordinal` or `Points` scale,
  grouped into `Scope`s; a `Target` is one record with the units it is judged on;
- `request`: asking a judge model (`judge`, `judge_jobs`): reply schemas per scale, validation,
  seeds per judge run, and the `Prompt` hook through which each rubric writes its context;
- `entries`: the one entry shape, a `Judgement` of one record by one grader with a `UnitScore`
  per unit;
- `worksheet`: CSV worksheets for people, written and read back with shared validation;
- `agreement`: agreement between graders and of a judge with itself, statistics by scale.

What stays with each rubric: its data file and how it becomes units (`grading.rubric`,
`adaptivity.rubric`), its prompt, its documents and its result tables.
"""

from mathlens.analyze.judging.entries import Evidence, Judgement, UnitScore, rater_name, settle
from mathlens.analyze.judging.units import Ordinal, Points, Scale, ScaleOption, Scope, Target, Unit, find_unit

__all__ = [
    "Evidence",
    "Judgement",
    "Ordinal",
    "Points",
    "Scale",
    "ScaleOption",
    "Scope",
    "Target",
    "Unit",
    "UnitScore",
    "find_unit",
    "rater_name",
    "settle",
]
