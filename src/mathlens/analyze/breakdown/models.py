"""What the `breakdown` analysis stores: the `BREAKDOWN` document and its entry and summary models.

Entries are per question and cell (model, configuration, prompt variant): the question's topics
and type, its accuracy and score, and the students' results on it when the exam file has them.
The summary holds the tables: invalid-step shares by operation and by concept, accuracy and score
by topic and by question type, and each exam's score against its cohort. Every row names its
cell; nothing is pooled across models, configurations or variants.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.tables import CohortComparison
from mathlens.runs.documents import DocumentSpec
from mathlens.stats.bootstrap import CI

ScoreBasis = Literal["rubric", "final answer", "none"]
StepSource = Literal["symbolic", "hybrid"]
QuestionType = str
#: the question types mathlens derives (an item's `metadata.type` may name any other)
DERIVED_TYPES: tuple[str, ...] = ("multiple_choice", "multi_part", "single_answer", "open")


class CellRow(BaseModel):
    """The cell a row belongs to: model, configuration and prompt variant."""

    model: str
    configuration: str
    variant: str = "original"
    variant_kind: str = "original"

    @property
    def original(self) -> bool:
        return self.variant_kind == "original"

    @property
    def cell(self) -> tuple[str, str, str]:
        """(model, configuration, variant): what the row is computed per."""
        return self.model, self.configuration, self.variant


class StepShare(CellRow):
    """How often the checked steps carrying one operation (or concept) are invalid, in one cell.

    `checked` counts the steps with that label whose verdict is valid or invalid, `invalid` those
    that are invalid, over `responses` responses; `share` is invalid / checked with a percentile
    bootstrap interval over responses (a response's steps are resampled together)."""

    label: str
    invalid: int
    checked: int
    responses: int
    share: CI


class GroupScore(CellRow):
    """Accuracy and score of the questions of one topic (or of one question type) in one cell.

    `accuracy` is correct / checkable final answers (correct, incorrect, unparseable or no
    response), with a bootstrap interval over questions (a question's repeats are resampled
    together); `score` is the points earned over the points possible, each question averaged over
    its repeats (on `BreakdownSummary.score_basis`)."""

    group: str
    questions: int
    responses: int
    correct: int = 0
    checkable: int = 0
    accuracy: CI | None = None
    earned: float | None = None
    possible: float | None = None
    score: float | None = Field(None, description="percent of the points possible")


class ExamCohort(CellRow):
    """One exam's score in one cell beside the students who sat it."""

    exam_id: str
    exam_name: str
    questions: int
    score: float | None = Field(None, description="percent of the points of the questions answered")
    cohort: CohortComparison


class QuestionBreakdown(CellRow):
    """One question in one cell (an entry of the breakdown document)."""

    exam_id: str
    question_id: str
    topics: list[str] = Field(default_factory=list)
    question_type: QuestionType
    points: float
    responses: int
    correct: int = 0
    checkable: int = 0
    accuracy: float | None = None
    score: float | None = Field(None, description="percent of the question's points, averaged over repeats")
    invalid_steps: int = 0
    checked_steps: int = 0
    class_average: float | None = None
    class_std: float | None = None
    difference: float | None = Field(None, description="score minus the class average (points of percent)")
    z_score: float | None = None


class BreakdownSummary(BaseModel):
    """The summary of `analysis/breakdown.jsonl`."""

    score_basis: ScoreBasis = "none"
    step_source: StepSource | None = Field(None, description="None: the run has no flow analysis")
    has_answers: bool = False
    confidence: float = 0.95
    resamples: int = 0
    responses: int = 0
    overall: list[StepShare] = Field(default_factory=list, description="every checked step, per cell")
    operations: list[StepShare] = Field(default_factory=list)
    concepts: list[StepShare] = Field(default_factory=list)
    topics: list[GroupScore] = Field(default_factory=list)
    types: list[GroupScore] = Field(default_factory=list)
    exams: list[ExamCohort] = Field(default_factory=list)
    #: questions whose exam file gives the students' average on them
    questions_with_class_average: int = 0
    #: what the analysis could not use (a missing flow analysis, unreadable grades)
    notes: list[str] = Field(default_factory=list)


#: `analysis/breakdown.jsonl`: one `QuestionBreakdown` per question and cell; the tables in the summary.
BREAKDOWN = DocumentSpec("breakdown", 1, QuestionBreakdown, BreakdownSummary,
                         rerun="mathlens analyze RUN --only breakdown")
