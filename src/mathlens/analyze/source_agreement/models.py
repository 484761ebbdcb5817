"""What the `source-agreement` analysis stores: the `SOURCE_AGREEMENT` document.

Light to import (no SymPy): `mathlens show`, the report and `mathlens.api` read it without loading
the checker. One entry per record and source scorer: the source's verdict and extracted answer,
mathlens's verdict and extracted answer, the reference, and whether they agree (None when one of
the two has no verdict, with the reason in `left_out`). The summary holds, per model,
configuration and scorer, the 2x2 table, percent agreement and Cohen's kappa with bootstrap
intervals, and the records left out by reason.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.stats.bootstrap import CI

#: why a record is not compared: the source's value reads as neither right nor wrong (partial
#: credit, unscored), or mathlens has no verdict (the checker timed out, the question has no
#: reference answer)
LeftOut = Literal["source_undecided", "mathlens_undecided", "both_undecided"]


class SourceAgreementEntry(BaseModel):
    """One record's verdict from one source scorer beside mathlens's."""

    record: RecordRef
    scorer: str
    source_value: str | float | bool | None = None
    source_correct: bool | None = None
    source_answer: str | None = None
    #: the answers analysis's status for the record (correct, incorrect, unparseable, no_response...)
    mathlens_status: str
    mathlens_correct: bool | None = None
    mathlens_answer: str | None = None
    reference: str | None = None
    agree: bool | None = None
    left_out: LeftOut | None = None


class ScorerAgreement(BaseModel):
    """Agreement of one source scorer with mathlens, for one model and configuration.

    Counts are of compared records: `both_correct`, `source_only` (the source says correct,
    mathlens does not), `mathlens_only`, `both_incorrect`; `left_out` counts the others by reason.
    """

    model: str
    configuration: str
    scorer: str
    compared: int
    both_correct: int
    source_only: int
    mathlens_only: int
    both_incorrect: int
    agreement: CI
    kappa: CI
    left_out: dict[str, int] = Field(default_factory=dict)

    @property
    def disagreements(self) -> int:
        """Compared records on which the two disagree."""
        return self.source_only + self.mathlens_only

    @property
    def left_out_total(self) -> int:
        """Records not compared, whatever the reason."""
        return sum(self.left_out.values())


class SourceAgreementSummary(BaseModel):
    """The summary of the source-agreement document."""

    status: Literal["ok", "no_source_verdicts"] = "ok"
    rows: list[ScorerAgreement] = Field(default_factory=list)
    #: entries where the two disagree, over every row (each is listed in the entries, `agree` false)
    disagreements: int = 0
    #: records of the run without any verdict of the source (all records of a run not imported)
    records_without_source: int = 0
    seed: int = 0
    n_resamples: int = 0


#: `analysis/source-agreement.jsonl`: one `SourceAgreementEntry` per record and source scorer.
SOURCE_AGREEMENT = DocumentSpec("source-agreement", 2, SourceAgreementEntry, SourceAgreementSummary)
