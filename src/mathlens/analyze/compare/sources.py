"""Per-run values of every compared metric, read through the owning analysis documents.

`load_run_values(root)` reads a run's records (for the item list) and, for each metric, the one
document that holds it, through its `DocumentSpec`:

| metric               | document (spec)             | value per unit                                      |
|----------------------|-----------------------------|-----------------------------------------------------|
| `accuracy`           | answers (`ANSWERS`)         | 1 correct; 0 incorrect, unparseable, no answer, no response |
| `rubric_percent`     | grades (`GRADES`)           | 100·total/max of graded judgements, mean over judge runs |
| `maple`              | maple (`MAPLE`)             | the MAPLE score of solutions with status `ok`       |
| `robustness`         | sensitivity (`SENSITIVITY`) | mean TF-IDF cosine of a question's ablations        |
| `complexity`         | flow (`FLOW`)               | the complexity score of an analysed response        |
| `invalid_step_share` | flow (`FLOW`)               | invalid steps / steps of an analysed response       |

Answers whose correctness cannot be decided (no reference, unverifiable) have no accuracy value,
as in the answers analysis's own accuracy. Every value is keyed by record key, except robustness,
which belongs to a question (model, configuration, exam, question) across its variants and
repeats. A document that is absent or unreadable makes its metrics unavailable, with the reason
and the command that writes it; it is never an error of the comparison.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.compare.models import METRICS
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.grading.grades import GRADES
from mathlens.analyze.maple.results import MAPLE
from mathlens.runs.documents import DocumentError, DocumentSpec, RecordRef, document_states
from mathlens.runs.store import RunStore

QuestionKey = tuple[str, str, str, str]


@dataclass(frozen=True)
class Unavailable:
    """Why a metric cannot be computed for a run, and the command that makes it."""

    reason: str
    command: str


@dataclass(frozen=True)
class RunValues:
    """One run's records and metric values (see the module table)."""

    root: Path
    run_id: str
    refs: list[RecordRef]
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    robustness: dict[QuestionKey, float] = field(default_factory=dict)
    answers: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    unavailable: dict[str, Unavailable] = field(default_factory=dict)
    #: metric -> a scale description both sides must share (complexity depth, MAPLE formula)
    scales: dict[str, str] = field(default_factory=dict)
    #: metric -> what its document covers when that is not every record the run holds now
    stale: dict[str, str] = field(default_factory=dict)

    def values_of(self, metric: str) -> dict[str, float]:
        return self.values.get(metric, {})


def _command(spec: DocumentSpec[Any, Any], root: Path) -> str:
    return spec.rerun.replace("RUN", str(root))


def _missing(spec: DocumentSpec[Any, Any], root: Path) -> Unavailable:
    return Unavailable(f"{root}: no analysis/{spec.name}.jsonl", _command(spec, root))


def _read(spec: DocumentSpec[Any, Any], root: Path, metrics: tuple[str, ...], run: RunValues) -> bool:
    """True when the document is present and its envelope reads; else marks `metrics` unavailable."""
    try:
        doc = spec.read(root)
    except DocumentError as exc:
        for m in metrics:
            run.unavailable[m] = Unavailable(str(exc), _command(spec, root))
        return False
    if doc is None:
        for m in metrics:
            run.unavailable[m] = _missing(spec, root)
        return False
    return True


def _guard(spec: DocumentSpec[Any, Any], root: Path, metrics: tuple[str, ...], run: RunValues,
           fill: Any) -> None:
    """Run `fill()` (which streams the entries); an entry that does not validate drops the metrics."""
    if not _read(spec, root, metrics, run):
        return
    try:
        fill()
    except DocumentError as exc:
        for m in metrics:
            run.values.pop(m, None)
            run.unavailable[m] = Unavailable(str(exc), _command(spec, root))


def _answers(run: RunValues) -> None:
    acc = run.values.setdefault("accuracy", {})
    for e in ANSWERS.entries(run.root):
        predicted = e.verdict.stated if e.verdict is not None else None
        run.answers[e.record.key] = (e.status, predicted)
        if e.accuracy is not None:
            acc[e.record.key] = e.accuracy


def _grades(run: RunValues) -> None:
    sums: dict[str, list[float]] = defaultdict(list)
    for g in GRADES.entries(run.root):
        if g.status == "graded" and g.total is not None and g.max_total > 0:
            sums[g.record.key].append(100.0 * g.total / g.max_total)
    run.values["rubric_percent"] = {k: sum(v) / len(v) for k, v in sums.items()}


def _maple(run: RunValues) -> None:
    doc = MAPLE.read(run.root)
    if doc is not None:
        run.scales["maple"] = f"formula {doc.summary.formula}, v/r from {doc.summary.vr_source}"
    run.values["maple"] = {e.record.key: float(e.maple) for e in MAPLE.entries(run.root)
                           if e.status == "ok" and e.maple is not None and math.isfinite(e.maple)}


def _flow(run: RunValues) -> None:
    doc = FLOW.read(run.root)
    if doc is not None:
        run.scales["complexity"] = f"depth {doc.summary.depth_definition}"
    cx = run.values.setdefault("complexity", {})
    inv = run.values.setdefault("invalid_step_share", {})
    for e in FLOW.entries(run.root):
        if e.status != "ok" or e.result is None or e.result.status != "ok":
            continue
        m = e.result.metrics
        if math.isfinite(m.complexity_score):
            cx[e.record.key] = float(m.complexity_score)
        if m.total_steps > 0:
            inv[e.record.key] = m.invalid_steps / m.total_steps


def _sensitivity(run: RunValues) -> None:
    for q in SENSITIVITY.entries(run.root):
        if q.robustness is not None and math.isfinite(q.robustness):
            run.robustness[(q.model, q.configuration, q.exam_id, q.question_id)] = float(q.robustness)


def load_run_values(root: Path | str) -> RunValues:
    """Read one run's records and every metric's document (absent documents: metrics unavailable)."""
    store = RunStore(root)
    manifest = store.manifest()
    now = store.freeze()  # a run still being written: compare the records complete now
    run = RunValues(root=Path(root), run_id=manifest.run_id, refs=[RecordRef.of(r) for r in store.records()])
    states = {s.name: s for s in document_states(run.root, now)}
    for metric, (_, name) in METRICS.items():
        state = states.get(name)
        if state is not None and state.stale and state.status != "unreadable":
            run.stale[metric] = f"{run.run_id}: analysis/{name}.jsonl {state.note}"
    _guard(ANSWERS, run.root, ("accuracy",), run, lambda: _answers(run))
    _guard(GRADES, run.root, ("rubric_percent",), run, lambda: _grades(run))
    _guard(MAPLE, run.root, ("maple",), run, lambda: _maple(run))
    _guard(FLOW, run.root, ("complexity", "invalid_step_share"), run, lambda: _flow(run))
    _guard(SENSITIVITY, run.root, ("robustness",), run, lambda: _sensitivity(run))
    return run
