"""A whole tutoring study with scripted models: plan, run, resume, judge, tables, ANOVA, worksheets."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.adaptivity.analyzer import ScoreOptions, score_run
from mathlens.analyze.adaptivity.design import design_of
from mathlens.analyze.adaptivity.judge import TUTOR_SCORES
from mathlens.analyze.adaptivity.rubric import load_rubric
from mathlens.analyze.adaptivity.study import (
    StudyOptions,
    compute_agreement,
    compute_stats,
    load_cells,
    new_manifest,
    prepare,
    run_study,
    study_exams,
)
from mathlens.analyze.adaptivity.tables import TUTOR_STATS
from mathlens.analyze.adaptivity.worksheet import (
    TUTOR_HUMAN,
    export_worksheet,
    import_worksheet,
    load_human,
    save_human,
)
from mathlens.analyze.protocol import AnalysisJob
from mathlens.errors import UserError
from mathlens.models.base import Message
from mathlens.runs.documents import RecordRef
from mathlens.runs.plan import plan_tasks, task_key
from mathlens.runs.store import RunStore

RUBRIC = load_rubric()


def scripted_judge(messages: list[Message]) -> str:
    """Model A's replies say STEP and earn every item, except that Q2/Q3 are earned only when the
    learner described themselves; model B's replies earn the lowest non-negative score."""
    text = messages[-1].content
    item = RUBRIC.item(re.search(r"Rubric question (Q\d+)", text).group(1))  # type: ignore[union-attr]
    reply = text.split("The tutor's reply:")[1]
    motivational = item.id in ("Q2", "Q3")
    if "STEP" in reply:
        label = ("yes" if "I am in grade" in text else "no") if motivational else item.scale[-1].label
    else:
        label = "no" if motivational else item.scale[0].label
    return json.dumps({"rationale": "scripted", "rating": label})


@pytest.fixture
def study(tmp_path: Path, mock_model: Any) -> tuple[RunStore, dict[str, Any]]:
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["mock/a", "mock/b"], conditions=[1, 2],
                                         limit=3, max_tokens=64))
    models = {"mock/a": mock_model(responses=["STEP one: read the graph."], name="a"),
              "mock/b": mock_model(responses=["The answer is C."], name="b")}
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    return store, models


async def test_plan_run_resume(study: tuple[RunStore, dict[str, Any]]) -> None:
    store, models = study
    manifest = store.manifest()
    exams = study_exams(store, manifest)
    ready, tasks = prepare(manifest, models, exams)
    # the first 3 items (all grade 4) x 3 grade-4 learners x 2 conditions x 2 models
    assert len(tasks) == 3 * 3 * 2 * 2 and ready.total_tasks == len(tasks)
    assert len({t.key for t in tasks}) == len(tasks)
    # planned by the ordinary planner: conditions are configurations, learners are profile variants
    assert [t.key for t in plan_tasks(ready, exams)] == [t.key for t in tasks]
    first_q = exams[0].questions[0].id
    assert tasks[0].key == task_key("mock/a", "condition-1", "tutoring", first_q, "g4-high", 0)
    assert {t.configuration for t in tasks} == {"condition-1", "condition-2"}
    assert {(t.variant.kind, t.variant.name) for t in tasks} == {
        ("profile", "g4-high"), ("profile", "g4-intermediate"), ("profile", "g4-low")}
    first = await run_study(store, manifest, models)
    assert (first.written, first.errors) == (36, 0)
    assert manifest.tutor is not None and manifest.tutor.accepts_images == {}  # the caller's manifest is unchanged
    stored = store.manifest()
    assert stored.tutor is not None and stored.tutor.accepts_images == {"mock/a": False, "mock/b": False}
    assert stored.total_tasks == 36 and all(m.identity for m in stored.models)
    assert store.items_path.is_file()
    again = await run_study(store, store.manifest(), models)
    assert (again.written, again.skipped) == (0, 36)
    assert [t.key for t in prepare(store.manifest(), models, store.exams())[1]] == [t.key for t in tasks]
    design = design_of(store.manifest())
    assert [p.id for p in design.profiles][:3] == ["g4-high", "g4-intermediate", "g4-low"]
    cells = load_cells(store)
    assert len(cells) == 36 and all(c.profile.grade == c.question.grade for c in cells)
    assert all(c.profile.id == c.record.variant.name and c.record.configuration == f"condition-{c.condition}"
               for c in cells)
    # text-only mock models get diagram descriptions, never image files
    assert all(not m.images for c in cells for m in c.record.messages)
    assert any("(The diagram shows:" in c.record.messages[-1].content for c in cells)


async def test_recorded_image_support_is_what_a_resume_plans_with(study: tuple[RunStore, dict[str, Any]]) -> None:
    store, models = study
    manifest = store.manifest()
    assert manifest.tutor is not None
    recorded = manifest.model_copy(update={"tutor": manifest.tutor.model_copy(
        update={"accepts_images": {"mock/a": True}})})
    _, tasks = prepare(recorded, models, study_exams(store, manifest))
    with_diagram = [t for t in tasks if t.model == "mock/a" and t.messages[-1].images]
    assert with_diagram and all(Path(img).is_absolute() and Path(img).is_file()
                                for t in with_diagram for img in t.messages[-1].images)
    assert not any(t.messages[-1].images for t in tasks if t.model == "mock/b")


async def test_scores_tables_and_anova(study: tuple[RunStore, dict[str, Any]], mock_model: Any) -> None:
    store, models = study
    await run_study(store, store.manifest(), models)
    judge = mock_model(func=scripted_judge, name="judge")
    scores = await score_run(AnalysisJob(store, ScoreOptions()), judge)
    assert scores.counts() == {"ok": 36 * 19}
    doc = TUTOR_SCORES.read(store.root)
    # one judgement per response, holding its 19 item scores
    assert doc is not None and doc.envelope.entries == 36 and doc.summary.counts == {"ok": 36 * 19}
    assert doc.summary.judge is not None and doc.summary.judge.spec == "mock/judge"
    assert doc.summary.judge.identity == judge.identity()
    assert all(len(j.scores) == 19 and j.status == "graded" for j in TUTOR_SCORES.entries(store.root))
    # one count per (model, condition, profile) cell: 2 models x 2 conditions x 3 learners, 3 items each
    assert len(doc.summary.groups) == 12 and {g.responses for g in doc.summary.groups} == {3}
    keys = {r.key for r in store.records()}
    assert {e.record.key for e in TUTOR_SCORES.entries(store.root)} == keys
    st = compute_stats(store)
    table1 = {(r.model, r.performance, r.dimension): r.mean_percent.estimate for r in st.table1}
    # model A: 7 of 9 adaptivity points without the learner's description, 9 of 9 with it
    assert table1[("mock/a", "low", "adaptivity")] == pytest.approx((700 / 9 + 100) / 2)
    assert table1[("mock/a", "high", "correctness")] == pytest.approx(100.0)
    assert table1[("mock/b", "intermediate", "adaptivity")] == pytest.approx(0.0)
    assert table1[("mock/b", "high", "quality")] == pytest.approx(0.0)
    table2 = {(r.model, r.condition, r.code): r.percent_satisfied for r in st.table2}
    assert table2[("mock/a", 1, "LA")] == 0.0 and table2[("mock/a", 2, "LA")] == 100.0
    assert table2[("mock/a", 1, "CK")] == 100.0 and table2[("all", 2, "SE")] == 50.0
    res = st.anova["adaptivity"]["performance x model"]
    assert res.status == "ok" and res.effect("model").p is not None and res.effect("model").p < 1e-6
    assert res.effect("performance").df == 2 and res.effect("performance:model").df == 2
    # model B's cells are constant, so equal variances fail and the rank-based tests are reported
    assert res.levene is not None and res.levene.passed is False
    assert res.reported == "nonparametric" and {t.factor for t in res.nonparametric} == {"performance", "model"}
    stored = TUTOR_STATS.read(store.root)
    assert stored is not None and [x.source for x in stored.summary.sources] == ["judge:mock/judge"]
    assert stored.summary.sources[0].table1 == st.table1
    rows = list(TUTOR_STATS.entries(store.root))
    assert len(rows) == 36 * 3 and {r.record.key for r in rows} == keys


async def test_worksheet_round_trip_and_agreement(study: tuple[RunStore, dict[str, Any]], mock_model: Any,
                                                  tmp_path: Path) -> None:
    store, models = study
    await run_study(store, store.manifest(), models)
    judge_scores = await score_run(AnalysisJob(store, ScoreOptions(limit=10)), mock_model(func=scripted_judge,
                                                                                       name="judge"))
    cells = load_cells(store)[:10]
    sheet = tmp_path / "sheet.csv"
    assert export_worksheet(sheet, cells, RUBRIC, judge=judge_scores) == 10 * 19
    with sheet.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["allowed_scores"] == "0=no | 1=yes" and rows[1]["allowed_scores"] == "-1=negative | 0=no | 1=yes"
    for n, row in enumerate(rows):
        row["score"] = "" if n % 19 == 18 else row["judge_score"]  # Q19 left blank
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    human = import_worksheet(sheet, "ana", RUBRIC, {c.key: c.ref for c in cells})
    assert human.counts() == {"ok": 180, "unscored": 10}
    judged = {k: s.value for k, s in judge_scores.values().items()}
    assert all(judged[k] == s.value for k, s in human.values().items() if s.status == "ok")
    assert {j.record for j in human.judgements} == {c.ref for c in cells}
    assert all((j.status, j.error, j.score("Q19").error) == ("ungraded", "1 items not scored", "left blank")  # type: ignore[union-attr]
               for j in human.judgements)
    save_human(store, "ana", human, sheet)
    # a second annotator is kept beside the first; importing the first again replaces only theirs
    with pytest.raises(ValueError, match="cannot be saved as annotator 'bo'"):
        save_human(store, "bo", human)
    save_human(store, "bo", import_worksheet(sheet, "bo", RUBRIC, {c.key: c.ref for c in cells}))
    save_human(store, "ana", human, sheet)
    stored = TUTOR_HUMAN.read(store.root)
    assert stored is not None and [a.name for a in stored.summary.annotators] == ["bo", "ana"]
    assert stored.envelope.entries == 2 * 10  # one judgement per annotator and response
    assert set(load_human(store)) == {"ana", "bo"} and load_human(store)["ana"].counts() == human.counts()
    compute_stats(store, "human:ana")
    compute_stats(store)
    stats = TUTOR_STATS.read(store.root)
    assert stats is not None and [x.source for x in stats.summary.sources] == ["judge:mock/judge", "human:ana"]
    assert stats.summary.get("judge") is not None and stats.summary.get("human:bo") is None
    report = compute_agreement(store, n_resamples=50)
    by_scope = {r.scope: r for r in report.pairs if (r.a, r.b) == ("judge:mock/judge", "human:ana")}
    assert by_scope["Q1"].n == 10 and by_scope["Q1"].percent is not None and by_scope["Q1"].percent.estimate == 1.0
    assert (by_scope["Q1"].kappa_weights, by_scope["Q2"].kappa_weights, by_scope["quality"].kappa_weights) == (
        "none", "linear", "none")
    assert "Q19" not in by_scope  # nobody but the judge scored it
    assert by_scope["quality"].n == 60 and by_scope["adaptivity"].n == 90
    assert by_scope["quality"].unit == "response x item" and by_scope["Q1"].unit == "response"
    agreement = TUTOR_AGREEMENT.read(store.root)
    assert agreement is not None and agreement.summary.graders == ["judge:mock/judge", "human:bo", "human:ana"]
    assert agreement.summary == report and agreement.options == {"resamples": 50, "seed": 0}


KNOWN = {"k1": RecordRef(key="k1", model="m", configuration="condition-1", exam_id="e", question_id="q")}


def test_import_rejects_bad_rows(tmp_path: Path) -> None:
    sheet = tmp_path / "s.csv"
    header = "response_key,item_id,score\n"
    for body, msg in (("k1,Q1,2\n", r"s.csv:2: score 2 for Q1"), ("zz,Q1,1\n", "not in this run"),
                      ("k1,Q1,1\nk1,Q1,0\n", "scored twice"), ("k1,Q42,1\n", "unknown rubric item")):
        sheet.write_text(header + body, encoding="utf-8")
        with pytest.raises(UserError, match=msg):
            import_worksheet(sheet, "x", RUBRIC, KNOWN)
    sheet.write_text("response_key,score\nk1,1\n", encoding="utf-8")
    with pytest.raises(UserError, match="lacks the column"):
        import_worksheet(sheet, "x", RUBRIC, KNOWN)
    sheet.write_text(header + "k1,Q1,\nk1,Q9,\n", encoding="utf-8")
    with pytest.raises(UserError, match="holds no scores"):
        import_worksheet(sheet, "x", RUBRIC, KNOWN)
    sheet.write_text(header, encoding="utf-8")
    with pytest.raises(UserError, match="has no rows"):
        import_worksheet(sheet, "x", RUBRIC, KNOWN)
    # the calculus worksheet's column names are read too, and codes name items
    sheet.write_text("key,criterion,points,comment\nk1,SBS,yes,clear\nk1,Q2,-1,\n", encoding="utf-8")
    [judged] = import_worksheet(sheet, "x", RUBRIC, KNOWN).judgements
    assert [(s.unit, s.value, s.label, s.rationale) for s in judged.scores] == [("Q2", -1, "negative", ""),
                                                                                ("Q9", 1, "yes", "clear")]


def test_a_plain_run_is_not_a_tutoring_run(tmp_path: Path) -> None:
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["mock/a"]))
    assert manifest.tutor is not None and manifest.extra == {}
    assert manifest.configurations == ["condition-1", "condition-2", "condition-3", "condition-4"]
    assert set(manifest.tutor.objectives) == {4, 8}
    with pytest.raises(UserError, match="not a tutoring run"):
        design_of(manifest.model_copy(update={"tutor": None}))
    # a tutoring run of an older mathlens kept its design in `extra`; it is named, not misread
    old = manifest.model_copy(update={"tutor": None, "extra": {"tutor": {"version": 1, "profiles": []}}})
    with pytest.raises(UserError, match="made by an older mathlens"):
        design_of(old)
