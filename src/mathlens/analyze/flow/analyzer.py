"""The ``flow`` analyzer: every response of a run through `analyze_solution`, plus exam tables.

Writes ``analysis/flow.json`` (a `FlowAnalysis`). It calls no model, and its output depends
only on the records, the questions and the lexicon version, so re-running it rewrites the same
file. Solutions are analysed by two threads by default, each holding its own SymPy worker.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mathlens.analyze.flow.annotate import load_lexicon
from mathlens.analyze.flow.models import ExamRow, FlowAnalysis, FlowRecord
from mathlens.analyze.flow.solution import analyze_solution
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

DEFAULT_THREADS = 2


def _questions(store: RunStore) -> dict[tuple[str, str], Question]:
    try:
        return store.questions()
    except UserError:
        return {}  # an older run whose item files are gone: analyse without the definitions


def _one(record: RunRecord, questions: dict[tuple[str, str], Question]) -> FlowRecord:
    base: dict[str, Any] = {
        "key": record.key, "model": record.model, "configuration": record.configuration,
        "exam_id": record.exam_id, "question_id": record.question_id, "variant": record.variant.name,
        "repeat": record.repeat}
    if record.status != "ok" or not record.response:
        return FlowRecord(**base, status="no_response")
    question = questions.get((record.exam_id, record.question_id))
    text = record.variant.question_text or (question.prompt_text() if question else None)
    result = analyze_solution(record.response, text).model_copy(update={"elapsed_s": None, "sympy_s": None})
    return FlowRecord(**base, status="ok", result=result)


def exam_table(records: Iterable[FlowRecord]) -> list[ExamRow]:
    """Mean step count S, mean ± sd complexity score, invalid steps: per exam, model, configuration.

    Only original (not ablated) prompts are counted, as in the seed's Tables 2-3.
    """
    groups: dict[tuple[str, str, str], list[FlowRecord]] = defaultdict(list)
    for r in records:
        if r.variant == "original" and r.result is not None:
            groups[(r.exam_id, r.model, r.configuration)].append(r)
    rows = []
    for (exam_id, model, configuration), members in sorted(groups.items()):
        metrics = [m.result.metrics for m in members if m.result is not None]
        steps = [float(m.total_steps) for m in metrics]
        scores = [m.complexity_score for m in metrics]
        invalid = [float(m.invalid_steps) for m in metrics]
        rows.append(ExamRow(
            exam_id=exam_id, model=model, configuration=configuration, responses=len(metrics),
            mean_steps=round(statistics.fmean(steps), 4) if steps else None,
            mean_complexity=round(statistics.fmean(scores), 4) if scores else None,
            sd_complexity=round(statistics.stdev(scores), 4) if len(scores) > 1 else None,
            mean_invalid_steps=round(statistics.fmean(invalid), 4) if invalid else None,
            share_with_invalid_step=round(sum(1 for m in metrics if m.invalid_steps) / len(metrics), 4)
            if metrics else None))
    return rows


def analyze_run(store: RunStore, options: dict[str, Any]) -> dict[str, Any]:
    """Analyse every record of the run; write ``analysis/flow.json``; return a summary."""
    questions = _questions(store)
    records = list(store.records())
    threads = max(1, int(options.get("threads", DEFAULT_THREADS)))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(lambda r: _one(r, questions), records))
    analysis = FlowAnalysis(lexicon_version=load_lexicon().version, records=results, exams=exam_table(results))
    path = store.write_analysis("flow", analysis)
    analysed = [r for r in results if r.result is not None]
    return {
        "status": "ok", "path": str(path), "records": len(results), "analysed": len(analysed),
        "with_invalid_step": sum(1 for r in analysed if r.result and r.result.metrics.invalid_steps),
        "exams": [row.model_dump() for row in analysis.exams],
    }
