"""What a comparison produces: typed results for the command line, `--json`, the report and the
`COMPARE` document.

A `CompareReport` holds one `Comparison` per pair of sides (run A against run B, or one group of a
run against another). Each comparison says how its items were paired (`Pairing`: how many pairs,
and every item found on one side only), one `MetricResult` per metric (with its test, or why it is
unavailable and the command that makes it available) and the items whose final-answer verdict
changed (`ChangedItem`, naming both records so a reader can put the two responses side by side).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mathlens.runs.documents import DocumentSpec, RecordRef

By = Literal["model", "configuration", "variant"]
MetricName = Literal["accuracy", "rubric_percent", "maple", "robustness", "complexity", "invalid_step_share"]
MetricStatus = Literal["ok", "unavailable", "no_pairs"]
CorrectionName = Literal["holm", "bh", "none"]

#: metric -> (title, the analysis document it reads)
METRICS: dict[MetricName, tuple[str, str]] = {
    "accuracy": ("final-answer accuracy", "answers"),
    "rubric_percent": ("rubric score %", "grades"),
    "maple": ("MAPLE score", "maple"),
    "robustness": ("ablation robustness", "sensitivity"),
    "complexity": ("complexity score", "flow"),
    "invalid_step_share": ("invalid-step share", "flow"),
}


class CompareOptions(BaseModel):
    """How a comparison is computed (recorded in the report and the document)."""

    by: By | None = None
    seed: int = 0
    resamples: int = Field(2000, ge=1, le=100_000)
    confidence: float = Field(0.95, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    correction: CorrectionName = "holm"
    #: most item ids listed per unpaired side and changed-verdict direction (counts are always complete)
    max_listed: int = Field(500, ge=0, le=100_000)


class Side(BaseModel):
    """One side of a comparison: a run, optionally narrowed to one value of the `by` field."""

    run: str = Field(description="the run directory")
    run_id: str
    field: By | None = None
    value: str | None = None

    @property
    def label(self) -> str:
        return self.run_id if self.field is None else f"{self.run_id} · {self.field}={self.value}"


class Pairing(BaseModel):
    """How the records of the two sides were matched.

    `key` names the record fields that identify an item on both sides (those not compared);
    `paired` counts the items on both sides; `only_a`/`only_b` count the items on one side only
    and list their ids (at most `CompareOptions.max_listed` each)."""

    key: list[str]
    paired: int
    only_a: int
    only_b: int
    only_a_ids: list[str] = Field(default_factory=list)
    only_b_ids: list[str] = Field(default_factory=list)


class MetricResult(BaseModel):
    """One metric compared on the paired items. `delta` is B minus A.

    `status`: `ok`; `unavailable` (its analysis document is missing or unreadable on a side, or the
    two sides used different scales: `reason` says which, `command` makes it); `no_pairs` (no paired
    item has a value on both sides). `missing` counts paired items without a value on a side
    (e.g. an answer that could not be checked). For accuracy `test` is McNemar's exact test and
    `b`/`c` are the discordant counts (A right B wrong / A wrong B right); for the scores it is a
    sign-flip permutation test with a percentile bootstrap CI of the mean difference."""

    metric: MetricName
    title: str
    status: MetricStatus
    reason: str = ""
    command: str = ""
    n: int = 0
    missing: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    test: str = ""
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool | None = None
    b: int | None = None
    c: int | None = None
    #: the metric's documents that cover fewer or other records than their run holds (one line each)
    stale: list[str] = Field(default_factory=list)


class ChangedItem(BaseModel):
    """An item whose final-answer verdict differs between the sides (one entry of `COMPARE`)."""

    comparison: int = Field(description="index of the comparison in the report")
    item: str
    direction: Literal["correct_to_wrong", "wrong_to_correct"]
    record: RecordRef = Field(description="side A's record")
    record_b: RecordRef
    status_a: str
    status_b: str
    predicted_a: str | None = None
    predicted_b: str | None = None


class Comparison(BaseModel):
    """Side A against side B."""

    index: int
    a: Side
    b: Side
    pairing: Pairing
    metrics: list[MetricResult] = Field(default_factory=list)
    correct_to_wrong: int = 0
    wrong_to_correct: int = 0
    changed: list[ChangedItem] = Field(default_factory=list)

    def metric(self, name: str) -> MetricResult | None:
        return next((m for m in self.metrics if m.metric == name), None)


class CompareSummary(BaseModel):
    """The summary of the `COMPARE` document: options, the rule sides were formed by, every comparison
    (the changed items are its entries)."""

    runs: list[str]
    options: CompareOptions
    rule: str = Field(description="how the sides were chosen")
    family: int = Field(0, description="p-values corrected together (every metric of every comparison)")
    comparisons: list[Comparison] = Field(default_factory=list)


class CompareReport(CompareSummary):
    """Everything `mathlens compare` prints with `--json`."""


#: `<out>/analysis/compare.jsonl` (with `mathlens compare --out`): summary + one entry per changed item.
COMPARE = DocumentSpec("compare", 1, ChangedItem, CompareSummary, rerun="mathlens compare RUN_A RUN_B --out DIR")
