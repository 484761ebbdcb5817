"""The `tutor_scores` analyzer: a judge model scores every tutoring response on the rubric.

`mathlens tutor score RUN` and `mathlens analyze RUN --only tutor_scores` both run it through
`run_analyzers`, which resolves the judge (`--judge`, else the judge recorded with the run, else an
error that says how to name one). Each response x rubric item is one judge request (`judge.py`,
through the judging core); each response's scores are one `Judgement` entry of `TUTOR_SCORES`
(`RUN/analysis/tutor_scores.jsonl`).

Options (`-O tutor_scores.KEY=VALUE`): `items`, rubric item ids or codes to score (all 19 when
empty); `limit`, score only the first N responses; `max_tokens`, the cap on each judge reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import Field, field_validator

from mathlens.analyze.judging.entries import Judgement
from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.errors import UserError
from mathlens.flags import MAX_TOKENS, Flag
from mathlens.models.cache import ResponseCache
from mathlens.models.model import Model, closing_all
from mathlens.models.registry import get_model
from mathlens.runs.records import ModelEntry

from .judge import TUTOR_SCORES, ScoreSet, ScoresSummary, job_of, judge_cells, judge_config
from .study import load_cells, rubric_of

ScoreListener = Callable[[Judgement], None]

#: Called with each response's judgement as the judge completes it (the command line's progress bar).
_LISTENER: ContextVar[ScoreListener | None] = ContextVar("tutor_score_listener", default=None)


class ScoreOptions(AnalyzerOptions):
    """What to score and how long a judge reply may be."""

    items: Annotated[tuple[str, ...], Flag("--items", split=True)] = Field(
        default=(), description="rubric items to score (ids or codes); all 19 when none is named")
    limit: Annotated[int | None, Flag("--limit")] = Field(default=None, ge=1, le=10_000_000,
                                                          description="score only the first N responses")
    max_tokens: Annotated[int, Flag("--max-tokens")] = Field(default=160, ge=16, le=MAX_TOKENS,
                                                             description="token cap per judge reply")

    @field_validator("items", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """`"Q1,SBS"` (as `-O tutor_scores.items=Q1,SBS` gives it) is two items."""
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value


@contextmanager
def listening(listener: ScoreListener | None) -> Iterator[None]:
    """Within the block, `listener` hears of every judgement the analyzer produces."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


async def score_run(job: AnalysisJob[ScoreOptions], judge: Model) -> ScoreSet:
    """Judge the run's responses item by item with `judge` and write `TUTOR_SCORES` (the summary
    records the judge's spec and its backend's identity, what cache keys are built from)."""
    opts = job.options
    rubric = rubric_of(job.store)
    cells = load_cells(job.store)
    if opts.limit is not None:
        cells = cells[: opts.limit]
    if not cells:
        raise UserError(f"{job.store.root}: the run has no responses to score")
    items = rubric.select(list(opts.items))
    judgements = await judge_cells(judge, [job_of(c, items) for c in cells], judge_config(opts.max_tokens),
                                   _LISTENER.get())
    result = ScoreSet(grader=f"judge:{judge.spec}", rubric=rubric.name, judgements=tuple(judgements),
                      judge=ModelEntry(spec=judge.spec, identity=judge.identity()))
    job.write(TUTOR_SCORES, result.judgements, result.summary())
    return result


def run(job: AnalysisJob[ScoreOptions]) -> Outcome[ScoresSummary]:
    """Build the resolved judge, score, close the judge and its cache; the scores' summary."""
    entry = job.require_judge()
    cache = None if job.no_cache else ResponseCache()
    try:
        model = get_model(entry.spec, entry.options, cache=cache)
        result = asyncio.run(closing_all(score_run(job, model), [model]))
    finally:
        if cache is not None:
            cache.close()
    return Outcome.ok(result.summary(), TUTOR_SCORES.path(job.store.root))


def describe(summary: ScoresSummary) -> list[str]:
    """Responses and items scored, by whom, and the item scores by status."""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items()))
    return [f"scored {summary.responses} responses on {len(summary.items)} items with "
            f"{summary.judge.spec if summary.judge else summary.grader}: {counts}"]


ANALYZER = Analyzer(
    name="tutor_scores",
    title="Tutoring responses scored on the 19-item learner-adaptivity rubric by a judge model",
    options=ScoreOptions,
    summary=ScoresSummary,
    run=run,
    describe=describe,
    writes=(TUTOR_SCORES,),
    judge="tutor rubric judge",
)
