"""What the manifest of an imported run says about its source (`Manifest.imported`).

Kept free of other mathlens imports: `mathlens.runs.records` imports it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

#: the formats `mathlens import` reads
ImportFormat = Literal["inspect", "lm-eval", "jsonl", "csv", "openai-batch"]
#: how many unmatched rows the manifest lists one by one (all are counted)
MAX_LISTED_UNMATCHED = 200


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
