"""The judge pipeline end to end with the real embedded model the tests run (Qwen2.5-Coder 0.5B Instruct).

The model is too small to grade well; what is tested is that a real backend's reply goes
through the schema constraint, the repair retry, bounds validation and the cache, and that an
unusable reply is recorded as `ungraded` with its reason and raw text, never as zero points.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mathlens.analyze.grading.grades import grade_run
from mathlens.analyze.grading.judge import JudgeOptions
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.models.cache import ResponseCache
from mathlens.models.registry import get_model
from support import grading_run as helpers
from support.embedded import TEST_EMBEDDED_SPEC


@pytest.mark.embedded
def test_embedded_judge_pipeline(tmp_path: Path, embedded_model_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    rubric = builtin_rubric()
    judge = get_model(TEST_EMBEDDED_SPEC, cache=ResponseCache(tmp_path / "c.sqlite"))
    options = JudgeOptions(max_tokens=400)  # room for five criteria with a short reason each

    async def go() -> list:  # type: ignore[type-arg]
        try:
            first = await grade_run(store, judge, rubric, options, limit=1)
            again = await grade_run(store, judge, rubric, options, limit=1)
        finally:
            await judge.aclose()
        return [first.grades[0], again.grades[0]]

    grade, repeat = asyncio.run(go())
    assert grade.grader == f"judge:{TEST_EMBEDDED_SPEC}" and grade.raw
    if grade.status == "graded":
        assert grade.total is not None and 0 <= grade.total <= grade.max_total
        assert all(c.value is not None and c.max is not None and 0 <= c.value <= c.max for c in grade.scores)
    else:
        assert grade.total is None and grade.scores == [] and grade.error
    assert judge.stats.cache_hits >= 1  # the second pass was served from the cache
    assert repeat.model_dump(exclude={"raw"}) == grade.model_dump(exclude={"raw"})
