"""Judge audit: compare the steps a judge labels as erroneous with human first-error labels.

Data: ProcessBench (`processbench_*.json`: `steps`, `label` = 0-based index of the earliest wrong
step, -1 for none) and BIG-Bench Mistake (`*.jsonl`: `steps`, `mistake_index`, null for none).
The judge's first error is the lowest step it lists (any label); "no error" when it lists none.

Metrics follow ProcessBench: accuracy on erroneous solutions (the judge's first error is exactly the
human one), accuracy on error-free solutions (the judge lists no step), and F1 = their harmonic
mean. Unjudged solutions count as misses (reported separately, and the metrics are also given over
judged solutions only). The label-confusion summary says, for each label the judge used, where it
put it relative to the human first error: before it, at it, after it, or in an error-free solution.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.maple.judge import StepJudgement, judge_steps
from mathlens.analyze.maple.labels import LabelSet
from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig
from mathlens.models.model import Model

Position = Literal["before", "at", "after", "error_free"]


class AuditSample(BaseModel):
    """One solution with its human first-error label (-1 = no error)."""

    id: str
    problem: str
    steps: list[str]
    first_error: int = Field(ge=-1)
    reference_answer: str | None = None
    source: str = ""


def _processbench(path: Path) -> list[AuditSample]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(rows, list):
        raise UserError(f"{path}: expected a JSON list of ProcessBench records")
    return [
        AuditSample(
            id=str(r.get("id", i)),
            problem=r["problem"],
            steps=list(r["steps"]),
            first_error=int(r["label"]),
            source="processbench",
        )
        for i, r in enumerate(rows)
    ]


def _bigbench(path: Path) -> list[AuditSample]:
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        r = json.loads(line)
        idx = r.get("mistake_index")
        out.append(
            AuditSample(
                id=str(r.get("id", f"bbm-{i}")),
                problem=str(r["input"]),
                steps=list(r["steps"]),
                first_error=-1 if idx is None else int(idx),
                reference_answer=str(r["target"]) if r.get("target") is not None else None,
                source="bigbench_mistake",
            )
        )
    return out


def load_audit_data(path: Path | str, limit: int | None = None, seed: int = 0) -> list[AuditSample]:
    """Read ProcessBench (.json) or BIG-Bench Mistake (.jsonl). With `limit`, a seeded random sample
    (so both error-free and erroneous solutions appear, unlike the first N of a sorted file)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such audit data file")
    try:
        samples = _bigbench(path) if path.suffix == ".jsonl" else _processbench(path)
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: not ProcessBench or BIG-Bench Mistake data ({type(exc).__name__}: {exc})") from None
    samples = [s for s in samples if s.steps]
    if limit is not None and limit < len(samples):
        picked = sorted(random.Random(seed).sample(range(len(samples)), limit))
        samples = [samples[i] for i in picked]
    return samples


def predicted_first_error(judgement: StepJudgement) -> int | None:
    """0-based index of the judge's first erroneous step, -1 for none, None when unjudged."""
    if judgement.status != "ok":
        return None
    return min((s.step for s in judgement.steps), default=0) - 1


class AuditMetrics(BaseModel):
    """ProcessBench-style metrics. A value is None when its class has no samples."""

    n: int
    n_erroneous: int
    n_error_free: int
    n_unjudged: int
    acc_erroneous: float | None
    acc_error_free: float | None
    f1: float | None
    judged_acc_erroneous: float | None = None
    judged_acc_error_free: float | None = None
    judged_f1: float | None = None
    erroneous_outcomes: dict[str, int] = Field(default_factory=dict, description="exact/early/late/missed/unjudged")
    error_free_outcomes: dict[str, int] = Field(default_factory=dict, description="correct/false_alarm/unjudged")


def harmonic_f1(a: float | None, b: float | None) -> float | None:
    """ProcessBench's F1: 2ab/(a+b); 0 when both are 0, None when either is undefined."""
    if a is None or b is None:
        return None
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def audit_metrics(human: Sequence[int], predicted: Sequence[int | None]) -> AuditMetrics:
    """Metrics from human first errors (-1 = none) and judge first errors (None = unjudged)."""
    if len(human) != len(predicted):
        raise ValueError("human and predicted labels differ in length")
    err = {"exact": 0, "early": 0, "late": 0, "missed": 0, "unjudged": 0}
    free = {"correct": 0, "false_alarm": 0, "unjudged": 0}
    for h, p in zip(human, predicted, strict=True):
        if h < 0:
            free["unjudged" if p is None else "correct" if p < 0 else "false_alarm"] += 1
        elif p is None:
            err["unjudged"] += 1
        elif p < 0:
            err["missed"] += 1
        else:
            err["exact" if p == h else "early" if p < h else "late"] += 1
    n_err, n_free = sum(err.values()), sum(free.values())
    a, b = _share(err["exact"], n_err), _share(free["correct"], n_free)
    ja, jb = _share(err["exact"], n_err - err["unjudged"]), _share(free["correct"], n_free - free["unjudged"])
    return AuditMetrics(
        n=len(human),
        n_erroneous=n_err,
        n_error_free=n_free,
        n_unjudged=err["unjudged"] + free["unjudged"],
        acc_erroneous=a,
        acc_error_free=b,
        f1=harmonic_f1(a, b),
        judged_acc_erroneous=ja,
        judged_acc_error_free=jb,
        judged_f1=harmonic_f1(ja, jb),
        erroneous_outcomes=err,
        error_free_outcomes=free,
    )


def label_positions(first_error: int, judgement: StepJudgement) -> list[tuple[str, Position]]:
    """(label, where it sits relative to the human first error) for every label the judge gave."""
    out: list[tuple[str, Position]] = []
    if judgement.status != "ok":
        return out
    for step in judgement.steps:
        idx = step.step - 1
        pos: Position = (
            "error_free"
            if first_error < 0
            else "before"
            if idx < first_error
            else "at"
            if idx == first_error
            else "after"
        )
        out.extend((label, pos) for label in step.labels)
    return out


def label_confusion(pairs: Sequence[tuple[int, StepJudgement]]) -> dict[str, dict[str, int]]:
    """Label -> {before, at, after, error_free} counts over (human first error, judgement) pairs."""
    table: dict[str, dict[str, int]] = {}
    for first_error, judgement in pairs:
        for label, pos in label_positions(first_error, judgement):
            row = table.setdefault(label, {"before": 0, "at": 0, "after": 0, "error_free": 0})
            row[pos] += 1
    return dict(sorted(table.items()))


class AuditItem(BaseModel):
    """One audited solution."""

    id: str
    human_first_error: int
    predicted_first_error: int | None
    judgement: StepJudgement


class AuditReport(BaseModel):
    """Everything `mathlens maple-audit` prints and stores."""

    data: str
    source: str
    judge: str
    labels: str
    metrics: AuditMetrics
    label_confusion: dict[str, dict[str, int]]
    items: list[AuditItem]
    seconds: float = 0.0


async def run_audit(
    samples: Sequence[AuditSample],
    judge: Model,
    labels: LabelSet,
    config: GenerateConfig | None = None,
    on_item: Callable[[AuditItem], None] | None = None,
) -> tuple[AuditMetrics, dict[str, dict[str, int]], list[AuditItem]]:
    """Judge every sample (no reference solution: the audit data has none) and score against humans."""
    items: list[AuditItem] = []
    for s in samples:
        j = await judge_steps(judge, labels, s.problem, s.steps, None, s.reference_answer, config)
        item = AuditItem(
            id=s.id,
            human_first_error=s.first_error,
            predicted_first_error=predicted_first_error(j),
            judgement=j,
        )
        items.append(item)
        if on_item is not None:
            on_item(item)
    metrics = audit_metrics([i.human_first_error for i in items], [i.predicted_first_error for i in items])
    confusion = label_confusion([(i.human_first_error, i.judgement) for i in items])
    return metrics, confusion, items
