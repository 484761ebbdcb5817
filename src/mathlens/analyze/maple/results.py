"""What the MAPLE analysis writes to `RUN/analysis/maple.json` (and what `mathlens maple` prints)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from mathlens.analyze.flow.models import HybridResult
from mathlens.analyze.maple.judge import JudgedStep, Reflection, StepJudgement
from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.quality import QualityFlags
from mathlens.stats.bootstrap import CI

SolutionStatus = Literal["ok", "unjudged", "unverifiable", "error", "degenerate"]


class SolutionMaple(BaseModel):
    """One generated solution: its answer check, reflection, step labels, and the score with its parts.

    `status`: `ok` (scored), `unjudged` (the judge's reply was unusable: no score), `unverifiable`
    (the final answer could not be checked, e.g. no reference), `error` (the run record failed, or
    v/r could not be computed), `degenerate` (the response is empty, an echo of the prompt, a loop
    or in the wrong script: left out, neither checked nor judged, unless the analysis was asked to
    include degenerate responses; `answer_status` is then `degenerate` too). `maple` is set
    exactly when `status == "ok"`.
    """

    key: str
    model: str
    exam_id: str
    question_id: str
    variant: str = "original"
    repeat: int = 0
    level: int | None = None
    subject: str | None = None
    answer_status: str
    predicted: str | None = None
    reference: str | None = None
    truncated: bool = False
    quality: QualityFlags | None = None
    steps: list[str] = Field(default_factory=list)
    reflection: Reflection | None = None
    judgement: StepJudgement | None = None
    hybrid: HybridResult | None = None  # symbolic + step-judge verdicts (--step-judge)
    detected: list[JudgedStep] = Field(default_factory=list, description="labels from judge-free detectors")
    step_labels: list[JudgedStep] = Field(default_factory=list, description="judge and detector labels merged")
    counts: dict[str, int] = Field(default_factory=dict, description="f_l: steps carrying each label")
    e: float | None = None
    v: float | None = None
    r: float | None = None
    v_used: float | None = None
    r_used: float | None = None
    vr_source: str = ""
    v_basis: str = ""
    r_basis: str = ""
    maple: float | None = None
    status: SolutionStatus = "ok"
    error: str = ""


class GroupRow(BaseModel):
    """One row of a results table: a model on one MATH level or subject (or `all`)."""

    model: str
    by: Literal["level", "subject", "all"]
    group: str
    n: int = Field(description="solutions whose answer could be checked")
    n_correct: int
    n_scored: int = Field(description="solutions with a MAPLE score")
    n_unjudged: int
    n_degenerate: int = Field(default=0, description="degenerate responses left out of every figure of the row")
    accuracy: CI
    mean_maple: CI = Field(description="over scored solutions; correct answers score 0")
    mean_maple_incorrect: CI = Field(description="over scored solutions with a wrong answer")
    mean_e: CI
    label_counts: dict[str, int] = Field(default_factory=dict)


class MapleResult(BaseModel):
    """The whole analysis of one run."""

    run_id: str
    labels: LabelSet
    judge: str
    reflector: str
    variant: str
    vr_source: str
    floor: float
    options: dict[str, Any] = Field(default_factory=dict)
    solutions: list[SolutionMaple]
    overall: list[GroupRow]
    by_level: list[GroupRow]
    by_subject: list[GroupRow]
    figure3: list[dict[str, Any]] = Field(default_factory=list, description="accuracy and MAPLE by level")
    figure5: list[dict[str, Any]] = Field(default_factory=list, description="accuracy and MAPLE by subject")
    label_totals: dict[str, int] = Field(default_factory=dict)
    include_degenerate: bool = False
    excluded_degenerate: int = Field(default=0, description="degenerate responses left out of every figure")
    discovery: dict[str, Any] | None = None
    seconds: float = 0.0
