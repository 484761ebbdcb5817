"""The `breakdown` analyzer: where a model fails, for training priorities and curriculum review.

Reads the run's records and questions and, when present, the `flow` document (step verdicts with
their operations and concepts), the `answers` document (final-answer verdicts) and the judge's
rubric `grades`; calls no model. Writes `analysis/breakdown.jsonl` (the `BREAKDOWN` document).

Scores come from the rubric grades when the run has them (`score_basis = "rubric"`: the first
judge run's total over its maximum), else from the final answers (`"final answer"`: a question's
points when its answer is correct, or the points of each correct part), else there is none.
Step verdicts are the hybrid check's where the flow analysis ran with a step judge (option
`steps="hybrid"`, the default), else SymPy's.

Memory does not grow with the documents' entries: the run's records are read twice (once for the
step shares, once for the question rows) and each record's flow and answers entries are read
alongside (`_Aligned`: both documents are written in record order, so each is walked once; a
record met out of order is fetched by byte offset). The question rows keep, per record, only the
verdicts of its checked steps, not its labels, and share one `RecordRef` per question and cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import Field

from mathlens.analyze.breakdown.compute import (
    Bootstrap,
    RecordFacts,
    StepFacts,
    exam_cohorts,
    group_scores,
    question_entries,
    step_shares,
)
from mathlens.analyze.breakdown.models import BREAKDOWN, BreakdownSummary, ScoreBasis, StepSource
from mathlens.analyze.flow.models import FLOW, FlowRecord
from mathlens.analyze.grading.answer_records import ANSWERS, AnswerRecord
from mathlens.analyze.grading.grades import GRADES
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.errors import UserError
from mathlens.items.schema import Exam, Question
from mathlens.runs.documents import DocumentError, DocumentSpec, RecordRef
from mathlens.runs.store import RunStore

E = TypeVar("E")
#: the two verdicts of a checked step, shared by every question row (labels are not needed there)
_CHECKED = {v: StepFacts(operations=(), concepts=(), verdict=v) for v in ("valid", "invalid")}


class BreakdownOptions(AnalyzerOptions):
    """Options of the `breakdown` analyzer (`mathlens analyze -O breakdown.KEY=VALUE`)."""

    resamples: int = Field(2000, ge=0, le=100_000, description="bootstrap resamples of each interval")
    confidence: float = Field(0.95, gt=0, lt=1, description="coverage of the bootstrap intervals")
    seed: int = Field(0, description="bootstrap seed")
    steps: StepSource = Field("hybrid", description="step verdicts: the hybrid check's where the flow "
                                                    "analysis has one (hybrid), or SymPy's only (symbolic)")


def step_facts(entry: FlowRecord, source: StepSource) -> tuple[tuple[StepFacts, ...], bool]:
    """The steps of one flow entry with the verdict used, and whether hybrid verdicts were used."""
    if entry.result is None:
        return (), False
    hybrid: dict[int, str] = {}
    if source == "hybrid" and entry.hybrid is not None and entry.hybrid.status == "ok":
        hybrid = {s.index: s.verdict for s in entry.hybrid.steps}
    steps = tuple(StepFacts(operations=tuple(s.operations), concepts=tuple(s.concepts),
                            verdict=hybrid.get(s.index, s.verdict)) for s in entry.result.steps)
    return steps, bool(hybrid)


def answer_fraction(q: Question, entry: AnswerRecord) -> float | None:
    """Share of the question's points earned on the final answer: the points of the correct parts
    when every part has points, else all or nothing; None when the answer cannot be checked."""
    if entry.status in ("no_reference", "unverifiable"):
        return None
    parts = entry.verdict.parts if entry.verdict is not None else []
    if q.parts and parts and all(p.points is not None for p in q.parts):
        total = sum(p.points or 0.0 for p in q.parts)
        status = {p.label: p.status for p in parts}
        earned = sum(p.points or 0.0 for p in q.parts if status.get(p.label) == "correct")
        return earned / total if total else None
    return 1.0 if entry.status == "correct" else 0.0


def _questions(store: RunStore) -> tuple[list[Exam], dict[tuple[str, str], Question]]:
    try:
        exams = store.exams()
    except UserError:
        return [], {}  # item files gone: nothing can be grouped by topic
    return exams, {(e.id, q.id): q for e in exams for q in e.questions}


class _Aligned(Generic[E]):
    """One per-record document read alongside the run's records: entries are taken from one pass
    over the file while their keys follow the records, and fetched by offset otherwise."""

    def __init__(self, spec: DocumentSpec[Any, Any], root: Path) -> None:
        self.spec, self.root = spec, root
        self.stream: Iterator[Any] = iter(spec.entries(root))
        self.ahead: Any = None
        self.index: dict[str, list[int]] | None = None

    def get(self, key: str) -> E | None:
        if self.ahead is None:
            self.ahead = next(self.stream, None)
        if self.ahead is not None and self.ahead.record.key == key:
            found, self.ahead = self.ahead, None
            return found
        if self.index is None:
            self.index = self.spec.index(self.root)
        offsets = self.index.get(key)
        return self.spec.entry_at(self.root, offsets[0]) if offsets else None


class _Inputs:
    """The documents the breakdown reads; per record, what it needs of them (see the module notes)."""

    def __init__(self, store: RunStore, questions: dict[tuple[str, str], Question], source: StepSource) -> None:
        root = store.root
        self.root, self.questions, self.source = root, questions, source
        self.notes: list[str] = []
        self.has_flow = FLOW.read(root) is not None
        self.has_answers = ANSWERS.read(root) is not None
        self.hybrid_used = False
        self.rubric: dict[str, float] = {}
        try:
            has_grades = GRADES.read(root) is not None
            for g in GRADES.entries(root) if has_grades else ():
                if g.judge_run == 0 and g.status == "graded" and g.total is not None and g.max_total:
                    self.rubric.setdefault(g.record.key, g.total / g.max_total)
        except DocumentError as exc:
            self.notes.append(f"rubric grades not used: {exc}")

    @property
    def basis(self) -> ScoreBasis:
        return "rubric" if self.rubric else "final answer" if self.has_answers else "none"

    def facts(self, store: RunStore, *, labels: bool = True) -> Iterator[RecordFacts]:
        """Every record's facts, in record order (`labels=False`: checked steps' verdicts only)."""
        rubric = self.basis == "rubric"
        refs: dict[tuple[str, ...], RecordRef] = {}
        flows: _Aligned[FlowRecord] | None = _Aligned(FLOW, self.root) if self.has_flow else None
        answers: _Aligned[AnswerRecord] | None = _Aligned(ANSWERS, self.root) if self.has_answers else None
        for rec in store.records():
            status, fraction = None, None
            a = answers.get(rec.key) if answers is not None else None
            if a is not None:
                q = self.questions.get((a.record.exam_id, a.record.question_id))
                status, fraction = a.status, answer_fraction(q, a) if q is not None else None
            steps: tuple[StepFacts, ...] = ()
            f = flows.get(rec.key) if flows is not None else None
            if f is not None:
                steps, used = step_facts(f, self.source)
                self.hybrid_used |= used
                if not labels:
                    steps = tuple(_CHECKED[s.verdict] for s in steps if s.checked)
            ref = RecordRef.of(rec)
            if not labels:  # question rows read only the question and the cell: one shared ref per cell
                ref = refs.setdefault((ref.exam_id, ref.question_id, ref.model, ref.configuration, ref.variant,
                                       ref.variant_kind), ref)
            yield RecordFacts(ref=ref, answer=status,
                              fraction=self.rubric.get(rec.key) if rubric else fraction, steps=steps)


def run_breakdown(job: AnalysisJob[BreakdownOptions]) -> Outcome[BreakdownSummary]:
    """Compute the breakdown of the run and write `BREAKDOWN`."""
    opts = job.options
    exams, questions = _questions(job.store)
    inputs = _Inputs(job.store, questions, opts.steps)
    boot = Bootstrap(resamples=opts.resamples, confidence=opts.confidence, seed=opts.seed)
    responses = 0

    def counted(facts: Iterator[RecordFacts]) -> Iterator[RecordFacts]:
        nonlocal responses
        for f in facts:
            responses += 1
            yield f

    overall, operations, concepts = step_shares(counted(inputs.facts(job.store)), boot)
    entries = question_entries(inputs.facts(job.store, labels=False), questions)
    notes = list(inputs.notes)
    if not inputs.has_flow:
        notes.append("no flow analysis: no step shares (run `mathlens analyze RUN --only flow`)")
    if not questions:
        notes.append("the run's questions could not be loaded: no per-question rows")
    summary = BreakdownSummary(
        score_basis=inputs.basis,
        step_source=("hybrid" if inputs.hybrid_used else "symbolic") if inputs.has_flow else None,
        has_answers=inputs.has_answers, confidence=opts.confidence, resamples=opts.resamples,
        responses=responses, overall=overall, operations=operations, concepts=concepts,
        topics=group_scores(entries, "topic", boot), types=group_scores(entries, "type", boot),
        exams=exam_cohorts(entries, exams),
        questions_with_class_average=len({(e.exam_id, e.question_id) for e in entries
                                          if e.class_average is not None}),
        notes=notes)
    path = job.write(BREAKDOWN, entries, summary)
    return Outcome.ok(summary, path)


def describe(summary: BreakdownSummary) -> list[str]:
    """The operation with the most invalid steps (in any cell, named when the run has several), or that
    no checked step is invalid; then the notes."""
    basis = f"score basis: {summary.score_basis}"
    cells = {r.cell for r in summary.overall}
    top = max(summary.operations, key=lambda r: (r.invalid, r.share.estimate or 0.0), default=None)
    if top is None:
        lines = []
    elif top.invalid == 0:
        checked = sum(r.checked for r in summary.overall)
        lines = [f"no checked step is invalid ({checked} checked; {basis})"]
    else:
        where = f" for {top.model} {top.configuration}" + ("" if top.original else f" ({top.variant})")
        lines = [f"most often invalid{where if len(cells) > 1 else ''}: {top.label} "
                 f"({top.invalid}/{top.checked} invalid; {basis})"]
    return lines + list(summary.notes)


ANALYZER = Analyzer(
    name="breakdown", title="Invalid steps by operation and concept; scores by topic, question type and cohort",
    options=BreakdownOptions, summary=BreakdownSummary, run=run_breakdown, writes=(BREAKDOWN,),
    reads=("flow", "answers"), describe=describe,
)
