"""End to end on the built-in items with the real embedded model (text-only, so diagrams go as text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.adaptivity.analyzer import ScoreOptions, score_run
from mathlens.analyze.adaptivity.design import load_tutor_exams
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.analyze.adaptivity.study import (
    StudyOptions,
    compute_stats,
    load_cells,
    new_manifest,
    prepare,
    run_study,
)
from mathlens.analyze.protocol import AnalysisJob
from mathlens.errors import UserError
from mathlens.models.model import RetryPolicy, closing_all
from mathlens.models.registry import get_model
from mathlens.runs.runner import build_models
from mathlens.runs.store import RunStore
from support.embedded import TEST_EMBEDDED_SPEC

pytestmark = pytest.mark.embedded

#: one CPU thread for llama.cpp, so the test leaves the machine's other cores alone
ONE_THREAD = {"n_threads": 1}


async def test_send_mode_is_refused_for_the_text_only_embedded_model(embedded_model_path: Path) -> None:
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=[TEST_EMBEDDED_SPEC], image_mode="send", limit=1,
                                         model_options=ONE_THREAD))
    models = build_models(manifest, None, RetryPolicy(), None)
    async with models[TEST_EMBEDDED_SPEC]:
        assert models[TEST_EMBEDDED_SPEC].accepts_images is False
        with pytest.raises(UserError, match="text-only and cannot read the diagram of item 'g4-bar-chart'"):
            prepare(manifest, models, load_tutor_exams(manifest.items))


async def test_embedded_tutor_run_and_judge(embedded_model_path: Path, tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text("- {id: ana, grade: 4, performance: low, attitude: dislikes, self_efficacy: low}\n",
                        encoding="utf-8")
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=[TEST_EMBEDDED_SPEC], profiles=str(profiles),
                                         conditions=[4], limit=1, max_tokens=32, model_options=ONE_THREAD))
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    # one attempt with a generous timeout: on a busy machine a retry only repeats the slow call
    models = build_models(manifest, None, RetryPolicy(max_attempts=1, timeout_s=600), None)
    result = await closing_all(run_study(store, manifest, models), models.values())
    assert (result.written, result.errors) == (1, 0)
    cells = load_cells(store)
    for cell in cells:
        system, user = cell.record.messages
        assert system.role == "system" and "grade 4" in system.content
        assert user.content.startswith("I am in grade 4.") and "(The diagram shows:" in user.content
        assert user.images == ()
        assert cell.record.status == "ok" and isinstance(cell.record.response, str)
        assert cell.record.usage.completion_tokens <= 32
    async with get_model(TEST_EMBEDDED_SPEC, ONE_THREAD, retry=RetryPolicy(max_attempts=1, timeout_s=600)) as judge:
        scores = await score_run(AnalysisJob(store, ScoreOptions(items=("Q9", "Q13"), max_tokens=48)), judge)
    rubric = load_rubric()
    [judged] = scores.judgements
    assert [s.unit for s in judged.scores] == ["Q9", "Q13"] and judged.grader == f"judge:{TEST_EMBEDDED_SPEC}"
    for s in judged.scores:
        assert s.status in ("ok", "unscored")
        if s.value is not None:
            item = rubric.item(s.unit)
            assert s.value in item.values and s.label == item.label_of(int(s.value))
        else:
            assert s.error
    st = compute_stats(store)
    sbs = [r for r in st.table2 if r.code == "SBS" and r.model == TEST_EMBEDDED_SPEC]
    assert sbs and sbs[0].n == sum(s.status == "ok" for s in judged.scores if s.unit == "Q9")
