"""The ``flow`` analyzer: every response of a run through `analyze_solution`, plus exam tables.

Writes ``analysis/flow.jsonl`` (the `FLOW` document: a `FlowRecord` per run record, exam tables in
the summary). Without a step judge it calls no model, and its output depends only on the records,
the questions and the lexicon version, so re-running it rewrites the same entries. Records are
analysed in batches through the job's executor (`mathlens.analyze.executor`: two threads by default,
each holding its own SymPy worker, or Ray tasks with ``--executor ray``; `FlowTask` is what is
shipped, one record and its question text at a time) and written in order as they come back, so a
large run is never held in memory; the summary keeps three numbers per original response for the
exam table (mean and sd need them), not the entries. With the option ``step_judge``
(``mathlens analyze --step-judge MODEL``) each record also gets the hybrid check (`hybrid.py`): the
judge decides the steps SymPy could not.
"""

from __future__ import annotations

import asyncio
import statistics
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from pydantic import Field

from mathlens.analyze.flow.annotate import load_lexicon
from mathlens.analyze.flow.models import (
    DEFAULT_DEPTH,
    FLOW,
    DepthDefinition,
    ExamRow,
    FlowRecord,
    FlowSummary,
    HybridResult,
    StepJudgeSummary,
    dense_threshold,
)
from mathlens.analyze.flow.report import exam_rows
from mathlens.analyze.flow.solution import FlowConfig, analyze_solution
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Line, Outcome
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.model import Model
from mathlens.runs.documents import RecordRef
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore
from mathlens.stats.bootstrap import bootstrap_ci

DEFAULT_THREADS = 2
#: records judged per batch (with a step judge) before they are written
BATCH = 64
#: records per executor task (one thread job or one Ray task)
BATCH_PER_TASK = 8


class FlowOptions(AnalyzerOptions):
    threads: int = Field(DEFAULT_THREADS, ge=1, le=64, description="solutions analysed at once")
    step_judge: str | None = Field(None, description="judge model for the steps SymPy cannot decide")
    step_judge_options: dict[str, Any] = Field(default_factory=dict, description="that judge's model options")
    no_cache: bool = Field(False, description="do not reuse cached step-judge replies")
    depth: DepthDefinition = Field(DEFAULT_DEPTH, description="d̄ of the complexity score: expression-tree height "
                                   "(tree), tokens per step (tokens) or characters per step (chars, the study's scale)")


def _questions(store: RunStore) -> dict[tuple[str, str], Question]:
    try:
        return store.questions()
    except UserError:
        return {}  # an older run whose item files are gone: analyse without the definitions


def _question_text(record: RunRecord, questions: dict[tuple[str, str], Question]) -> str | None:
    question = questions.get((record.exam_id, record.question_id))
    return record.variant.question_text or (question.prompt_text() if question else None)


def _one(record: RunRecord, questions: dict[tuple[str, str], Question], config: FlowConfig | None = None) -> FlowRecord:
    return analyze_record(record, _question_text(record, questions), config)


def analyze_record(record: RunRecord, question_text: str | None, config: FlowConfig | None = None) -> FlowRecord:
    """The flow entry of one record, read against `question_text` (the prompt it answered)."""
    ref = RecordRef.of(record)
    worked = record.worked_text  # the reasoning trace when there is one, else the response
    if record.status != "ok" or not worked:
        return FlowRecord(record=ref, status="no_response")
    # the token cap cut the text analysed: the response, or a trace that never reached one
    cut = record.truncated and (not record.reasoning or record.trace_truncated)
    result = analyze_solution(worked, question_text, config, cut=cut).model_copy(
        update={"elapsed_s": None, "sympy_s": None})
    return FlowRecord(record=ref, status="ok", result=result, trace=bool(record.reasoning),
                      trace_truncated=record.trace_truncated)


@dataclass(frozen=True)
class FlowTask:
    """What an executor runs per item (module level, so it pickles to Ray workers): a record and
    its question text in, its `FlowRecord` out."""

    config: FlowConfig

    def __call__(self, item: tuple[RunRecord, str | None]) -> FlowRecord:
        record, question_text = item
        return analyze_record(record, question_text, self.config)


@dataclass
class _ExamCell:
    """Per original response of one exam cell: steps, complexity score, invalid steps (floats)."""

    steps: array[float] = field(default_factory=lambda: array("d"))
    scores: array[float] = field(default_factory=lambda: array("d"))
    invalid: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class _Tally:
    """What the summary needs, accumulated while entries stream to disk (no entry is kept)."""

    records: int = 0
    analysed: int = 0
    with_invalid: int = 0
    by_exam: dict[tuple[str, str, str], _ExamCell] = field(default_factory=lambda: defaultdict(_ExamCell))
    checks: int = 0
    judge_status: Counter[str] = field(default_factory=Counter)
    provenance: Counter[str] = field(default_factory=Counter)
    disagreements: int = 0
    traces: Counter[str] = field(default_factory=Counter)

    def add(self, entry: FlowRecord) -> None:
        self.records += 1
        if entry.result is None:
            return
        self.analysed += 1
        self.traces.update(with_trace=entry.trace, trace_truncated=entry.trace_truncated,
                           capped=bool(entry.result.capped))
        metrics = entry.result.metrics
        self.with_invalid += bool(metrics.invalid_steps)
        if entry.record.original:
            cell = self.by_exam[(entry.record.exam_id, entry.record.model, entry.record.configuration)]
            cell.steps.append(float(metrics.total_steps))
            cell.scores.append(metrics.complexity_score)
            cell.invalid.append(float(metrics.invalid_steps))
        if entry.hybrid is not None:
            self.checks += 1
            self.judge_status[entry.hybrid.status] += 1
            self.provenance.update(s.provenance for s in entry.hybrid.steps)
            self.disagreements += entry.hybrid.disagreements


def exam_table(records: Iterable[FlowRecord]) -> list[ExamRow]:
    """Mean step count S, mean ± sd complexity score, invalid steps: per exam, model, configuration.

    Only original (not ablated) prompts are counted, as in Tables 2-3 of the calculus study.
    """
    tally = _Tally()
    for r in records:
        tally.add(r)
    return _exam_rows(tally.by_exam)


def _exam_rows(groups: dict[tuple[str, str, str], _ExamCell]) -> list[ExamRow]:
    rows = []
    for (exam_id, model, configuration), cell in sorted(groups.items()):
        steps, scores, invalid = cell.steps, cell.scores, cell.invalid
        n = len(scores)
        rows.append(ExamRow(
            exam_id=exam_id, model=model, configuration=configuration, responses=n,
            mean_steps=round(statistics.fmean(steps), 4) if steps else None,
            mean_complexity=round(statistics.fmean(scores), 4) if scores else None,
            sd_complexity=round(statistics.stdev(scores), 4) if n > 1 else None,
            sd_steps=round(statistics.stdev(steps), 4) if len(steps) > 1 else None,
            mean_invalid_steps=round(statistics.fmean(invalid), 4) if invalid else None,
            share_with_invalid_step=round(sum(1 for v in invalid if v) / n, 4) if n else None,
            steps_ci=bootstrap_ci(list(steps), seed=0), complexity_ci=bootstrap_ci(list(scores), seed=0)))
    return rows


def _entries(job: AnalysisJob[FlowOptions], tally: _Tally, judge: _StepJudge | None) -> Iterator[FlowRecord]:
    store, options = job.store, job.options
    questions = _questions(store)
    items = ((r, _question_text(r, questions)) for r in store.records())
    with job.executor(default_workers=options.threads) as executor:
        done = executor.map(FlowTask(FlowConfig(depth=options.depth)), items, batch=BATCH_PER_TASK)
        while batch := list(islice(done, BATCH)):
            if judge is not None:
                batch = judge.check(batch)
            for entry in batch:
                tally.add(entry)
                yield entry


@dataclass
class _StepJudge:
    """The step judge and the one event loop all its batches run on (its HTTP client is bound to it)."""

    model: Model
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)

    def check(self, results: list[FlowRecord]) -> list[FlowRecord]:
        """Each analysed record of one batch with its hybrid check (cached model calls)."""
        from mathlens.analyze.flow.hybrid import hybrid_check

        todo = [r for r in results if r.result is not None]

        async def run_all() -> list[HybridResult]:
            return list(await asyncio.gather(*(hybrid_check(r.result, r.result.question, self.model)
                                               for r in todo if r.result is not None)))

        checks = self.loop.run_until_complete(run_all())
        by_key = {r.record.key: c for r, c in zip(todo, checks, strict=True)}
        return [r.model_copy(update={"hybrid": by_key.get(r.record.key)}) for r in results]

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.model.aclose())
        finally:
            self.loop.close()


def _open_judge(options: FlowOptions, no_cache: bool) -> _StepJudge:
    from mathlens.models.cache import ResponseCache
    from mathlens.models.registry import get_model

    assert options.step_judge is not None
    return _StepJudge(get_model(options.step_judge, options.step_judge_options,
                                cache=None if (no_cache or options.no_cache) else ResponseCache()))


def run(job: AnalysisJob[FlowOptions]) -> Outcome[FlowSummary]:
    """Analyse every record of the run; write ``analysis/flow.jsonl``; its summary."""
    options = job.options
    tally = _Tally()
    judge = _open_judge(options, job.no_cache) if options.step_judge else None

    def summary() -> FlowSummary:
        step_judge = None
        if judge is not None:
            step_judge = StepJudgeSummary(
                judge=judge.model.spec,
                judge_status={k: tally.judge_status[k] for k in ("ok", "not_needed", "invalid", "error")},
                steps_by_provenance={k: tally.provenance[k] for k in ("symbolic", "judge", "both", "none")},
                disagreements=tally.disagreements)
        return FlowSummary(lexicon_version=load_lexicon().version, depth_definition=options.depth,
                           dense_threshold=dense_threshold(options.depth), records=tally.records,
                           analysed=tally.analysed,
                           with_invalid_step=tally.with_invalid, exams=_exam_rows(tally.by_exam),
                           with_trace=tally.traces["with_trace"], trace_truncated=tally.traces["trace_truncated"],
                           capped=tally.traces["capped"],
                           step_judge=step_judge)

    try:
        path = job.write(FLOW, _entries(job, tally, judge), summary)
    finally:
        if judge is not None:
            judge.close()
    return Outcome.ok(summary(), path)


def describe(summary: FlowSummary) -> list[Line]:
    """The exam table and, with a step judge, what it decided."""
    lines: list[Line] = [exam_rows(summary.exams)] if summary.exams else []
    if summary.step_judge is not None:
        prov = ", ".join(f"{k} {v}" for k, v in summary.step_judge.steps_by_provenance.items())
        lines.append(f"step judge {summary.step_judge.judge}: steps decided by {prov}; "
                     f"disagreements {summary.step_judge.disagreements}")
    return lines


ANALYZER = Analyzer(name="flow", title="reasoning flow: steps, operations, concepts, graph, checked claims",
                    options=FlowOptions, summary=FlowSummary, run=run, writes=(FLOW,), describe=describe)
