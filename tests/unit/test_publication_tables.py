"""Publication tables exported from a real mock-model run (flow, answers and sensitivity from their
analyzers, judge-based documents from tests/cases/report/judged.yaml): every format is parsed back
and its values compared with the documents read through their specs."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.ablation.tables import MetricSummary
from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.adaptivity.tables import TUTOR_STATS, Table2ProfileRow
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.agreement_report import AGREEMENT
from mathlens.analyze.grading.tables import GRADE_TABLES, Table7Row
from mathlens.analyze.judging.agreement import AgreementReport, AgreementRow, SelfAgreement
from mathlens.analyze.maple.results import MAPLE
from mathlens.cli.main import app
from mathlens.report.export import FORMATS, TablesIndex, export_tables
from mathlens.report.loader import load_run
from mathlens.runs.documents import DocumentSpec, records_digest
from mathlens.runs.store import RunStore
from mathlens.stats.bootstrap import CI
from support import report_run as fx
from support.table_text import md_rows, tex_rows, tex_unescape

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"
HOSTILE = "a|b & 50% _x_ {y} \\z"
FORMULA = "=1+1"




@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tables") / "run"
    fx.make_run(out, [fx.WRONG, fx.SOLUTION], ablate=True)
    fx.add_judged_analyses(out)
    return out


@pytest.fixture(scope="module")
def exported(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[TablesIndex, Path]:
    folder = tmp_path_factory.mktemp("export") / "tables"
    return export_tables(load_run(run_dir), folder, FORMATS), folder


def _rewrite(spec: DocumentSpec[Any, Any], root: Path, summary: Any, entries: list[Any] | None = None) -> None:
    """Rewrite one document of a copied run through its spec (keeping its entries unless given)."""
    store = RunStore(root)
    spec.write(root, run_id=store.manifest().run_id, records_sha256=records_digest(store.records_path),
               entries=list(spec.entries(root)) if entries is None else entries, summary=summary)


def _csv(folder: Path, table_id: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((folder / f"{table_id}.csv").read_text(encoding="utf-8"))))


def _num(text: str) -> float | None:
    return float(text) if text != "" else None


# -- the index -------------------------------------------------------------------------------------

def test_index_lists_every_table_written_and_every_table_skipped(exported: tuple[TablesIndex, Path]) -> None:
    index, folder = exported
    written = {t.id for t in index.tables}
    assert {"calculus-table2-question-metrics", "calculus-table3-exam-metrics", "calculus-table6-exam-scores",
            "calculus-table8-interpretability", "grading-agreement", "maple-by-level", "maple-overall",
            "tutoring-table1-dimensions", "tutoring-table2-adaptivity", "tutoring-anova", "tutoring-anova-checks",
            "tutoring-posthoc", "tutoring-letters"} == written
    skipped = {s.id: s for s in index.skipped}
    # judged.yaml has no Table 7 rows, no self-agreement, no subject rows, no tutoring agreement document, no
    # tutoring Table 2 split by learner profile
    assert set(skipped) == {"calculus-table7-configurations", "grading-self-agreement", "maple-by-subject",
                            "tutoring-agreement", "tutoring-self-agreement", "tutoring-table2-profiles"}
    assert "no rows" in skipped["tutoring-table2-profiles"].reason
    assert "no rows" in skipped["maple-by-subject"].reason and skipped["maple-by-subject"].source == "maple"
    assert "no tutor_agreement analysis" in skipped["tutoring-agreement"].reason
    assert "mathlens tutor agreement RUN" in skipped["tutoring-agreement"].reason
    on_disk = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    assert TablesIndex.model_validate(on_disk) == index
    for t in index.tables:
        assert set(t.files) == set(FORMATS)
        for name in t.files.values():
            assert (folder / name).is_file()
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["index.json", *(n for t in index.tables for n in t.files.values())])


# -- values against the documents ----------------------------------------------------------------

def test_table8_csv_holds_each_metric_with_its_spread_and_interval(run_dir: Path,
                                                                   exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    doc = SENSITIVITY.read(run_dir)
    assert doc is not None and doc.summary.exams
    rows = _csv(folder, "calculus-table8-interpretability")
    assert len(rows) == len(doc.summary.exams)
    for row, exam in zip(rows, doc.summary.exams, strict=True):
        assert row["Exam"] == exam.exam and row["Course"] == exam.course
        assert row["Configuration"] == {"baseline": "B", "rag": "R", "contextual": "C"}[exam.configuration]
        for header, metric in (("Robustness", exam.robustness), ("Complexity", exam.complexity),
                               ("Step count", exam.step_count), ("Phrase sensitivity", exam.phrase_sensitivity)):
            assert _num(row[header]) == metric.mean
            assert _num(row[f"{header} sd"]) == metric.sd
            assert _num(row[f"{header} CI low"]) == metric.ci_low
            assert _num(row[f"{header} CI high"]) == metric.ci_high
            assert int(row[f"{header} n"]) == metric.n


def test_table8_markdown_and_latex_show_mean_and_sd(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    doc = SENSITIVITY.read(run_dir)
    assert doc is not None
    exam = doc.summary.exams[0]
    body = md_rows((folder / "calculus-table8-interpretability.md").read_text(encoding="utf-8"))[2:]
    rob = exam.robustness
    assert rob.mean is not None and rob.sd is not None
    assert body[0][:4] == [exam.course, exam.exam, "B", f"{rob.mean:.3f} ± {rob.sd:.3f}"]
    tex = tex_rows((folder / "calculus-table8-interpretability.tex").read_text(encoding="utf-8"))
    assert tex[0] == ["Course", "Exam", "Configuration", "Robustness", "Complexity", "Step count",
                      "Phrase sensitivity"]
    assert tex_unescape(tex[1][3]) == f"{rob.mean:.3f} ± {rob.sd:.3f}"


def test_table2_rows_are_the_sensitivity_entries(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    entries = {(q.question_id, q.configuration): q for q in SENSITIVITY.entries(run_dir)}
    rows = _csv(folder, "calculus-table2-question-metrics")
    assert {(r["Question"], r["Configuration"]) for r in rows} == set(entries)
    patterns = {(f.record.question_id, f.record.configuration): ", ".join(f.result.metrics.reasoning_pattern)
                for f in FLOW.entries(run_dir) if f.record.original and f.result is not None}
    for r in rows:
        q = entries[(r["Question"], r["Configuration"])]
        assert _num(r["Robustness"]) == q.robustness
        assert _num(r["Phrase sensitivity"]) == q.phrase_sensitivity
        assert _num(r["Step count"]) == q.step_count and _num(r["Complexity"]) == q.complexity
        assert _num(r["Impact factor"]) == (q.impact[0].impact if q.impact else None)
        assert r["Reasoning pattern"] == patterns[(q.question_id, q.configuration)]


def test_table3_rows_are_the_flow_exam_rows(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    doc = FLOW.read(run_dir)
    assert doc is not None
    rows = _csv(folder, "calculus-table3-exam-metrics")
    assert [(r["Configuration"], int(r["Responses"])) for r in rows] == [
        (e.configuration, e.responses) for e in doc.summary.exams]
    for r, e in zip(rows, doc.summary.exams, strict=True):
        assert _num(r["Step count"]) == e.mean_steps
        assert _num(r["Complexity"]) == e.mean_complexity and _num(r["Complexity sd"]) == e.sd_complexity


def test_table6_score_ratio_and_class_average(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    doc = GRADE_TABLES.read(run_dir)
    assert doc is not None
    (expected,) = doc.summary.table6
    (row,) = _csv(folder, "calculus-table6-exam-scores")
    assert row["Exam"] == expected.exam_name and row["Course"] == "Calculus III"
    assert (_num(row["Score"]), _num(row["Score total"])) == (expected.score, expected.total)
    assert _num(row["Score (%)"]) == expected.percent
    assert _num(row["Class average (%)"]) == expected.cohort.class_average
    assert int(row["Ungraded questions"]) == expected.ungraded
    assert expected.repeats == 1 and "Runs" not in row and "SD over runs (%)" not in row  # one run: no spread
    md = md_rows((folder / "calculus-table6-exam-scores.md").read_text(encoding="utf-8"))
    assert md[2][md[0].index("Score")] == f"{expected.score:g}/{expected.total:g}"


def test_maple_and_agreement_intervals(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    maple = MAPLE.read(run_dir)
    agreement = AGREEMENT.read(run_dir)
    assert maple is not None and agreement is not None
    (level,) = _csv(folder, "maple-by-level")
    (expected,) = maple.summary.by_level
    assert level["Level"] == expected.group and int(level["Solutions"]) == expected.n
    for header, ci in (("Accuracy", expected.accuracy), ("MAPLE", expected.mean_maple)):
        assert (_num(level[header]), _num(level[f"{header} CI low"]), _num(level[f"{header} CI high"])) == (
            ci.estimate, ci.low, ci.high)
    (pair,) = _csv(folder, "grading-agreement")
    (p,) = agreement.summary.pairs
    assert (pair["Grader A"], pair["Grader B"], pair["Scope"]) == (p.a, p.b, p.scope)
    # which kappa and alpha were computed is named in the header when every row used the same
    assert _num(pair[f"Cohen's κ ({'unweighted' if p.kappa_weights == 'none' else p.kappa_weights})"]) == \
        p.kappa.estimate
    assert _num(pair[f"Krippendorff's α ({p.alpha_level}) CI low"]) == p.alpha.low
    assert p.mae is not None and _num(pair["Mean absolute error (points) CI high"]) == p.mae.high


def test_tutoring_tables_pivot_as_in_the_study(run_dir: Path, exported: tuple[TablesIndex, Path]) -> None:
    _, folder = exported
    doc = TUTOR_STATS.read(run_dir)
    assert doc is not None
    (st,) = doc.summary.sources
    t1 = _csv(folder, "tutoring-table1-dimensions")
    assert [(r["Model"], r["Learner performance"]) for r in t1] == [(x.model, x.performance) for x in st.table1]
    for r, x in zip(t1, st.table1, strict=True):
        assert _num(r["Adaptivity (%)"]) == x.mean_percent.estimate
        assert _num(r["Adaptivity (%) CI low"]) == x.mean_percent.low and int(r["Adaptivity (%) n"]) == x.n
    t2 = _csv(folder, "tutoring-table2-adaptivity")
    assert [(r["Aspect"], r["Sub-metric"]) for r in t2] == [("Cognitive", "CK"), ("Motivational", "LA")]
    assert [_num(r["G1"]) for r in t2] == [x.percent_satisfied for x in st.table2]
    anova = st.anova["adaptivity"]["performance x model"]
    (term,) = _csv(folder, "tutoring-anova")
    effect = anova.effect("performance")
    assert (term["Term"], _num(term["F"]), _num(term["p"]), _num(term["Partial η²"])) == (
        "performance", effect.F, effect.p, effect.partial_eta_sq)
    (pair,) = _csv(folder, "tutoring-posthoc")
    ph = anova.posthoc[0]
    assert pair["Comparison"] == f"{ph.pairs[0].b} - {ph.pairs[0].a}"
    assert _num(pair["Adjusted p"]) == ph.pairs[0].p_adj and pair["Significant"] == "yes"
    letters = _csv(folder, "tutoring-letters")
    assert {r["Group"]: (r["Letters"], _num(r["Mean (%)"])) for r in letters} == {
        g: (ph.letters[g], ph.means[g]) for g in ph.means}


def test_every_markdown_and_latex_table_has_the_shape_of_its_csv(exported: tuple[TablesIndex, Path]) -> None:
    index, folder = exported
    for t in index.tables:
        md = md_rows((folder / t.files["markdown"]).read_text(encoding="utf-8"))
        tex_text = (folder / t.files["latex"]).read_text(encoding="utf-8")
        tex = tex_rows(tex_text)
        ncols = len(md[0])
        assert len(md) - 2 == t.rows == len(tex) - 1 == len(_csv(folder, t.id)), t.id
        assert all(len(r) == ncols for r in md), t.id
        assert all(len(r) == ncols for r in tex), t.id
        assert [tex_unescape(h) for h in tex[0]] == md[0], t.id
        assert tex_text.count(r"\toprule") == tex_text.count(r"\bottomrule") == 1, t.id
        spec = re.search(r"\\begin\{tabular\}\{([lr]+)\}", tex_text)
        assert spec is not None and len(spec.group(1)) == ncols, t.id
        assert f"\\label{{tab:{t.id}}}" in tex_text


# -- B/R/C layout ------------------------------------------------------------------------------

def _metric(mean: float, sd: float) -> MetricSummary:
    return MetricSummary(mean=mean, sd=sd, ci_low=mean - sd, ci_high=mean + sd, n=3, status="ok")


def test_table8_lays_out_b_r_c_under_each_course_and_exam(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    doc = SENSITIVITY.read(run)
    assert doc is not None
    base = doc.summary.exams[0]
    rows = []
    # written out of the study's order, two exams of one course and one of another
    for course, exam, exam_id in (("Calculus II", "Exam 2", "c2e2"), ("Calculus I", "Exam 1", "c1e1"),
                                  ("Calculus I", "Exam 2", "c1e2")):
        for k, conf in enumerate(("contextual", "baseline", "rag")):
            rows.append(base.model_copy(update={
                "course": course, "exam": exam, "exam_id": exam_id, "configuration": conf,
                "robustness": _metric(0.7 + k / 100, 0.05), "complexity": _metric(18.0 + k, 1.0),
                "step_count": _metric(6.0, 0.5), "phrase_sensitivity": _metric(0.4, 0.02)}))
    _rewrite(SENSITIVITY, run, doc.summary.model_copy(update={"exams": rows}))
    folder = tmp_path / "out"
    export_tables(load_run(run), folder, ("latex", "markdown", "csv"))
    md = md_rows((folder / "calculus-table8-interpretability.md").read_text(encoding="utf-8"))[2:]
    assert [r[:3] for r in md] == [
        ["Calculus I", "Exam 1", "B"], ["", "", "R"], ["", "", "C"],
        ["", "Exam 2", "B"], ["", "", "R"], ["", "", "C"],
        ["Calculus II", "Exam 2", "B"], ["", "", "R"], ["", "", "C"]]
    assert md[0][3] == "0.710 ± 0.050" and md[2][3] == "0.700 ± 0.050"  # baseline was k=1, contextual k=0
    tex = (folder / "calculus-table8-interpretability.tex").read_text(encoding="utf-8")
    body = tex.split(r"\midrule", 1)[1]
    assert body.count(r"\midrule") == 1 and body.count(r"\addlinespace") == 1  # new course; new exam
    assert re.search(r"\\addlinespace\n\s+ & Exam 2 & B &", tex)
    assert re.search(r"\\midrule\n\s+Calculus II & Exam 2 & B &", tex)
    csv_rows = _csv(folder, "calculus-table8-interpretability")
    assert [(r["Course"], r["Exam"], r["Configuration"]) for r in csv_rows][3:6] == [
        ("Calculus I", "Exam 2", c) for c in "BRC"]  # every CSV row carries its labels


# -- hostile text, more tables, stale files, old layouts ---------------------------------------------

def test_hostile_names_are_escaped_in_every_format(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    doc = GRADE_TABLES.read(run)
    assert doc is not None
    row = doc.summary.table6[0].model_copy(update={"exam_name": HOSTILE, "repeats": 5, "sd_percent": 2.5,
                                                   "changed": 1})
    t7 = [Table7Row(exam_id=row.exam_id, exam=HOSTILE, configuration="student average", percent=78.0, kind="class"),
          Table7Row(exam_id=row.exam_id, exam=HOSTILE, configuration="baseline", model="mock/report",
                    grader=FORMULA, percent=28.3),
          Table7Row(exam_id=row.exam_id, exam=HOSTILE, configuration="rag", model="mock/report",
                    grader="judge:b", percent=30.0)]
    _rewrite(GRADE_TABLES, run, doc.summary.model_copy(update={"table6": [row], "table7": t7}))
    folder = tmp_path / "out"
    index = export_tables(load_run(run), folder, FORMATS)
    assert "calculus-table7-configurations" in {t.id for t in index.tables}
    rows = _csv(folder, "calculus-table7-configurations")
    assert [r["Exam"] for r in rows] == [HOSTILE] * 3
    assert [r["Grader"] for r in rows] == ["", "'" + FORMULA, "judge:b"]  # the formula is defused
    assert [r["Model configuration"] for r in rows] == ["Student average", "mock/report (baseline)",
                                                       "mock/report (rag)"]
    md = md_rows((folder / "calculus-table7-configurations.md").read_text(encoding="utf-8"))
    assert md[2] == [HOSTILE, "Student average", "–", "78.0"] and md[3][0] == ""
    assert md[3][2] == FORMULA
    tex_text = (folder / "calculus-table7-configurations.tex").read_text(encoding="utf-8")
    tex = tex_rows(tex_text)
    assert tex[1][0] == r"a\textbar{}b \& 50\% \_x\_ \{y\} \textbackslash{}z"
    assert all(len(r) == 4 for r in tex)
    t6 = _csv(folder, "calculus-table6-exam-scores")[0]
    assert t6["Exam"] == HOSTILE
    # repeated runs: their number, the spread of their scores, the questions graded differently
    assert (t6["Runs"], t6["SD over runs (%)"], t6["Questions graded differently across runs"]) == ("5", "2.5", "1")
    assert tex_unescape(tex_rows((folder / "calculus-table6-exam-scores.tex").read_text(encoding="utf-8"))[1][1]) \
        == HOSTILE


def test_tutoring_agreement_and_annotator_tables(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    stats = TUTOR_STATS.read(run)
    assert stats is not None
    judge = stats.summary.sources[0]
    res = judge.anova["adaptivity"]["performance x model"]
    split = Table2ProfileRow(model="mock/report", condition=None, profile="g4-low", grade=4, performance="low",
                             attitude="dislikes", self_efficacy="low", code="SE", item_id="Q3", scored=3, applicable=2,
                             satisfied=1, percent_satisfied=50.0)
    human = judge.model_copy(update={"source": "human:alice", "table2_profiles": [split], "anova": {"adaptivity": {
        "performance x model": res.model_copy(update={"reported": "nonparametric"})}}})
    _rewrite(TUTOR_STATS, run, stats.summary.model_copy(update={"sources": [judge, human]}))
    ci = CI(estimate=0.5, low=0.25, high=0.75, n=4)
    selfs = SelfAgreement(grader="judge:mock/judge", runs=3, scope="adaptivity", units=9, alpha_level="ordinal",
                          alpha=CI(estimate=0.9, low=0.8, high=1.0, n=9), identical_share=0.75)
    rows = [AgreementRow(a="judge:mock/judge", b="human:alice", scope=scope, unit=unit, n=4, kappa_weights=weights,
                         alpha_level="ordinal", percent=ci, kappa=CI(estimate=0.2, low=None, high=None, n=4), alpha=ci)
            for scope, unit, weights in (("Q2", "response", "linear"), ("adaptivity", "response x item", "none"))]
    store = RunStore(run)
    TUTOR_AGREEMENT.write(run, run_id=store.manifest().run_id, records_sha256=records_digest(store.records_path),
                          entries=[], summary=AgreementReport(rubric="v1", graders=["judge:mock/judge", "human:alice"],
                                                              pairs=rows, self_agreement=[selfs]))
    folder = tmp_path / "out"
    index = export_tables(load_run(run), folder, ("csv",))
    ids = {t.id for t in index.tables}
    assert {"tutoring-table1-dimensions", "tutoring-table1-dimensions-human-alice", "tutoring-agreement"} <= ids
    human_t1 = next(t for t in index.tables if t.id == "tutoring-table1-dimensions-human-alice")
    assert "human:alice" in human_t1.title
    # the judge's ANOVA reports the usual analysis (no column); the annotator's the rank-based one
    assert "Reported" not in _csv(folder, "tutoring-anova")[0]
    assert _csv(folder, "tutoring-anova-human-alice")[0]["Reported"] == "nonparametric"
    # only the annotator's statistics hold Table 2 by learner profile: one learner, one sub-metric, pooled
    assert "tutoring-table2-profiles" not in ids
    (row,) = _csv(folder, "tutoring-table2-profiles-human-alice")
    assert (row["Learner"], row["Aspect"], row["Sub-metric"], row["All"], row["All n"]) == (
        "g4-low", "Motivational", "SE", "50.0", "2")
    item, dimension = _csv(folder, "tutoring-agreement")
    assert (item["Scope"], item["Unit"], int(item["n"]), _num(item["Cohen's κ"])) == ("Q2", "response", 4, 0.2)
    assert (dimension["Scope"], dimension["Unit"]) == ("adaptivity", "response x item")
    # the rows used different kappas, so the weights get their own column; alpha's level is one, in the header
    assert (item["κ weights"], dimension["κ weights"]) == ("linear", "unweighted")
    assert _num(item["Krippendorff's α (ordinal)"]) == 0.5
    assert item["Cohen's κ CI low"] == "" and _num(item["Agreement (share) CI high"]) == 0.75
    assert "Mean absolute error (points)" not in item  # an ordinal rubric has no MAE
    (own,) = _csv(folder, "tutoring-self-agreement")
    assert (own["Grader"], int(own["Runs"]), own["Scope"], int(own["Units"])) == (
        "judge:mock/judge", 3, "adaptivity", 9)
    assert (_num(own["Krippendorff's α (ordinal)"]), _num(own["Krippendorff's α (ordinal) CI low"]),
            _num(own["Identical scores (share)"])) == (0.9, 0.8, 0.75)


def test_a_second_export_removes_only_the_files_it_wrote_before(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    folder = tmp_path / "out"
    export_tables(load_run(run), folder, ("markdown",))
    assert (folder / "maple-by-level.md").is_file()
    (folder / "notes.md").write_text("mine", encoding="utf-8")
    MAPLE.path(run).unlink()
    index = export_tables(load_run(run), folder, ("markdown",))
    assert not (folder / "maple-by-level.md").exists() and not (folder / "maple-overall.md").exists()
    assert (folder / "notes.md").read_text(encoding="utf-8") == "mine"
    assert {s.id for s in index.skipped} >= {"maple-by-level", "maple-by-subject", "maple-overall"}


def test_an_old_layout_document_is_skipped_with_a_note(run_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    MAPLE.path(run).unlink()
    MAPLE.legacy_path(run).write_text(json.dumps({"overall": [], "by_level": []}), encoding="utf-8")
    index = export_tables(load_run(run), tmp_path / "out", ("csv",))
    skipped = {s.id: s.reason for s in index.skipped}
    assert "could not be read" in skipped["maple-by-level"]
    assert any("maple.json" in n and f"schema version {MAPLE.version}" in n for n in index.notes)
    assert "calculus-table8-interpretability" in {t.id for t in index.tables}  # the others still export


# -- the command line -----------------------------------------------------------------------------

def test_cli_report_tables_markdown(run_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "md"
    res = CliRunner().invoke(app, ["report", str(run_dir), "--tables", "markdown", "--out", str(folder), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["out"] == str(folder) and doc["formats"] == ["markdown"]
    files = sorted(p.name for p in folder.glob("*.md"))
    assert files == sorted(t["files"]["markdown"] for t in doc["tables"])
    assert "calculus-table8-interpretability.md" in files and not list(folder.glob("*.csv"))
    assert "calculus-table7-configurations" in {s["id"] for s in doc["skipped"]}
    text = CliRunner().invoke(app, ["report", str(run_dir), "--tables", "md,tex", "--out", str(folder)])
    assert text.exit_code == 0, text.output
    assert "not exported" in text.output and (folder / "calculus-table8-interpretability.tex").is_file()
    assert not (run_dir / "report.html").exists()  # --tables writes no page


def test_cli_report_tables_refuses_bad_input(run_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["report", str(run_dir), "--tables", "docx"])
    assert bad.exit_code == 2 and "unknown table format 'docx'" in bad.output
    two = runner.invoke(app, ["report", str(run_dir), str(run_dir), "--tables", "csv"])
    assert two.exit_code == 2 and "one run" in two.output
    afile = tmp_path / "file.txt"
    afile.write_text("x", encoding="utf-8")
    clash = runner.invoke(app, ["report", str(run_dir), "--tables", "csv", "--out", str(afile)])
    assert clash.exit_code == 2 and "is a file" in clash.output


def test_cli_report_without_tables_still_writes_the_page(run_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(page), "--sections", "overview", "--json"])
    assert res.exit_code == 0, res.output
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert not (tmp_path / "tables").exists()
