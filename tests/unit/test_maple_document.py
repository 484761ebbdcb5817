"""The MAPLE document: figures per (model, configuration, variant), the refusal of the old
`analysis/maple.json` layout, and the step judge's own options."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.maple.results import MAPLE, SolutionMaple
from mathlens.analyze.registry import run_one
from mathlens.cli.main import app
from mathlens.models.base import GenerateConfig, Message
from mathlens.report.loader import load_run
from mathlens.runs.documents import DocumentVersionError
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord, Variant
from mathlens.runs.store import RunStore

MODEL = "mock/solver"
#: MATH-style problems: id, question, answer, level, subject
PROBLEMS = [("q1", "What is 2 + 3?", "5", "Level 1", "Algebra"),
            ("q2", "What is 4 * 6?", "24", "Level 2", "Prealgebra")]
RIGHT = {"q1": "2 + 3 = 5. Final answer: 5", "q2": "4 * 6 = 24. Final answer: 24"}
WRONG = {"q1": "2 + 3 = 6. Final answer: 6", "q2": "4 * 6 = 20. Final answer: 20"}
NUMBER_1 = Variant(name="number-1", kind="ablation", element_type="number", element_text="2",
                   question_text="What is 7 + 3?")
#: (configuration, variant, question) -> response. Baseline answers both originals right, RAG gets
#: q1 wrong, and the ablated prompts are both answered wrong: three cells with different accuracy.
RESPONSES = {
    ("baseline", "original", "q1"): RIGHT["q1"], ("baseline", "original", "q2"): RIGHT["q2"],
    ("rag", "original", "q1"): WRONG["q1"], ("rag", "original", "q2"): RIGHT["q2"],
    ("baseline", "number-1", "q1"): WRONG["q1"], ("baseline", "number-1", "q2"): WRONG["q2"],
}


def judge(messages: list[Message]) -> str:
    """Labels the first step of every solution it is shown a calculation error."""
    return json.dumps({"erroneous_steps": [{"step": 1, "labels": ["calculation_error"], "reason": "slip"}],
                       "validity": 0.5, "redundancy": 0.5})


def write_run(root: Path) -> RunStore:
    """A finished run (written record by record) with two configurations and an ablation variant."""
    data = root / "math.jsonl"
    root.mkdir(parents=True, exist_ok=True)
    data.write_text("\n".join(json.dumps({"problem": q, "answer": a, "level": lvl, "subject": subj, "unique_id": qid,
                                          "solution": f"The answer is $\\boxed{{{a}}}$."})
                              for qid, q, a, lvl, subj in PROBLEMS) + "\n")
    store = RunStore(root / "run")
    now = datetime.now(UTC)
    store.write_manifest(Manifest(
        run_id="grouped", mathlens_version="test", created_at=now, items=[ItemSource(source=str(data))],
        models=[ModelEntry(spec=MODEL)], configurations=["baseline", "rag"], generate=GenerateConfig(),
        system_role="Solve it."))
    (exam,) = store.exams()
    for (conf, variant_name, qid), text in RESPONSES.items():
        variant = NUMBER_1 if variant_name == "number-1" else Variant()
        store.append(RunRecord(
            key=f"{MODEL}|{conf}|{exam.id}|{qid}|{variant_name}|r0", model=MODEL, configuration=conf,
            exam_id=exam.id, question_id=qid, variant=variant, messages=[Message(role="user", content=qid)],
            config=GenerateConfig(), request_hash="h", content_hash="c", response=text, finish_reason="stop",
            created_at=now))
    store.close()
    return store


def test_each_configuration_and_variant_gets_its_own_figures(tmp_path: Path) -> None:
    store = write_run(tmp_path)
    # v and r from the judge (0.5 each), so every wrong answer scores above 0
    run_one(store, "maple", {"reflect": False, "vr_source": "judge", "boot": {"n_resamples": 100}},
            judge="mock/judge", judge_options={"func": judge}, no_cache=True)
    doc = MAPLE.read(store.root)
    assert doc is not None
    summary = doc.summary
    entries = list(MAPLE.entries(store.root))
    assert len(entries) == len(RESPONSES) == doc.envelope.entries
    # Every entry carries its record's configuration and variant.
    assert {(e.record.configuration, e.record.variant, e.record.question_id) for e in entries} == set(RESPONSES)
    # Expected figures computed here from the responses and the entries, cell by cell.
    cells = [(MODEL, "baseline", "original"), (MODEL, "baseline", "number-1"), (MODEL, "rag", "original")]
    assert summary.cells == cells

    def members(cell: tuple[str, str, str], level: int | None = None) -> list[SolutionMaple]:
        return [e for e in entries if e.record.group == cell and (level is None or e.level == level)]

    def accuracy(cell: tuple[str, str, str], level: int | None = None) -> float:
        _, conf, variant = cell
        mine = members(cell, level)
        return sum(RESPONSES[(conf, variant, e.record.question_id)] == RIGHT[e.record.question_id]
                   for e in mine) / len(mine)

    overall = {r.cell: r for r in summary.overall}
    assert [overall[c].accuracy.estimate for c in cells] == [1.0, 0.0, 0.5]
    assert [accuracy(c) for c in cells] == [1.0, 0.0, 0.5]
    for cell in cells:
        row = overall[cell]
        mine = members(cell)
        assert row.n == len(mine) == 2
        assert row.mean_maple.estimate == pytest.approx(sum(e.maple or 0.0 for e in mine) / len(mine))
        assert row.label_counts == ({"calculation_error": sum(e.answer_status != "correct" for e in mine)}
                                    if any(e.answer_status != "correct" for e in mine) else {})
    assert (overall[cells[1]].mean_maple.estimate or 0.0) > 0 and overall[cells[0]].mean_maple.estimate == 0.0
    # Figure 3 (by level): one series per cell; level 1 is not the pooled 1/3 of the three cells.
    points = {(p.configuration, p.variant, p.x): p for p in summary.figure3.points}
    assert set(points) == {(c, v, x) for _, c, v in cells for x in ("1", "2")}
    for _, conf, variant in cells:
        for level in (1, 2):
            assert points[(conf, variant, str(level))].accuracy == accuracy((MODEL, conf, variant), level)
    assert points[("rag", "original", "1")].accuracy == 0.0 and points[("baseline", "original", "1")].accuracy == 1.0
    assert {(p.configuration, p.variant) for p in summary.figure5.points} == {(c, v) for _, c, v in cells}
    # The CSV tables keep the cells apart too.
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_level.csv").open()))
    assert [(r["configuration"], r["variant"], r["group"]) for r in rows] == [
        (c, v, x) for _, c, v in cells for x in ("1", "2")]


#: `analysis/maple.json` as mathlens wrote it before analysis documents (abridged: one solution).
OLD_LAYOUT = {
    "run_id": "grouped", "judge": "mock/judge", "reflector": "the solving model", "variant": "printed",
    "vr_source": "flow", "floor": 0.05, "options": {"judge": "mock/judge", "variant": "printed"},
    "labels": {"id": "maple-default", "version": 1, "source": "default", "labels": [
        {"id": "calculation_error", "name": "Calculation error", "definition": "a slip", "severity": 1,
         "weight": 1.0}]},
    "solutions": [{"key": f"{MODEL}|baseline|math|q1|original|r0", "model": MODEL, "exam_id": "math",
                   "question_id": "q1", "variant": "original", "repeat": 0, "level": 1, "subject": "Algebra",
                   "answer_status": "correct", "maple": 0.0, "e": 0.0, "status": "ok"}],
    "overall": [], "by_level": [], "by_subject": [],
    "figure3": [{"model": MODEL, "level": "1", "n": 1, "accuracy": 1.0, "maple": 0.0}], "figure5": [],
    "label_totals": {}, "include_degenerate": False, "excluded_degenerate": 0, "discovery": None, "seconds": 1.0,
}


def test_an_old_layout_file_is_refused_with_its_name_and_the_version_read(tmp_path: Path) -> None:
    store = write_run(tmp_path)
    old = store.analysis_dir / "maple.json"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(json.dumps(OLD_LAYOUT), encoding="utf-8")
    (store.analysis_dir / "maple_figure3.json").write_text(json.dumps({"x": "level", "points": []}))
    messages = []
    for read in (lambda: MAPLE.read(store.root), lambda: list(MAPLE.entries(store.root))):
        with pytest.raises(DocumentVersionError) as err:
            read()
        messages.append(str(err.value))
    # The report skips the section and carries the same message as a note.
    run = load_run(store.root)
    assert run.document(MAPLE) is None and run.entry(MAPLE, next(store.records()).key) is None
    (note,) = [n for n in run.notes if "maple" in n]
    messages.append(note)
    for message in messages:
        assert str(old) in message and f"schema version {MAPLE.version}" in message
        assert "mathlens maple RUN" in message
    # Re-running the analysis replaces the old files with the document.
    run_one(store, "maple", {"reflect": False, "boot": {"n_resamples": 50}}, judge="mock/judge",
            judge_options={"func": judge}, no_cache=True)
    assert not old.exists() and not (store.analysis_dir / "maple_figure3.json").exists()
    doc = MAPLE.read(store.root)
    assert doc is not None and doc.envelope.entries == len(RESPONSES)


def test_a_document_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    store = write_run(tmp_path)
    run_one(store, "maple", {"reflect": False, "boot": {"n_resamples": 50}}, judge="mock/judge",
            judge_options={"func": judge}, no_cache=True)
    path = MAPLE.path(store.root)
    envelope, *rest = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(envelope), "schema_version": 0}), *rest]) + "\n")
    with pytest.raises(DocumentVersionError, match=f"schema version 0 .*reads 'maple' schema version {MAPLE.version}"):
        MAPLE.read(store.root)


# The flow analysis checks steps 1 and 3; steps 2 and 4 have no mathematics SymPy can check: the step judge
# decides them.
HYBRID = "Step 1: 2 + 3 = 5.\nStep 2: Since the question asks for a sum, the sum is the answer.\nStep 3: 5 = 5.\n" \
         "Final answer: 5"


def test_the_step_judge_gets_its_own_options(tmp_path: Path) -> None:
    store = write_run(tmp_path)
    records = [r.model_copy(update={"response": HYBRID}) for r in store.records()]
    store.records_path.unlink()
    for rec in records:
        store.append(rec)
    store.close()
    verdict = json.dumps({"steps": [{"step": 2, "verdict": "correct", "reason": "restates the question"},
                                    {"step": 4, "verdict": "correct", "reason": "states the result"}]})
    res = CliRunner().invoke(app, [
        "maple", str(store.root), "--judge", "mock/judge", "-J", f"responses={json.dumps([judge([])])}",
        "--step-judge", "mock/steps", "-S", f"responses={json.dumps([verdict])}", "--no-reflect", "--no-cache",
        "--resamples", "50", "--json"])
    assert res.exit_code == 0, res.output
    doc = MAPLE.read(store.root)
    assert doc is not None
    assert doc.options["step_judge"] == "mock/steps" and doc.options["step_judge_options"] == {"responses": [verdict]}
    entries = list(MAPLE.entries(store.root))
    checks = [e.hybrid for e in entries]
    assert all(c is not None and c.status == "ok" and c.asked == [1, 3] for c in checks)
    assert all(c is not None and c.steps[1].provenance == "judge" for c in checks)
