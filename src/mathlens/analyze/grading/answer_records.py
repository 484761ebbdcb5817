"""What the `answers` analysis stores: the `ANSWERS` document and its entry and summary models.

Light to import (no SymPy), so that `mathlens show` and the report can read stored verdicts and
quality flags without loading the checker; the analyzer itself is `analyzer.py`.

The final answer is read from the visible answer only (`RunRecord.response`), never from a
reasoning trace: a trace holds drafts and abandoned attempts, and what a model commits to is what
it shows. A record whose trace the token cap cut before any visible answer
(`RunRecord.trace_truncated`) is ``no_response`` with `trace_truncated` set and a `reason`
saying so, and counts as a failed answer in accuracy (docs/traces.md). A response the token cap
cut before it stated an answer is ``no_answer``, with the reason (`check_answer(..., cut=True)`);
it counts as a failed answer too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.grading.compliance import ComplianceSummary, FormatReport
from mathlens.analyze.grading.verdicts import AnswerVerdict
from mathlens.analyze.quality import QualityFlags
from mathlens.rounding import percent
from mathlens.runs.documents import DocumentSpec, RecordRef

RecordStatus = Literal["correct", "incorrect", "unparseable", "unverifiable", "no_reference", "no_answer",
                       "no_response"]
#: the statuses accuracy counts (its denominator): a right answer and every kind of wrong one
CHECKABLE: tuple[RecordStatus, ...] = ("correct", "incorrect", "unparseable", "no_answer", "no_response")
#: the checkable statuses that are not a right answer
WRONG: frozenset[str] = frozenset(CHECKABLE) - {"correct"}


class AnswerRecord(BaseModel):
    """The answer check of one run record."""

    record: RecordRef
    status: RecordStatus
    truncated: bool = False
    #: the model gave a reasoning trace (kept apart from the visible answer, which alone is checked)
    trace: bool = False
    #: the token cap cut the trace itself: no visible answer was reached, none is read from the trace
    trace_truncated: bool = False
    #: why there is no verdict, in words (set for ``no_response``, ``no_answer`` and ``no_reference``)
    reason: str = ""
    verdict: AnswerVerdict | None = None
    format: FormatReport | None = None
    quality: QualityFlags | None = None

    @property
    def accuracy(self) -> float | None:
        """This record's share of accuracy: 1 correct, 0 wrong (incorrect, unparseable, no answer,
        no response), None when correctness cannot be decided (no reference, unverifiable)."""
        if self.status not in CHECKABLE:
            return None
        return 1.0 if self.status == "correct" else 0.0


class AccuracySummary(BaseModel):
    """Verdict counts for one model, configuration and variant; `accuracy` over the checkable records.

    `degenerate`, `truncated` and `no_final_answer` count the records (with a response) carrying
    that quality flag; `with_trace` the records with a reasoning trace and `trace_truncated` those
    whose trace the token cap cut before a visible answer (a subset of the ``no_response`` count);
    `quality` counts every flag (see `mathlens.analyze.quality`). Accuracy keeps
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
    with_trace: int = 0
    trace_truncated: int = 0
    quality: dict[str, int] = Field(default_factory=dict)

    @property
    def answered(self) -> int:
        """Records with a response that states a final answer (a failed request has no flags)."""
        return self.quality.get("flagged", 0) - self.no_final_answer

    def share(self, count: int) -> float | None:
        """`count` as a share of the records (None for an empty group)."""
        return count / self.records if self.records else None

    def correct_line(self, scope: str = "") -> str | None:
        """The final-answer count in words, as every command and the report say it, with `scope`
        (which responses it covers) in its bracket; None when no record could be checked."""
        if self.accuracy is None:
            return None
        scope = f"; {scope}" if scope else ""
        return (f"{self.counts.get('correct', 0)} of {self.records} correct by the answer checker "
                f"({percent(self.accuracy)} of the checkable responses{scope})")


class AnswersSummary(BaseModel):
    """The summary of the answers document. `overall` counts every record of the run together (what
    the report's "what to trust" box shows); `summary` splits them by model, configuration, variant."""

    rules: dict[str, bool] | None = None
    summary: list[AccuracySummary] = Field(default_factory=list)
    compliance: list[ComplianceSummary] = Field(default_factory=list)
    overall: AccuracySummary | None = None


def correct_lines(groups: Sequence[AccuracySummary]) -> list[str]:
    """"final answers: ..." for the original prompts of each model and configuration of an answers
    summary's `groups` (each named when there are several)."""
    originals = [g for g in groups if g.variant == "original"]
    lines = []
    for group in originals:
        said = group.correct_line("original prompts" if len(groups) > len(originals) else "")
        if said is not None:
            who = f" ({group.model} · {group.configuration})" if len(originals) > 1 else ""
            lines.append(f"final answers{who}: {said}")
    return lines


#: `analysis/answers.jsonl`: one `AnswerRecord` per run record.
ANSWERS = DocumentSpec("answers", 2, AnswerRecord, AnswersSummary)


def stored_quality(root: Path) -> dict[str, QualityFlags | None]:
    """Record key -> the quality flags the answers analysis stored (empty when it has not run)."""
    return {e.record.key: e.quality for e in ANSWERS.entries(root)}
