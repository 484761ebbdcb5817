"""What an imported run keeps about its source: the manifest's `ImportedFrom` and, on each record,
the source's own verdicts (`SourceScore`).

Kept free of other mathlens imports: `mathlens.runs.records` imports it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: the formats `mathlens import` reads
ImportFormat = Literal["inspect", "lm-eval", "lm-eval-json", "jsonl", "csv", "openai-batch", "math-eval",
                       "records-json"]
#: how many unmatched rows the manifest lists one by one (all are counted)
MAX_LISTED_UNMATCHED = 200


class SourceScore(BaseModel):
    """One verdict the source's own scorer gave a sample, as the source wrote it.

    `value` is the raw score (Inspect's "C"/"I"/"P"/"N" or a number, an lm-eval metric value, a
    `score`/`true_false` field); `correct` is that value read as right or wrong, None when it is
    neither (partial credit, a score between 0 and 1, an unscored sample); `answer` is what the
    source's scorer extracted from the response (Inspect's `answer`, lm-eval's `filtered_resps`,
    a harness's `pred`), when it says.
    """

    model_config = ConfigDict(frozen=True)

    scorer: str = Field(description="the source's name for the scorer or metric ('match', 'exact_match "
                                    "(strict-match)', 'score')")
    value: str | float | bool | None = None
    correct: bool | None = None
    answer: str | None = None


class UnmatchedRow(BaseModel):
    """A source row that matched no question of the run's items."""

    where: str = Field(description="the row's place in the source: 'line 12', 'sample q3 epoch 1'")
    id: str | None = None
    question: str | None = Field(None, description="the start of the row's question text, if it had one")
    reason: str


class ImportedFrom(BaseModel):
    """The source of an imported run: file, format, hash and what became of its rows."""

    source: str
    format: ImportFormat
    sha256: str
    size_bytes: int
    #: which code read the file: "inspect_ai" (Inspect's own reader) or "mathlens" (the built-in one)
    reader: str = "mathlens"
    #: `-F field=key` mapping given for JSONL/CSV (None for the fixed formats)
    mapping: dict[str, str] | None = None
    rows: int = Field(0, description="rows (samples, lines) read from the source")
    records: int = Field(0, description="records written (matched rows)")
    errors: int = Field(0, description="records written with status 'error'")
    matched_by_id: int = 0
    matched_by_text: int = 0
    unmatched: int = 0
    unmatched_rows: list[UnmatchedRow] = Field(default_factory=list,
                                               description=f"the first {MAX_LISTED_UNMATCHED} unmatched rows")
    #: the source's own name for the evaluation (Inspect task, lm-eval task), when it has one
    task: str | None = None
    #: where the questions came from: an items file (`--items`) or the source itself
    items_from: Literal["items", "source"] = "items"
    #: the source's status when it is not a finished run ("cancelled", "error"): the file holds
    #: only part of the samples the evaluation planned
    partial: str | None = None
    #: samples the source says the evaluation planned, when it says (Inspect's `dataset.samples` x epochs)
    planned: int | None = None
    #: records carrying the source's own verdicts (`RunRecord.source_scores`)
    scored: int = 0
    #: settings of the evaluation the source records (lm-eval: model arguments, shots, seeds, version)
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
