"""Grade consistency across repeated runs: a run made with `mathlens run --runs 3`, graded by a
scripted judge that gives one question a different grade in one run. Table 6 must show each
run's score and their mean and sd, and the changed question must be listed, in the
`GRADE_TABLES` document, in `mathlens grade` output and in the report's scores section.

Every expected value is computed here from the scripted judge replies and the exam's points."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mathlens.analyze.grading.judge import Grade
from mathlens.analyze.grading.tables import GRADE_TABLES, compare_with_cohort, exam_scores, grade_changes
from mathlens.cli.main import app
from mathlens.items.schema import Cohort
from mathlens.report import make_report
from mathlens.runs.documents import DocumentVersionError, RecordRef
from mathlens.runs.store import RunStore
from support import grading_run as helpers
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"



POINTS = {"q1": 10.0, "q2": 20.0}
CLASS_AVERAGE, CLASS_SD = 70.0, 10.0
EXAM = {
    "id": "cons-e1", "name": "Consistency exam", "course": "Calculus III",
    "cohort": {"class_average": CLASS_AVERAGE, "std": CLASS_SD, "size": 30},
    "questions": [
        {"id": "q1", "text": "Find the gradient of f(x,y) = x^2 y at (-1, 4).", "points": POINTS["q1"],
         "answers": ["<-8, 1>"]},
        {"id": "q2", "text": "Differentiate x^2.", "points": POINTS["q2"], "answers": ["2x"]},
    ],
}
CRITERIA = ("method", "execution", "final_answer", "notation", "clarity")
#: one point on each criterion
FULL_POINTS = dict.fromkeys(CRITERIA, 1.0)
#: within the maxima of a 10-point question (3/4/1/1/1)
ODD_POINTS = {"method": 2.0, "execution": 3.0, "final_answer": 1.0, "notation": 0.5, "clarity": 0.5}
#: the question and repeat (0-based) that the judge grades differently
ODD = ("q1", 1)
REPEATS = 3


def _reply(points: dict[str, float]) -> str:
    return json.dumps({k: {"points": v, "rationale": "scripted"} for k, v in points.items()})


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, int], float], dict[str, Any]]:
    """The run, the total the judge was scripted to give each (question, repeat), and the JSON of
    `mathlens grade`."""
    base = tmp_path_factory.mktemp("consistency")
    exam = base / "exam.yaml"
    exam.write_text(yaml.safe_dump(EXAM), encoding="utf-8")
    run = base / "run"
    fx.cli("run", str(exam), "--model", "mock/student", "-M", "responses=" + json.dumps([fx.SOLUTION]),
           "--runs", str(REPEATS), "--out", str(run), "--quiet", cache=base / ".cache")
    # The judge is asked about the records in the order the run stored them, one reply each (in order).
    records = list(RunStore(run).records())
    assert len(records) == len(POINTS) * REPEATS
    replies, scripted = [], {}
    for rec in records:
        points = ODD_POINTS if (rec.question_id, rec.repeat) == ODD else FULL_POINTS
        replies.append(_reply(points))
        scripted[(rec.question_id, rec.repeat)] = sum(points.values())
    # The judge alone scores the final answer: these tests follow the scripted totals across repeats.
    doc = fx.cli("grade", str(run), "--judge", "mock/judge", "-J", "responses=" + json.dumps(replies),
                 "--no-cache", "--final-answer", "judge", cache=base / ".cache")
    return run, scripted, doc


def _expected_runs(scripted: dict[tuple[str, int], float]) -> list[float]:
    total = sum(POINTS.values())
    return [100 * sum(scripted[(q, r)] for q in POINTS) / total for r in range(REPEATS)]


def test_table6_has_each_runs_score_with_mean_and_sd(graded: tuple[Path, dict[tuple[str, int], float],
                                                                  dict[str, Any]]) -> None:
    run, scripted, _ = graded
    doc = GRADE_TABLES.read(run)
    assert doc is not None and doc.envelope.schema_version == 2
    [row] = doc.summary.table6
    per_run = _expected_runs(scripted)
    assert [s.repeat for s in row.run_scores] == list(range(REPEATS)) and row.repeats == REPEATS
    assert [s.percent for s in row.run_scores] == pytest.approx(per_run)
    assert [s.score for s in row.run_scores] == pytest.approx([sum(scripted[(q, r)] for q in POINTS)
                                                              for r in range(REPEATS)])
    assert all(s.total == sum(POINTS.values()) and s.ungraded == 0 for s in row.run_scores)
    assert row.mean_percent == pytest.approx(statistics.fmean(per_run))
    assert row.sd_percent == pytest.approx(statistics.stdev(per_run))
    assert row.sd_percent is not None and row.sd_percent > 0
    # the score averages each question over the runs
    expected_score = sum(statistics.fmean(scripted[(q, r)] for r in range(REPEATS)) for q in POINTS)
    assert row.score == pytest.approx(expected_score, abs=1e-4)  # stored to 4 decimals
    assert row.percent == pytest.approx(100 * expected_score / sum(POINTS.values()))
    # the cohort has a mean and sd: a z-score against them
    assert row.cohort.kind == "mean_sd"
    assert row.cohort.z_score == pytest.approx((100 * expected_score / sum(POINTS.values()) - CLASS_AVERAGE)
                                               / CLASS_SD)
    assert row.changed == 1


def test_the_question_whose_grade_changed_is_listed(graded: tuple[Path, dict[tuple[str, int], float],
                                                                  dict[str, Any]]) -> None:
    run, scripted, doc = graded
    tables = GRADE_TABLES.read(run)
    assert tables is not None
    [change] = tables.summary.changes
    q, _ = ODD
    assert (change.exam_id, change.question_id, change.configuration, change.variant) == (
        EXAM["id"], q, "baseline", "original")
    assert change.model == "mock/student" and change.grader == "judge:mock/judge"
    assert [(g.repeat, g.total) for g in change.grades] == [(r, scripted[(q, r)]) for r in range(REPEATS)]
    assert change.spread == pytest.approx(abs(sum(ODD_POINTS.values()) - sum(FULL_POINTS.values())))
    assert change.max_total == POINTS[q]
    # `mathlens grade --json` carries the same rows
    assert doc["changes"] == [change.model_dump(mode="json")]
    assert doc["table6"][0]["run_scores"] == [s.model_dump(mode="json") for s in tables.summary.table6[0].run_scores]
    csv_lines = (run / "analysis" / "grade_changes.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0].endswith("run_1,run_2,run_3,spread") and len(csv_lines) == 2


def test_grade_prints_runs_and_changes(graded: tuple[Path, dict[tuple[str, int], float], dict[str, Any]]) -> None:
    run, scripted, _ = graded
    res = CliRunner().invoke(app, ["grade", str(run), "--judge", "mock/judge", "-J",
                                   "responses=" + json.dumps([_reply(FULL_POINTS)]), "--no-cache"],
                             env={"COLUMNS": "240"})
    assert res.exit_code == 0, res.output
    # regraded with one reply for every record: no change left, and no changes table
    assert "changed between runs" not in res.output
    tables = GRADE_TABLES.read(run)
    assert tables is not None and tables.summary.changes == [] and tables.summary.table6[0].sd_percent == 0
    # regrade with the script of the fixture, printed as tables
    replies = []
    for rec in RunStore(run).records():
        replies.append(_reply(ODD_POINTS if (rec.question_id, rec.repeat) == ODD else FULL_POINTS))
    res = CliRunner().invoke(app, ["grade", str(run), "--judge", "mock/judge", "-J",
                                   "responses=" + json.dumps(replies), "--no-cache", "--final-answer", "judge"],
                           env={"COLUMNS": "240"})
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "Questions whose grade changed between runs" in out
    q, _ = ODD
    per_run = " · ".join(f"{scripted[(q, r)]:g}" for r in range(REPEATS))
    assert f"{per_run} (of {POINTS[q]:g})" in out
    assert " · ".join(f"{p:.1f}" for p in _expected_runs(scripted)) in out
    expected = _expected_runs(scripted)
    assert f"{statistics.fmean(expected):.1f} ± {statistics.stdev(expected):.1f}" in out


def test_report_scores_section_shows_runs_and_changes(
        graded: tuple[Path, dict[tuple[str, int], float], dict[str, Any]]) -> None:
    run, scripted, _ = graded
    html = make_report([run]).html()
    table6 = html.split('id="exam-scores"')[1].split("</figure>")[0]
    per_run = _expected_runs(scripted)
    assert "score in each run (%)" in table6 and "sd over runs (%)" in table6
    assert " · ".join(f"{p:.1f}" for p in per_run) in table6
    assert f"{statistics.stdev(per_run):.1f}" in table6
    changes = html.split('id="grade-changes"')[1].split("</figure>")[0]
    q, _ = ODD
    assert f"{' · '.join(f'{scripted[(q, r)]:g}' for r in range(REPEATS))} of {POINTS[q]:g}" in changes
    assert ">q2<" not in changes  # graded the same in every run


def _grade(question: str, repeat: int, total: float | None, grader: str = "judge:j") -> Grade:
    ref = RecordRef(key=f"k|{question}|{repeat}", model="m", configuration="baseline", exam_id="e",
                    question_id=question, repeat=repeat)
    return Grade(record=ref, grader=grader, status="graded" if total is not None else "ungraded", total=total,
                 max_total=10.0)


def test_an_ungraded_run_is_not_a_change_and_single_runs_have_no_sd() -> None:
    grades = [_grade("q1", 0, 4.0), _grade("q1", 1, None), _grade("q1", 2, 4.0),
              _grade("q2", 0, 6.0), _grade("q2", 1, 6.0), _grade("q2", 2, 8.0)]
    [change] = grade_changes(grades)
    assert change.question_id == "q2" and [g.total for g in change.grades] == [6.0, 6.0, 8.0]
    [row] = exam_scores(grades, [])
    assert [s.ungraded for s in row.run_scores] == [0, 1, 0]
    # the second run counts only q2: 6 of 10
    assert [(s.score, s.total) for s in row.run_scores] == [(10.0, 20.0), (6.0, 10.0), (12.0, 20.0)]
    assert row.changed == 1
    [single] = exam_scores([_grade("q1", 0, 4.0)], [])
    assert single.sd_percent is None and single.mean_percent == pytest.approx(40.0) and single.changed == 0
    assert grade_changes([_grade("q1", 0, 4.0)]) == []


def test_cohort_z_score_from_mean_and_sd() -> None:
    c = compare_with_cohort(85.0, Cohort(class_average=70.0, std=5.0, size=20))
    assert c.kind == "mean_sd" and c.z_score == pytest.approx(3.0) and c.difference == pytest.approx(15.0)
    assert compare_with_cohort(85.0, Cohort(class_average=70.0)).z_score is None


def test_grade_tables_of_schema_version_1_are_refused(tmp_path: Path) -> None:
    """A `grade_tables.jsonl` written before per-run scores (schema version 1) is refused with the
    version found and the one expected; the report notes it and leaves the tables out."""
    store = helpers.make_run(tmp_path)
    path = GRADE_TABLES.path(store.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    envelope = {"format": "mathlens.analysis", "analysis": "grade_tables", "schema_version": 1,
                "mathlens_version": "0.0.1", "run_id": "r1", "records_sha256": "", "options": {}, "entries": 0,
                "summary": {"graders": [], "table6": [], "table7": []}}
    path.write_text(json.dumps(envelope) + "\n", encoding="utf-8")
    with pytest.raises(DocumentVersionError) as caught:
        GRADE_TABLES.read(store.root)
    assert "schema version 1" in str(caught.value) and "'grade_tables' schema version 2" in str(caught.value)
    report = make_report([store.root])
    assert any("grade_tables" in n and "schema version 2" in n for n in report.notes), report.notes


