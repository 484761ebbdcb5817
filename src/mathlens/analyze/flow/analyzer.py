"""The ``flow`` analyzer: every response of a run through `analyze_solution`, plus exam tables.

Writes ``analysis/flow.json`` (a `FlowAnalysis`). Without a step judge it calls no model, and
its output depends only on the records, the questions and the lexicon version, so re-running it
rewrites the same file. Solutions are analysed by two threads by default, each holding its own
SymPy worker. With the option ``step_judge`` (``mathlens analyze --step-judge MODEL``) each
record also gets the hybrid check (`hybrid.py`): the judge decides the steps SymPy could not.
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
    summary: dict[str, Any] = {}
    if options.get("step_judge"):
        results, summary = _with_judge(results, str(options["step_judge"]), options)
    analysis = FlowAnalysis(lexicon_version=load_lexicon().version, records=results, exams=exam_table(results))
    path = store.write_analysis("flow", analysis)
    analysed = [r for r in results if r.result is not None]
    return {
        "status": "ok", "path": str(path), "records": len(results), "analysed": len(analysed),
        "with_invalid_step": sum(1 for r in analysed if r.result and r.result.metrics.invalid_steps),
        "exams": [row.model_dump() for row in analysis.exams], **summary,
    }


def _with_judge(results: list[FlowRecord], spec: str,
                options: dict[str, Any]) -> tuple[list[FlowRecord], dict[str, Any]]:
    """Each analysed record with its hybrid check by the judge `spec` (cached model calls)."""
    import asyncio

    from mathlens.analyze.flow.hybrid import hybrid_check
    from mathlens.models.cache import ResponseCache
    from mathlens.models.model import closing_all
    from mathlens.models.registry import get_model

    judge_options = options.get("step_judge_options") or {}
    if not isinstance(judge_options, dict):
        raise UserError("-O flow.step_judge_options must be a JSON object")
    judge = get_model(spec, judge_options, cache=None if options.get("no_cache") else ResponseCache())
    todo = [r for r in results if r.result is not None]

    async def run_all() -> list[Any]:
        return list(await closing_all(asyncio.gather(*(hybrid_check(r.result, r.result.question, judge)
                                                      for r in todo if r.result is not None)), [judge]))

    checks = asyncio.run(run_all())
    by_key = {r.key: c for r, c in zip(todo, checks, strict=True)}
    out = [r.model_copy(update={"hybrid": by_key.get(r.key)}) for r in results]
    steps = [s for c in checks for s in c.steps]
    return out, {"step_judge": spec, "judge_status": {k: sum(c.status == k for c in checks)
                                                       for k in ("ok", "not_needed", "invalid", "error")},
                 "steps_by_provenance": {k: sum(s.provenance == k for s in steps)
                                         for k in ("symbolic", "judge", "both", "none")},
                 "disagreements": sum(c.disagreements for c in checks)}
