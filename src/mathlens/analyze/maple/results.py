"""What the MAPLE analysis writes: the `MAPLE` document, `RUN/analysis/maple.jsonl`.

One entry per run record (`SolutionMaple`, carrying the record's identity as `record`), and a
summary (`MapleSummary`) with the results tables and the data of the seed's Figures 3 and 5. Every
table row and figure point belongs to one (model, configuration, variant) cell: a run with
baseline and RAG configurations, or with ablation variants, gets separate figures for each,
never one figure pooled over them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.flow.models import HybridResult
from mathlens.analyze.maple.discover import Discovery
from mathlens.analyze.maple.judge import JudgedStep, Reflection, StepJudgement
from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.maple.naming import LabelNaming
from mathlens.analyze.quality import QualityFlags
from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.stats.bootstrap import CI

SolutionStatus = Literal["ok", "unjudged", "unverifiable", "error", "degenerate"]
GroupBy = Literal["level", "subject", "all"]


class SolutionMaple(BaseModel):
    """One generated solution: its answer check, reflection, step labels, and the score with its parts.

    `status`: `ok` (scored), `unjudged` (the judge's reply was unusable: no score), `unverifiable`
    (the final answer could not be checked, e.g. no reference), `error` (the run record failed, or
    v/r could not be computed), `degenerate` (the response is empty, an echo of the prompt, a loop
    or in the wrong script: left out, neither checked nor judged, unless the analysis was asked to
    include degenerate responses; `answer_status` is then `degenerate` too). `maple` is set
    exactly when `status == "ok"`.
    """

    record: RecordRef
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
    hybrid: HybridResult | None = None  # symbolic + step-judge verdicts (step_judge option)
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
    """One row of a results table: one (model, configuration, variant) cell on one MATH level or
    subject (`group`; `all` for the overall table)."""

    model: str
    configuration: str
    variant: str = "original"
    by: GroupBy
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
    label_counts: dict[str, int] = Field(default_factory=dict, description="steps carrying each label (scored)")

    @property
    def cell(self) -> tuple[str, str, str]:
        """(model, configuration, variant), as `RecordRef.group`."""
        return self.model, self.configuration, self.variant


class FigurePoint(BaseModel):
    """One point of a figure: accuracy and mean MAPLE, with CIs, of one cell at one x value."""

    model: str
    configuration: str
    variant: str = "original"
    x: str = Field(description="the MATH level or subject")
    n: int
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    maple: float | None
    maple_low: float | None
    maple_high: float | None


class Figure(BaseModel):
    """The data of one two-panel figure (accuracy and mean MAPLE against `x`), one series per
    (model, configuration, variant)."""

    x: Literal["level", "subject"]
    points: list[FigurePoint] = Field(default_factory=list)


class DiscoveryOutcome(BaseModel):
    """Label discovery over the reflections: the clustering, or why none was made."""

    status: Literal["ok", "error"]
    embedder: str
    reflections: int = Field(description="failing points of the usable reflections, one per round of a loop "
                                         "(before removing duplicates)")
    texts: list[str] = Field(default_factory=list, description="the distinct failing points clustered")
    error: str = ""
    result: Discovery | None = None


class MapleSummary(BaseModel):
    """The MAPLE document's summary: settings, status counts, tables and figures of the run."""

    labels: LabelSet = Field(description="the label set the judge applied")
    label_procedure: str = Field("fixed", description="fixed: the given labels; paper: compiled from the reflections")
    labels_note: str = ""
    naming: LabelNaming | None = Field(None, description="how the paper's procedure named and ranked the clusters")
    reflection: str = Field("single", description="loop (multi-turn), single (one request) or none")
    reflect_rounds: int = Field(1, description="most rounds of a reflection loop")
    self_checks: dict[str, int] = Field(default_factory=dict,
                                        description="the solving models' own verdicts on their wrong answers")
    judge: str = Field(description="the step judge's model spec")
    reflector: str = Field(description="the reflecting model's spec, or 'the solving model'")
    formula: str = Field(description="printed: tanh(e·v/r); prose: tanh(e·r/v)")
    vr_source: str
    floor: float
    include_degenerate: bool = False
    excluded_degenerate: int = Field(default=0, description="degenerate responses left out of every figure")
    statuses: dict[str, int] = Field(default_factory=dict, description="solutions per status")
    answers: dict[str, int] = Field(default_factory=dict, description="solutions per answer status")
    overall: list[GroupRow] = Field(default_factory=list)
    by_level: list[GroupRow] = Field(default_factory=list)
    by_subject: list[GroupRow] = Field(default_factory=list)
    figure3: Figure = Field(default_factory=lambda: Figure(x="level"), description="accuracy and MAPLE by level")
    figure5: Figure = Field(default_factory=lambda: Figure(x="subject"), description="accuracy and MAPLE by subject")
    discovery: DiscoveryOutcome | None = None
    seconds: float = 0.0

    @property
    def cells(self) -> list[tuple[str, str, str]]:
        """The (model, configuration, variant) cells of the tables, in table order."""
        return list(dict.fromkeys(row.cell for row in self.overall))


MAPLE = DocumentSpec("maple", 2, SolutionMaple, MapleSummary, rerun="mathlens maple RUN")
