"""What the `answers` analysis stores: the `ANSWERS` document and its entry and summary models.

Light to import (no SymPy), so that `mathlens show` and the report can read stored verdicts and
quality flags without loading the checker; the analyzer itself is `analyzer.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.compliance import ComplianceSummary, FormatReport
from mathlens.analyze.grading.verdicts import AnswerVerdict
from mathlens.analyze.quality import QualityFlags
from mathlens.runs.documents import DocumentSpec, RecordRef

RecordStatus = Literal["correct", "incorrect", "unparseable", "unverifiable", "no_reference", "no_response"]


class AnswerRecord(BaseModel):
    """The answer check of one run record."""

    record: RecordRef
    status: RecordStatus
    truncated: bool = False
    verdict: AnswerVerdict | None = None
    format: FormatReport | None = None
    quality: QualityFlags | None = None


class AccuracySummary(BaseModel):
    """Verdict counts for one model, configuration and variant; `accuracy` over the checkable records.

    `degenerate`, `truncated` and `no_final_answer` count the records (with a response) carrying
    that quality flag; `quality` counts every flag (see `mathlens.analyze.quality`). Accuracy keeps
    degenerate responses: a copy of the prompt is a wrong answer.
    """

    model: str
    configuration: str
    variant: str = "original"
    records: int
    counts: dict[str, int]
    accuracy: float | None
    degenerate: int = 0
    truncated: int = 0
    no_final_answer: int = 0
    quality: dict[str, int] = Field(default_factory=dict)


class AnswersSummary(BaseModel):
    """The summary of the answers document."""

    rules: dict[str, bool] | None = None
    summary: list[AccuracySummary] = Field(default_factory=list)
    compliance: list[ComplianceSummary] = Field(default_factory=list)


#: `analysis/answers.jsonl`: one `AnswerRecord` per run record.
ANSWERS = DocumentSpec("answers", 1, AnswerRecord, AnswersSummary)


def stored_quality(root: Path) -> dict[str, QualityFlags | None]:
    """Record key -> the quality flags the answers analysis stored (empty when it has not run)."""
    return {e.record.key: e.quality for e in ANSWERS.entries(root)}
