"""The grading documents (`grades`, `human_grades`, `grade_tables`, `agreement`) and the `grades`
analyzer: what is written, per configuration and variant, older layouts refused, and the report
showing what was written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.agreement_report import AGREEMENT
from mathlens.analyze.grading.grades import GRADES, HUMAN_GRADES, GradeOptions
from mathlens.analyze.grading.rubric import builtin_rubric
from mathlens.analyze.grading.tables import GRADE_TABLES
from mathlens.analyze.registry import run_one
from mathlens.cli.main import app
from mathlens.models.model import Model
from mathlens.report import make_report
from mathlens.runs.documents import DocumentSpec, DocumentVersionError, RecordRef, records_digest
from support import grading_run as helpers

CRITERIA = ("method", "execution", "final_answer", "notation", "clarity")
#: one point on every criterion: 5 points on any question of 10 points or more
FULL = json.dumps({k: {"points": 1, "rationale": "fine"} for k in CRITERIA})
#: distinct points per criterion, within the bounds of a 10-point question
MIXED_POINTS = {"method": 2.5, "execution": 3, "final_answer": 1, "notation": 0.5, "clarity": 0.5}
MIXED = json.dumps({k: {"points": v, "rationale": f"{k} judged <i>carefully</i>"} for k, v in MIXED_POINTS.items()})
POINTS = {q["id"]: float(q["points"]) for q in helpers.EXAM["questions"]}


def _grade(run: Path, reply: str, *extra: str) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["grade", str(run), "--judge", "mock/judge", "-J",
                                   f"responses={json.dumps([reply])}", *extra, "--json"])
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.stdout))


def test_analyzer_writes_typed_documents_and_closes_its_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = helpers.make_run(tmp_path)
    closed: list[str] = []
    real_close = Model.aclose

    async def counting_close(self: Model) -> None:
        closed.append(self.spec)
        await real_close(self)

    monkeypatch.setattr(Model, "aclose", counting_close)
    summary = run_one(store, "grades", {"max_tokens": 500}, judge="mock/judge",
                      judge_options={"responses": [FULL]})
    assert closed == ["mock/judge"]
    assert summary.summary is not None and summary.summary.counts == {"graded": 4, "ungraded": 0}

    doc = GRADES.read(store.root)
    assert doc is not None
    env = doc.envelope
    assert (env.analysis, env.schema_version, env.run_id, env.entries) == ("grades", 2, "r1", 4)
    assert env.records_sha256 == records_digest(store.records_path)
    assert env.options == GradeOptions(max_tokens=500).model_dump(mode="json")
    assert doc.summary.rubric == builtin_rubric()
    assert doc.summary.judge is not None and doc.summary.judge.model.spec == "mock/judge"
    assert doc.summary.judge.model.options == {"responses": [FULL]} and doc.summary.judge.max_tokens == 500
    assert {(g.configuration, g.variant, g.graded) for g in doc.summary.groups} == {("baseline", "original", 2),
                                                                                  ("rag", "original", 2)}
    refs = {r.key: RecordRef.of(r) for r in store.records()}
    grades = list(GRADES.entries(store.root))
    assert [g.record for g in grades] == list(refs.values())
    # the judge's own total is kept; the final-answer points come from the checker where it decided
    assert all((g.judge_total if g.judge_total is not None else g.total) == 5 and g.grader == "judge:mock/judge"
               for g in grades)
    assert doc.summary.reliability is not None and doc.summary.reliability.decisive == 4
    tables = GRADE_TABLES.read(store.root)
    assert tables is not None and tables.envelope.entries == 0
    assert tables.summary.graders == ["judge:mock/judge"]


def test_evidence_includes_the_flow_step_when_the_run_has_a_flow_document(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    run_one(store, "flow", {})
    flow = {e.record.key: e.result.first_invalid_step for e in FLOW.entries(store.root) if e.result is not None}
    assert any(step is not None for step in flow.values()), "one scripted response has an invalid step"
    run_one(store, "grades", {"with_evidence": True}, judge="mock/judge", judge_options={"responses": [FULL]})
    for g in GRADES.entries(store.root):
        assert g.evidence is not None and g.evidence.flow_checked
        assert g.evidence.first_invalid_step == flow[g.record.key]


def test_configurations_and_variants_get_separate_figures(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path, ablation=True)
    variant = helpers.ABLATION.name

    # by default only the original prompts are graded (the judge alone here: this is about the rows)
    _grade(store.root, FULL, "--final-answer", "judge")
    assert all(g.record.original for g in GRADES.entries(store.root))
    tables = GRADE_TABLES.read(store.root)
    assert tables is not None and {r.variant for r in tables.summary.table6} == {"original"}

    doc = _grade(store.root, FULL, "--all-variants", "--final-answer", "judge")
    graded = list(GRADES.entries(store.root))
    assert len(graded) == 6 and sum(not g.record.original for g in graded) == 2
    tables = GRADE_TABLES.read(store.root)
    assert tables is not None
    rows = {(r.configuration, r.variant): r for r in tables.summary.table6}
    assert set(rows) == {("baseline", "original"), ("rag", "original"), ("baseline", variant), ("rag", variant)}
    per_question = 5.0  # FULL: one point on each of five criteria
    for conf in ("baseline", "rag"):
        original, ablated = rows[(conf, "original")], rows[(conf, variant)]
        assert (original.score, original.total, original.questions, original.repeats) == (
            2 * per_question, POINTS["q1"] + POINTS["q2"], 2, 1)
        # the variant row holds only the variant's question, and its one grade (not pooled with q1's original)
        assert (ablated.score, ablated.total, ablated.questions, ablated.repeats) == (
            per_question, POINTS["q1"], 1, 1)
        assert ablated.variant_kind == "ablation" and not ablated.original
        assert ablated.percent == pytest.approx(100 * per_question / POINTS["q1"])
        assert original.percent == pytest.approx(100 * 2 * per_question / (POINTS["q1"] + POINTS["q2"]))
    # Table 7 compares configurations on the original prompts only
    assert [(r.configuration, r.variant) for r in tables.summary.table7] == [
        ("student average", "original"), ("baseline", "original"), ("rag", "original")]
    summary = GRADES.read(store.root)
    assert summary is not None
    assert {(g.configuration, g.variant): g.graded for g in summary.summary.groups} == {
        ("baseline", "original"): 2, ("rag", "original"): 2, ("baseline", variant): 1, ("rag", variant): 1}
    assert {(r["configuration"], r["variant"]) for r in doc["table6"]} == set(rows)
    header = (store.analysis_dir / "table6.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:5] == ["exam", "model", "configuration", "variant", "grader"]


def test_worksheet_carries_the_variant_and_imports_variant_grades(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path, ablation=True)
    sheet = tmp_path / "sheet.csv"
    res = CliRunner().invoke(app, ["grade", str(store.root), "--export-worksheet", str(sheet), "--all-variants",
                                   "--json"])
    assert res.exit_code == 0, res.output
    with sheet.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 * len(CRITERIA) and {r["variant"] for r in rows} == {"original", helpers.ABLATION.name}
    for row in rows:
        row["points"] = row["max_points"]
    filled = tmp_path / "ann.csv"
    with filled.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    res = CliRunner().invoke(app, ["grade", str(store.root), "--import-human", str(filled), "--json"])
    assert res.exit_code == 0, res.output
    humans = list(HUMAN_GRADES.entries(store.root))
    assert sum(not g.record.original for g in humans) == 2
    tables = GRADE_TABLES.read(store.root)
    assert tables is not None
    ablated = [r for r in tables.summary.table6 if not r.original]
    assert {r.configuration for r in ablated} == {"baseline", "rag"}
    assert all((r.score, r.total, r.percent) == (POINTS["q1"], POINTS["q1"], 100.0) for r in ablated)


def _old_grades_json(store: Any) -> dict[str, Any]:
    """`analysis/grades.json` as mathlens wrote it before analysis documents (GradesFile)."""
    rec = next(store.records())
    return {
        "rubric": builtin_rubric().model_dump(mode="json"), "grader_kind": "judge", "judge": "mock/judge",
        "judge_options": {"with_evidence": False, "max_tokens": 768, "temperature": 0.0, "seed": 1234, "runs": 1,
                          "identity": {"provider": "mock", "model": "judge"}},
        "grades": [{"key": rec.key, "model": rec.model, "configuration": rec.configuration,
                    "exam_id": rec.exam_id, "question_id": rec.question_id, "repeat": rec.repeat,
                    "grader": "judge:mock/judge", "judge_run": 0, "status": "graded",
                    "criteria": [{"criterion": c, "points": 1.0, "max_points": 1.0, "rationale": "ok"}
                                 for c in CRITERIA],
                    "total": 5.0, "max_total": 10.0, "evidence": None, "error": "", "raw": []}],
    }


def test_old_layout_grades_are_refused_with_the_file_and_version(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    old = store.analysis_dir / "grades.json"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(json.dumps(_old_grades_json(store)), encoding="utf-8")

    with pytest.raises(DocumentVersionError) as caught:
        GRADES.read(store.root)
    message = str(caught.value)
    expected = f"'grades' schema version {GRADES.version}"
    assert str(old) in message and expected in message and "mathlens grade RUN" in message
    with pytest.raises(DocumentVersionError, match=re.escape(f"{old}:") + f".*{expected}"):
        list(GRADES.entries(store.root))
    res = CliRunner().invoke(app, ["agreement", str(store.root)])
    assert res.exit_code == 2, res.output
    assert "grades.json:" in res.output and f"'grades' schema version {GRADES.version}" in " ".join(res.output.split())
    # the report notes the file (and the version it expects) and leaves out what the grades would show
    report = make_report([store.root])
    [note] = [n for n in report.notes if "grades.json" in n]
    assert f"{old}:" in note and f"'grades' schema version {GRADES.version}" in note
    assert "scores" not in {s.id for s in report.sections}
    assert "Rubric points" not in report.html()

    # grading again rewrites the run's grades in the current layout
    _grade(store.root, FULL)
    assert not old.exists() and GRADES.read(store.root) is not None


V1 = Path(__file__).resolve().parents[1] / "cases" / "judging"


@pytest.mark.parametrize("name", ["grades", "human_grades", "agreement"])
def test_first_schema_version_documents_are_refused_and_rewritten(tmp_path: Path, name: str) -> None:
    """`analysis/<name>.jsonl` as mathlens wrote it before the judging core (schema version 1, with
    `criteria` per grade and `kappa_quadratic` per agreement pair) is refused, naming both versions;
    grading and the agreement command rewrite it."""
    store = helpers.make_run(tmp_path)
    specs: dict[str, DocumentSpec[Any, Any]] = {"grades": GRADES, "human_grades": HUMAN_GRADES, "agreement": AGREEMENT}
    spec = specs[name]
    old = spec.path(store.root)
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes((V1 / f"v1_{name}.jsonl").read_bytes())
    assert spec.version == 2
    with pytest.raises(DocumentVersionError, match=re.escape(f"{old}: schema version 1") + ".*"
                       + re.escape(f"reads '{name}' schema version 2")):
        spec.read(store.root)
    # the report names the file and both versions, and shows nothing from it
    report = make_report([store.root])
    assert any(f"{old}: schema version 1" in n and f"'{name}' schema version 2" in n
               for n in report.notes), report.notes
    if name == "human_grades":
        # an import merges with the stored grades, so it refuses rather than drop what it cannot read
        sheet = tmp_path / "s.csv"
        assert CliRunner().invoke(app, ["grade", str(store.root), "--export-worksheet", str(sheet)]).exit_code == 0
        with sheet.open(encoding="utf-8") as fh:
            rows = [{**r, "points": r["max_points"]} for r in csv.DictReader(fh)]
        with sheet.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        res = CliRunner().invoke(app, ["grade", str(store.root), "--import-human", str(sheet)])
        assert res.exit_code == 2 and "Move the file aside" in " ".join(res.output.split()), res.output
        assert old.read_bytes() == (V1 / "v1_human_grades.jsonl").read_bytes()
        return
    _grade(store.root, FULL, "--judge-runs", "2")
    res = CliRunner().invoke(app, ["agreement", str(store.root), "--resamples", "20", "--json"])
    assert res.exit_code == 0, res.output
    grades, doc = GRADES.read(store.root), AGREEMENT.read(store.root)
    assert grades is not None and grades.envelope.schema_version == 2
    assert doc is not None and doc.envelope.schema_version == 2
    first = doc.summary.self_agreement[0]
    assert (first.grader, first.runs, first.scope) == ("judge:mock/judge", 2, "method")


def test_old_layout_grade_tables_are_refused_by_show(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    old = store.analysis_dir / "grade_tables.json"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(json.dumps({"table6": [], "table7": []}), encoding="utf-8")
    res = CliRunner().invoke(app, ["show", str(store.root)])
    assert res.exit_code == 2, res.output
    assert "grade_tables.json:" in res.output
    assert f"'grade_tables' schema version {GRADE_TABLES.version}" in " ".join(res.output.split())


def _section(html: str, section_id: str) -> str:
    return html.split(f'id="sec-{section_id}"')[1].split("</section>")[0]


def test_report_shows_the_grades_and_tables_written(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    _grade(store.root, MIXED)
    tables = GRADE_TABLES.read(store.root)
    grades = list(GRADES.entries(store.root))
    assert tables is not None and tables.summary.table6 and grades

    report = make_report([store.root])
    html = report.html()
    table6 = html.split('id="exam-scores"')[1].split("</figure>")[0]
    for row in tables.summary.table6:
        assert f"{row.score:g}/{row.total:g}" in table6
        assert row.percent is not None and f"{row.percent:.1f}" in table6
        assert f"rubric ({row.grader})" in table6
        assert row.cohort.difference is not None and f"{row.cohort.difference:.1f}" in table6
    configurations = html.split('id="configuration-scores"')[1].split("</figure>")[0]
    assert [c for c in ("baseline", "rag") if c in configurations] == ["baseline", "rag"]

    rubric = builtin_rubric()
    for g in grades:
        assert g.total is not None
        block = html.split(f'id="q-calc1-e1-{g.record.question_id}"')[1].split('<details class="question"')[0]
        assert f"{g.total:.1f} / {g.max_total:.1f} points" in block
        for c in g.scores:
            assert rubric.criterion(c.unit).name in block
            assert c.rationale.replace("<", "&lt;").replace(">", "&gt;") in block
    assert "<i>carefully</i>" not in html  # judge text is escaped
