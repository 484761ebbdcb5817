"""The `tutor_scores` analyzer: a judge model scores every tutoring response on the rubric.

`mathlens tutor score RUN` and `mathlens analyze RUN --only tutor_scores` both run it through
`run_analyzers`, which resolves the judge (`--judge`, else the judge recorded with the run, else an
error that says how to name one). Each response x rubric item is one judge request (`judge.py`);
the scores are written to `TUTOR_SCORES` (`RUN/analysis/tutor_scores.jsonl`).

Options (`-O tutor_scores.KEY=VALUE`): `items`, rubric item ids or codes to score (all 19 when
empty); `limit`, score only the first N responses; `max_tokens`, the cap on each judge reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import Field, field_validator

from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions
from mathlens.errors import UserError
from mathlens.models.cache import ResponseCache
from mathlens.models.model import Model, closing_all
from mathlens.models.registry import get_model

from .judge import TUTOR_SCORES, ItemScore, ScoreSet, job_of, judge_config, judge_identity, judge_jobs
from .study import load_cells, rubric_of

ScoreListener = Callable[[ItemScore], None]

#: Called with each item score as the judge returns it (the command line's progress bar).
_LISTENER: ContextVar[ScoreListener | None] = ContextVar("tutor_score_listener", default=None)


class ScoreOptions(AnalyzerOptions):
    """What to score and how long a judge reply may be."""

    items: tuple[str, ...] = Field(default=(), description="rubric item ids or codes [all]")
    limit: int | None = Field(default=None, ge=1, description="score only the first N responses")
    max_tokens: int = Field(default=160, ge=16, description="token cap per judge reply")

    @field_validator("items", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """`"Q1,SBS"` (as `-O tutor_scores.items=Q1,SBS` gives it) is two items."""
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return value


@contextmanager
def listening(listener: ScoreListener | None) -> Iterator[None]:
    """Within the block, `listener` hears of every item score the analyzer produces."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


async def score_run(job: AnalysisJob[ScoreOptions], judge: Model) -> ScoreSet:
    """Judge the run's responses item by item with `judge` and write `TUTOR_SCORES`."""
    opts = job.options
    rubric = rubric_of(job.store)
    cells = load_cells(job.store)
    if opts.limit is not None:
        cells = cells[: opts.limit]
    if not cells:
        raise UserError(f"{job.store.root}: the run has no responses to score")
    items = rubric.select(list(opts.items))
    scores = await judge_jobs(judge, [job_of(c) for c in cells], items, judge_config(opts.max_tokens),
                              _LISTENER.get())
    result = ScoreSet(source=f"judge:{judge.spec}", rubric=rubric.name, scores=tuple(scores),
                      judge=judge_identity(judge))
    job.write(TUTOR_SCORES, result.scores, result.summary())
    return result


def run(job: AnalysisJob[ScoreOptions]) -> dict[str, Any]:
    """Build the resolved judge, score, close the judge and its cache; a short summary."""
    entry = job.require_judge()
    cache = None if job.no_cache else ResponseCache()
    try:
        model = get_model(entry.spec, entry.options, cache=cache)
        result = asyncio.run(closing_all(score_run(job, model), [model]))
    finally:
        if cache is not None:
            cache.close()
    return {"status": "ok", "path": str(TUTOR_SCORES.path(job.store.root)), "source": result.source,
            "judge": entry.spec, "counts": result.counts(), "responses": len({s.key for s in result.scores}),
            "items": result.items()}


ANALYZER = Analyzer(
    name="tutor_scores",
    title="Tutoring responses scored on the 19-item learner-adaptivity rubric by a judge model",
    options=ScoreOptions,
    run=run,
    writes=(TUTOR_SCORES,),
    judge="tutor rubric judge",
    default=False,
)
