"""Step-label agreement of the MAPLE judge with people: a run written record by record, a scripted
judge, and hand-written human files whose agreement is worked out by hand below."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.analyze.maple.agreement import (
    MAPLE_AGREEMENT,
    MapleAgreementSummary,
    SolutionAgreement,
    import_human_labels,
    kappa_2x2,
)
from mathlens.analyze.maple.results import MAPLE
from mathlens.analyze.registry import run_one
from mathlens.cli.main import app
from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.documents import DocumentVersionError
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord, Variant
from mathlens.runs.store import RunStore
from mathlens.stats.agreement import cohen_kappa

MODEL = "mock/solver"
CALC, METHOD_APPLIED, PARTIAL, METHOD = ("calculation_error", "incorrectly_applied_method",
                                         "partial_misunderstanding", "incorrect_method")
#: id, question, answer
PROBLEMS = [("q1", "What is 4 * 6?", "24"), ("q2", "What is 2 + 3?", "5"), ("q3", "What is 9 - 4?", "5"),
            ("q4", "What is 10 / 2?", "5"), ("q5", "What is 7 + 1?", "8")]
#: Four steps each for q1, three for the others (one step per line; the last is the answer line).
SOLUTIONS = {
    "q1": "Step 1: 4 * 6 = 20.\nStep 2: So the product is 20.\nStep 3: Check: 20 / 4 = 5.\nFinal answer: 20",
    "q2": "2 + 3 = 6.\nThen 6 is the sum.\nFinal answer: 6",
    "q3": "9 - 4 = 3.\nSo 3 remains.\nFinal answer: 3",
    "q4": "10 / 2 = 5.\nSo half of 10 is 5.\nFinal answer: 5",
    "q5": "7 + 1 = 9.\nSo the sum is 9.\nFinal answer: 9",
}
#: (configuration, question) of every record; q4 is answered right, so it is not judged.
RECORDS = [("baseline", q) for q, *_ in PROBLEMS] + [("rag", "q1")]
#: question -> the judge's erroneous steps; q3's reply is unusable (the solution stays unjudged).
JUDGE = {
    "What is 4 * 6?": [{"step": 1, "labels": [CALC], "reason": "4*6 is 24"},
                       {"step": 3, "labels": [CALC, METHOD_APPLIED], "reason": "check is wrong"}],
    "What is 2 + 3?": [{"step": 2, "labels": [PARTIAL], "reason": "sum misread"}],
    "What is 7 + 1?": [{"step": 1, "labels": [CALC], "reason": "7+1 is 8"}],
}


def judge(messages: list[Message]) -> str:
    user = " ".join(m.content for m in messages)
    if "What is 9 - 4?" in user:
        return "no JSON from me"
    steps = next((v for q, v in JUDGE.items() if q in user), [])
    return json.dumps({"erroneous_steps": steps})


def key(qid: str, configuration: str = "baseline") -> str:
    return f"{MODEL}|{configuration}|math|{qid}|original|r0"


def scored_run(root: Path) -> RunStore:
    """A run of six records (five baseline questions, q1 under RAG too), scored by `maple`."""
    root.mkdir(parents=True, exist_ok=True)
    data = root / "math.jsonl"
    data.write_text("\n".join(json.dumps({"problem": q, "answer": a, "level": "Level 1", "subject": "Algebra",
                                          "unique_id": qid, "solution": f"The answer is $\\boxed{{{a}}}$."})
                              for qid, q, a in PROBLEMS) + "\n")
    store = RunStore(root / "run")
    now = datetime.now(UTC)
    store.write_manifest(Manifest(
        run_id="agree", mathlens_version="test", created_at=now, items=[ItemSource(source=str(data))],
        models=[ModelEntry(spec=MODEL)], configurations=["baseline", "rag"], generate=GenerateConfig(),
        system_role="Solve it."))
    (exam,) = store.exams()
    assert exam.id == "math"
    for conf, qid in RECORDS:
        store.append(RunRecord(
            key=key(qid, conf), model=MODEL, configuration=conf, exam_id=exam.id, question_id=qid, variant=Variant(),
            messages=[Message(role="user", content=qid)], config=GenerateConfig(), request_hash="h",
            content_hash="c", response=SOLUTIONS[qid], finish_reason="stop", created_at=now))
    store.close()
    run_one(store, "maple", {"reflect": False, "boot": {"n_resamples": 10}}, judge="mock/judge",
            judge_options={"func": judge}, no_cache=True)
    return store


@pytest.fixture(scope="module")
def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scored_run(tmp_path_factory.mktemp("agreement")).root


def fresh(run_root: Path, tmp_path: Path) -> RunStore:
    """A copy of the scored run, so each test writes its own agreement document."""
    import shutil

    dest = tmp_path / "run"
    shutil.copytree(run_root, dest)
    return RunStore(dest)


#: The human file. Baseline q1: step 1 as the judge, step 2 where the judge saw nothing, step 3 left
#: unlabelled (the judge gave two labels). Baseline q2: a different first error (step 1), step 2 as
#: the judge. RAG q1: exactly the judge's labels. q4 (right answer, not judged) and q3 (unjudged) are
#: annotated but cannot be compared; q5 is judged and not annotated.
HUMAN: list[dict[str, Any]] = [
    {"key": key("q1"), "annotator": "ann", "erroneous_steps": [{"step": 1, "labels": [CALC]},
                                                              {"step": 2, "labels": [CALC]}]},
    {"key": key("q2"), "annotator": "ann", "erroneous_steps": [{"step": 1, "labels": [METHOD]},
                                                              {"step": 2, "labels": [PARTIAL]}]},
    {"key": key("q1", "rag"), "erroneous_steps": [{"step": 3, "labels": [METHOD_APPLIED, CALC]},
                                                  {"step": 1, "labels": [CALC]}]},
    {"key": key("q4"), "erroneous_steps": []},
    {"key": key("q3"), "erroneous_steps": [{"step": 1, "labels": [CALC]}]},
]
HUMAN_CSV = "\n".join([
    "key,step,labels,annotator,note",
    f"{key('q1')},1,{CALC},ann,",
    f"{key('q1')},2,{CALC},ann,",
    f"{key('q1')},3,,ann,looks fine",
    f"{key('q2')},1,{METHOD},ann,",
    f"{key('q2')},2,{PARTIAL},,",
    f"{key('q1', 'rag')},1,{CALC},,",
    f"{key('q1', 'rag')},3,{METHOD_APPLIED}; {CALC},,",
    f"{key('q4')},,,,",
    f"{key('q3')},1,{CALC},,",
]) + "\n"


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_run_has_the_steps_and_verdicts_the_hand_computation_assumes(run_root: Path) -> None:
    sols = {s.record.key: s for s in MAPLE.entries(run_root)}
    assert [len(sols[key(q)].steps) for q in ("q1", "q2", "q3", "q4", "q5")] == [4, 3, 3, 3, 3]
    assert len(sols[key("q1", "rag")].steps) == 4
    assert sols[key("q3")].status == "unjudged" and sols[key("q4")].judgement is None
    assert [(s.step, s.labels) for s in sols[key("q1")].step_labels] == [(1, [CALC]), (3, [CALC, METHOD_APPLIED])]


def test_agreement_by_hand(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    human = write_jsonl(tmp_path / "human.jsonl", HUMAN)
    import_human_labels(store, human, n_resamples=200, seed=3)
    doc = MAPLE_AGREEMENT.read(store.root)
    assert doc is not None and doc.envelope.entries == 3
    s: MapleAgreementSummary = doc.summary
    assert (s.n_annotated, s.n_compared, s.n_judged_not_annotated) == (5, 3, 1)
    assert s.skipped == {"right answer (not judged)": 1, "judge reply unusable (unjudged)": 1}
    assert s.judge == "mock/judge" and s.labels_from == "merged" and s.human_format == "jsonl"
    entries = {e.record.key: e for e in MAPLE_AGREEMENT.entries(store.root)}
    q1 = entries[key("q1")]
    assert [(p.step, p.judge, p.human, p.identical) for p in q1.steps] == [
        (1, [CALC], [CALC], True), (2, [], [CALC], False), (3, [CALC, METHOD_APPLIED], [], False)]
    assert (q1.identical_steps, q1.judge_first_error, q1.human_first_error, q1.first_error_agrees) == (2, 1, 1, True)
    q2 = entries[key("q2")]
    assert (q2.identical_steps, q2.judge_first_error, q2.human_first_error, q2.first_error_agrees) == (2, 2, 1, False)
    assert entries[key("q1", "rag")].identical_steps == 4 and q1.annotator == "ann"

    # The baseline cell, by hand over its 7 steps (q1: 4, q2: 3):
    #   calculation_error  judge {q1.1, q1.3}, human {q1.1, q1.2}: both 1, one side 1 + 1, neither 4
    #   -> agreement 5/7; p_o = 5/7, p_e = (2/7)(2/7) + (5/7)(5/7) = 29/49, kappa = (35 - 29) / (49 - 29) = 0.3
    #   incorrectly_applied_method  judge {q1.3}, human {}: agreement 6/7, kappa 0
    #   partial_misunderstanding    judge = human = {q2.2}: agreement 1, kappa 1
    #   incorrect_method            judge {}, human {q2.1}: agreement 6/7, kappa 0
    #   other labels                nobody: agreement 1, kappa undefined
    #   any label  judge {q1.1, q1.3, q2.2}, human {q1.1, q1.2, q2.1, q2.2}: both 2, 1 + 2 apart, neither 2
    #   -> p_o = 4/7, p_e = (3/7)(4/7) + (4/7)(3/7) = 24/49, kappa = (28 - 24) / (49 - 24) = 0.16
    #   identical label sets: q1.1, q1.4, q2.2, q2.3 = 4/7; over the 5 labelled steps 2/5
    #   first error: q1 same (1), q2 not (2 vs 1) = 1/2
    cells = {t.cell: t for t in s.cells}
    assert set(cells) == {(MODEL, "baseline", "original"), (MODEL, "rag", "original")}
    base = cells[(MODEL, "baseline", "original")]
    assert (base.n_solutions, base.n_steps, base.n_labelled_steps) == (2, 7, 5)
    rows = {r.label: r for r in base.labels}
    assert list(rows) == [lab for lab in rows] and len(rows) == 7
    assert (rows[CALC].judge_yes, rows[CALC].human_yes, rows[CALC].both_yes, rows[CALC].n) == (2, 2, 1, 7)
    assert rows[CALC].percent_agreement == pytest.approx(5 / 7)
    assert rows[CALC].kappa.estimate == pytest.approx(0.3)
    assert rows[METHOD_APPLIED].percent_agreement == pytest.approx(6 / 7)
    assert rows[METHOD_APPLIED].kappa.estimate == pytest.approx(0.0)
    assert rows[PARTIAL].percent_agreement == 1.0 and rows[PARTIAL].kappa.estimate == pytest.approx(1.0)
    assert rows[METHOD].kappa.estimate == pytest.approx(0.0) and rows[METHOD].human_yes == 1
    assert rows["complete_misunderstanding"].percent_agreement == 1.0
    assert rows["complete_misunderstanding"].kappa.status == "undefined"
    assert rows["complete_misunderstanding"].kappa.estimate is None
    assert (base.any_label.judge_yes, base.any_label.human_yes, base.any_label.both_yes) == (3, 4, 2)
    assert base.any_label.kappa.estimate == pytest.approx(0.16)
    assert base.identical_steps.estimate == pytest.approx(4 / 7)
    assert base.identical_labelled_steps.estimate == pytest.approx(2 / 5)
    assert base.first_error_agreement.estimate == pytest.approx(0.5)
    rag = cells[(MODEL, "rag", "original")]
    assert rag.identical_steps.estimate == 1.0 and rag.first_error_agreement.estimate == 1.0

    # Pooled: RAG q1 adds 4 identical steps, 2 of them labelled, and one more agreeing first error.
    #   calculation_error: both 1 + 2, apart 1 + 1, neither 4 + 2 over 11 steps:
    #   p_o = 9/11, p_e = (4/11)^2 + (7/11)^2 = 65/121, kappa = (99 - 65) / (121 - 65) = 17/28
    o = s.overall
    assert o.cell is None and (o.n_solutions, o.n_steps, o.n_labelled_steps) == (3, 11, 7)
    assert o.identical_steps.estimate == pytest.approx(8 / 11)
    assert o.identical_labelled_steps.estimate == pytest.approx(4 / 7)
    assert o.first_error_agreement.estimate == pytest.approx(2 / 3)
    overall_calc = next(r for r in o.labels if r.label == CALC)
    assert overall_calc.kappa.estimate == pytest.approx(17 / 28)
    # The interval is a bootstrap over the three solutions: it brackets the estimate.
    assert overall_calc.kappa.status == "ok" and overall_calc.kappa.n == 3
    assert overall_calc.kappa.low <= overall_calc.kappa.estimate <= overall_calc.kappa.high  # type: ignore[operator]


def test_the_csv_form_reads_the_same_as_the_jsonl_form(run_root: Path, tmp_path: Path) -> None:
    a = fresh(run_root, tmp_path / "a")
    b = fresh(run_root, tmp_path / "b")
    import_human_labels(a, write_jsonl(tmp_path / "human.jsonl", HUMAN), n_resamples=50)
    (tmp_path / "human.csv").write_text(HUMAN_CSV, encoding="utf-8")
    import_human_labels(b, tmp_path / "human.csv", n_resamples=50)
    da, db = MAPLE_AGREEMENT.read(a.root), MAPLE_AGREEMENT.read(b.root)
    assert da is not None and db is not None and db.summary.human_format == "csv"
    ignore = {"human_file", "human_sha256", "human_format"}
    assert da.summary.model_dump(exclude=ignore) == db.summary.model_dump(exclude=ignore)
    strip = {"annotator"}
    assert [e.model_dump(exclude=strip) for e in MAPLE_AGREEMENT.entries(a.root)] == \
        [e.model_dump(exclude=strip) for e in MAPLE_AGREEMENT.entries(b.root)]


def test_judge_only_labels_leave_out_the_detectors(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    import_human_labels(store, write_jsonl(tmp_path / "h.jsonl", HUMAN[:1]), labels_from="judge", n_resamples=0)
    doc = MAPLE_AGREEMENT.read(store.root)
    assert doc is not None and doc.summary.labels_from == "judge"
    (entry,) = list(MAPLE_AGREEMENT.entries(store.root))
    assert [p.judge for p in entry.steps] == [[CALC], [], [CALC, METHOD_APPLIED]]
    assert doc.summary.overall.first_error_agreement.status == "degenerate"  # one solution, no interval


@pytest.mark.parametrize("table", [(1, 1, 1, 4), (3, 0, 2, 1), (0, 2, 3, 0), (5, 0, 0, 2), (0, 0, 1, 6), (2, 2, 2, 2)])
def test_kappa_2x2_is_cohens_kappa(table: tuple[int, int, int, int]) -> None:
    both, j_only, h_only, neither = table
    judge_says = [1] * both + [1] * j_only + [0] * h_only + [0] * neither
    human_says = [1] * both + [0] * j_only + [1] * h_only + [0] * neither
    assert kappa_2x2(*table) == pytest.approx(cohen_kappa(judge_says, human_says))


def test_kappa_2x2_is_undefined_when_no_rating_varies() -> None:
    assert kappa_2x2(0, 0, 0, 5) is None and cohen_kappa([0] * 5, [0] * 5) is None
    assert kappa_2x2(4, 0, 0, 0) is None and kappa_2x2(0, 0, 0, 0) is None


@pytest.mark.parametrize(("row", "line", "field", "message"), [
    ({"key": key("q1"), "erroneous_steps": [], "labls": []}, 2, "labls", "unknown field"),
    ({"key": "mock/solver|baseline|math|q9|original|r0", "erroneous_steps": []}, 2, "key", "not in this run"),
    ({"key": key("q1"), "erroneous_steps": [{"step": 5, "labels": [CALC]}]}, 2, "erroneous_steps.0.step",
     "step 5 is out of range"),
    ({"key": key("q2"), "erroneous_steps": [{"step": 0, "labels": [CALC]}]}, 2, "erroneous_steps.0.step",
     "out of range"),
    ({"key": key("q1"), "erroneous_steps": [{"step": 1, "labels": [CALC, "calc_eror"]}]}, 2,
     "erroneous_steps.0.labels.1", "unknown label 'calc_eror'. Did you mean 'calculation_error'"),
    ({"key": key("q1"), "erroneous_steps": [{"step": 1, "labels": []}]}, 2, "erroneous_steps.0.labels", "non-empty"),
    ({"key": key("q1"), "erroneous_steps": [{"step": 1, "label": [CALC]}]}, 2, "erroneous_steps.0.label",
     "unknown field"),
    ({"key": key("q1"), "erroneous_steps": [{"step": 2, "labels": [CALC]}, {"step": 2, "labels": [PARTIAL]}]}, 2,
     "erroneous_steps.1.step", "listed twice"),
    ({"key": key("q2"), "question_id": "q1", "erroneous_steps": []}, 2, "question_id", "is not the question"),
    ({"key": key("q5"), "erroneous_steps": []}, 2, "key", "annotated twice (first on line 1)"),
])
def test_bad_jsonl_names_file_line_and_field(run_root: Path, tmp_path: Path, row: dict[str, Any], line: int,
                                             field: str, message: str) -> None:
    store = fresh(run_root, tmp_path)
    first = {"key": key("q5"), "erroneous_steps": []}
    path = write_jsonl(tmp_path / "bad.jsonl", [first, row])
    with pytest.raises(UserError) as err:
        import_human_labels(store, path, n_resamples=0)
    assert str(err.value).startswith(f"{path}:{line}: field {field}: ")
    assert message in str(err.value)
    assert not MAPLE_AGREEMENT.path(store.root).exists()


@pytest.mark.parametrize(("body", "line", "field", "message"), [
    ("key,step,labels,grader\n", 1, "'grader'", "unknown column"),
    ("key,labels\n", 1, "step", "the column is missing"),
    (f"key,step,labels\n{key('q1')},1,{CALC}\n{key('q1')},9,{CALC}\n", 3, "step", "step 9 is out of range"),
    (f"key,step,labels\n{key('q1')},1,{CALC};wrong_label\n", 2, "labels", "unknown label 'wrong_label'"),
    (f"key,step,labels\n{key('q1')},,{CALC}\n", 2, "step", "labels need a step number"),
    (f"key,step,labels\n{key('q1')},one,{CALC}\n", 2, "step", "whole number"),
    (f"key,step,labels\n{key('q1')},1,{CALC}\n{key('q1')},1,{PARTIAL}\n", 3, "step", "listed twice"),
    (f"key,step,labels\n{key('q1')},,\n{key('q1')},2,{CALC}\n", 3, "step", "marked free of errors"),
    (f"key,step,labels\nnope,1,{CALC}\n", 2, "key", "record 'nope' is not in this run"),
])
def test_bad_csv_names_file_line_and_field(run_root: Path, tmp_path: Path, body: str, line: int, field: str,
                                           message: str) -> None:
    store = fresh(run_root, tmp_path)
    path = tmp_path / "bad.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(UserError) as err:
        import_human_labels(store, path, n_resamples=0)
    assert str(err.value).startswith(f"{path}:{line}: field {field}: ")
    assert message in str(err.value)


def test_other_bad_inputs(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    with pytest.raises(UserError, match="no such file"):
        import_human_labels(store, tmp_path / "missing.jsonl")
    (tmp_path / "h.txt").write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match=r"\.jsonl or \.csv"):
        import_human_labels(store, tmp_path / "h.txt")
    (tmp_path / "h.jsonl").write_text(f'{{"key": "{key("q1")}"\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"h\.jsonl:1: not JSON"):
        import_human_labels(store, tmp_path / "h.jsonl")
    (tmp_path / "e.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="holds no annotation"):
        import_human_labels(store, tmp_path / "e.jsonl")
    unscored = RunStore(tmp_path / "unscored")
    unscored.write_manifest(store.manifest())
    with pytest.raises(UserError, match="no MAPLE document"):
        import_human_labels(unscored, write_jsonl(tmp_path / "x.jsonl", HUMAN))


def test_an_old_layout_file_is_refused(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    legacy = MAPLE_AGREEMENT.legacy_path(store.root)
    legacy.write_text(json.dumps({"human_file": "h.jsonl", "per_label": {CALC: {"kappa": 0.3}}}), encoding="utf-8")
    with pytest.raises(DocumentVersionError, match=r"maple_agreement\.jsonl.*schema version 1"):
        MAPLE_AGREEMENT.read(store.root)


runner = CliRunner()


def test_cli_worksheet_then_agreement(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    sheet = tmp_path / "sheet.jsonl"
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--worksheet", str(sheet), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["solutions"] == 4  # q1, q2, q5 and RAG q1: the judged ones
    lines = [json.loads(x) for x in sheet.read_text(encoding="utf-8").splitlines()]
    assert [x["key"] for x in lines] == [key("q1"), key("q2"), key("q5"), key("q1", "rag")]
    assert lines[0]["question"] == "What is 4 * 6?" and lines[0]["numbered_steps"][0] == "1. Step 1: 4 * 6 = 20."
    # Fill in the worksheet as a person would: label q5's first step; the rest error-free.
    lines[2]["erroneous_steps"] = [{"step": 1, "labels": [CALC]}]
    lines[2]["annotator"] = "me"
    write_jsonl(sheet, lines)
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--human", str(sheet), "--json",
                              "--resamples", "20"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n_compared"] == 4 and out["n_judged_not_annotated"] == 0
    # 14 steps (4 + 3 + 3 + 4); the judge labelled 6 (q1.1, q1.3, q2.2, q5.1, rag q1.1, rag q1.3), the
    # person only q5.1, as the judge: 1 of 6 labelled steps identical, 14 - 5 of all steps.
    assert out["overall"]["n_steps"] == 14 and out["overall"]["n_labelled_steps"] == 6
    assert out["overall"]["identical_steps"]["estimate"] == pytest.approx(9 / 14)
    assert out["overall"]["identical_labelled_steps"]["estimate"] == pytest.approx(1 / 6)
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--human", str(sheet)])
    assert res.exit_code == 0, res.output
    assert "All compared solutions (14 steps)" in res.output and "same first erroneous step" in res.output
    csv_sheet = tmp_path / "sheet.csv"
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--worksheet", str(csv_sheet)])
    assert res.exit_code == 0, res.output
    assert csv_sheet.read_text(encoding="utf-8").count(key("q1", "rag")) == 4  # one row per step


def test_cli_refuses_bad_arguments(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    res = runner.invoke(app, ["maple-agreement", str(store.root)])
    assert res.exit_code == 2 and "exactly one of --human" in res.output
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--human", "h.jsonl", "--labels-from", "both"])
    assert res.exit_code == 2 and "--labels-from must be one of merged, judge" in res.output
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"key": key("q1"), "erroneous_steps": [{"step": 7, "labels": [CALC]}]}])
    res = runner.invoke(app, ["maple-agreement", str(store.root), "--human", str(bad)])
    assert res.exit_code == 2 and "bad.jsonl:1: field erroneous_steps.0.step: step 7 is out of range" in \
        res.output.replace("\n", "")


def test_entries_are_typed_solution_agreements(run_root: Path, tmp_path: Path) -> None:
    store = fresh(run_root, tmp_path)
    import_human_labels(store, write_jsonl(tmp_path / "h.jsonl", HUMAN), n_resamples=0)
    entries = list(MAPLE_AGREEMENT.entries(store.root))
    assert all(isinstance(e, SolutionAgreement) for e in entries)
    assert [e.record.configuration for e in entries] == ["baseline", "baseline", "rag"]
