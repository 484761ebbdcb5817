"""Sensitivity leaves degenerate responses out, counts them, and keeps them when asked."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean

import pytest
from typer.testing import CliRunner

from mathlens.analyze.ablation import SENSITIVITY, SensitivityConfig, compute_sensitivity, question_sensitivity
from mathlens.analyze.ablation.divergence import tfidf_cosines
from mathlens.analyze.ablation.tables import exam_rows, rows_csv
from mathlens.cli.main import app
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.registry import get_model
from mathlens.runs.records import ItemSource, ModelEntry, RunRecord, Variant
from mathlens.runs.runner import base_manifest, execute
from mathlens.runs.store import RunStore

Q = Question(id="q1", text="Let f(x, y) = x^2 y. Find the gradient of f at the point (-1, 4).", answers=["<-8, 1>"])
ROLE = "You are a student. Show every step of your work and end with a line 'Final answer:'."
GOOD = "1. f_x = 2xy and f_y = x^2.\n2. At (-1, 4): f_x = -8, f_y = 1.\nFinal answer: <-8, 1>"
OTHER = "Without the point the gradient stays symbolic: f_x = 2xy, f_y = x^2.\nFinal answer: <2xy, x^2>"
LOOP = "the gradient " * 60
NO_FLOW = SensitivityConfig(flow=False)
KEEP = SensitivityConfig(flow=False, include_degenerate=True)


def rec(response: str, variant: Variant | None = None, repeat: int = 0) -> RunRecord:
    v = variant or Variant()
    prompt = v.question_text or Q.text
    return RunRecord(key=f"m|b|e|q1|{v.name}|r{repeat}", model="m", configuration="b", exam_id="e", question_id="q1",
                     variant=v, repeat=repeat,
                     messages=[Message(role="system", content=ROLE), Message(role="user", content=prompt)],
                     config=GenerateConfig(), request_hash="h", content_hash="c", response=response,
                     created_at=datetime.now(UTC))


def abl(name: str, element: str) -> Variant:
    return Variant(name=name, kind="ablation", element_type="coordinate", element_text=element,
                   question_text=Q.text.replace(element, "").replace("  ", " "))


def test_a_degenerate_variant_is_left_out_of_the_metrics_and_counted() -> None:
    echoed = abl("coordinate-2", "f(x, y) = x^2 y")
    assert echoed.question_text is not None
    records = [rec(GOOD), rec(OTHER, abl("coordinate-1", "(-1, 4)")), rec(echoed.question_text, echoed)]
    q = question_sensitivity(records, Q, NO_FLOW)
    # The echo is left out of the vectoriser's fitting set as well as the means.
    (cos,) = tfidf_cosines(GOOD, [OTHER]).values
    assert q.status == "ok" and q.excluded_degenerate == 1
    assert q.robustness == pytest.approx(cos) and q.phrase_sensitivity == pytest.approx(1 - cos)
    assert [i.variant for i in q.impact] == ["coordinate-1"]
    detail = {d.variant: d for d in q.details}
    assert detail["coordinate-2"].status == "degenerate" and detail["coordinate-2"].cosine is None
    assert "echo" in detail["coordinate-2"].note and q.n_failed_pairs == 0
    kept = question_sensitivity(records, Q, KEEP)
    both = tfidf_cosines(GOOD, [OTHER, echoed.question_text]).values
    assert kept.excluded_degenerate == 0 and kept.robustness == pytest.approx(fmean(both))
    assert len(kept.impact) == 2


def test_a_degenerate_original_excludes_the_question() -> None:
    records = [rec(LOOP), rec(OTHER, abl("coordinate-1", "(-1, 4)")), rec(GOOD, abl("coordinate-2", "x^2 y"))]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.status == "degenerate" and "repetition_loop" in q.note
    assert (q.robustness, q.phrase_sensitivity, q.impact, q.flags) == (None, None, [], [])
    assert {d.status for d in q.details} == {"degenerate_original"} and q.excluded_degenerate == 1
    rows = exam_rows([q], {}, SensitivityConfig(flow=False, n_resamples=50))
    (row,) = rows
    assert (row.excluded_questions, row.excluded_degenerate, row.robustness.n) == (1, 1, 0)
    header, line = rows_csv(rows).strip().split("\n")
    assert header.endswith("excluded_degenerate,excluded_questions") and line.endswith(",1,1")
    kept = question_sensitivity(records, Q, KEEP)
    assert kept.status == "ok" and kept.robustness is not None and kept.excluded_degenerate == 0


def test_repeats_with_a_degenerate_original_keep_the_others() -> None:
    records = [rec(GOOD, repeat=0), rec(LOOP, repeat=1), rec(GOOD, repeat=2),
               rec(OTHER, abl("coordinate-1", "(-1, 4)"), repeat=0), rec(OTHER, abl("coordinate-1", "(-1, 4)"), 1),
               rec(OTHER, abl("coordinate-1", "(-1, 4)"), repeat=2)]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.status == "ok" and q.excluded_degenerate == 1
    statuses = sorted((d.repeat, d.status) for d in q.details)
    assert statuses == [(0, "ok"), (1, "degenerate_original"), (2, "ok")]
    assert q.consistency is not None and q.consistency.n_runs == 2 and q.consistency.excluded_degenerate == 1
    assert q.consistency.answer_agreement == 1.0


EXAM = f"""id: tiny
name: Tiny
course: Calc III
questions:
  - id: q1
    text: "{Q.text}"
    answers: ["<-8, 1>"]
  - id: q2
    text: "Let g(x) = x^3 + 2x. Find the derivative g'(2) and show each step of the work."
    answers: ["14"]
"""


def _solver(messages: list[Message]) -> str:
    # q1 is answered; q2 is echoed back, as a base model does.
    prompt = messages[-1].content
    return GOOD if "gradient" in prompt else prompt


@pytest.fixture
def ablated_run(tmp_path: Path) -> RunStore:
    exam = tmp_path / "exam.yaml"
    exam.write_text(EXAM, encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(exam))], models=[ModelEntry(spec="mock/solver")],
                             generate=GenerateConfig(max_tokens=200), system_role=ROLE,
                             ablation={"elements": ["all"], "pairs": False, "paraphrases": False})
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    import asyncio

    asyncio.run(execute(store, manifest, {"mock/solver": get_model("mock/solver", {"func": _solver}, cache=None)}))
    return store


def test_run_level_counts_cli_and_analyzer_option(ablated_run: RunStore) -> None:
    store = ablated_run
    q2_records = [r for r in store.records() if r.question_id == "q2"]
    report = compute_sensitivity(store, SensitivityConfig(flow=False, n_resamples=50))
    by_q = {q.question_id: q for q in report.questions}
    assert by_q["q2"].status == "degenerate" and by_q["q1"].status == "ok"
    assert report.excluded_questions == 1 and report.excluded_degenerate == len(q2_records) > 1
    runner = CliRunner()
    res = runner.invoke(app, ["sensitivity", str(store.root), "--json", "--no-flow", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["excluded_degenerate"] == len(q2_records) and doc["include_degenerate"] is False
    res = runner.invoke(app, ["sensitivity", str(store.root), "--no-flow", "--resamples", "50"])
    assert res.exit_code == 0 and f"excluded as degenerate: {len(q2_records)} response(s), 1 whole" in res.output
    res = runner.invoke(app, ["sensitivity", str(store.root), "--json", "--no-flow", "--resamples", "50",
                              "--include-degenerate"])
    kept = json.loads(res.stdout)
    assert kept["excluded_degenerate"] == 0 and kept["include_degenerate"] is True
    assert next(q for q in kept["questions"] if q["question_id"] == "q2")["status"] == "ok"
    # `mathlens analyze -O include_degenerate=true` reaches the sensitivity analyzer.
    res = runner.invoke(app, ["analyze", str(store.root), "--only", "sensitivity", "-O", "include_degenerate=true",
                              "-O", "sensitivity.flow=false", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)["analyzers"]["sensitivity"]["summary"]
    assert summary["include_degenerate"] is True and summary["excluded_degenerate"] == 0
    res = runner.invoke(app, ["analyze", str(store.root), "--only", "sensitivity", "-O", "sensitivity.flow=false",
                              "--json"])
    assert json.loads(res.stdout)["analyzers"]["sensitivity"]["summary"]["excluded_degenerate"] == len(q2_records)
    saved = SENSITIVITY.read(store.root)
    assert saved is not None and saved.options["flow"] is False
    assert saved.summary.excluded_questions == 1 and saved.summary.exams[0].excluded_questions == 1
    assert {q.question_id for q in SENSITIVITY.entries(store.root)} == {"q1", "q2"}
    res = runner.invoke(app, ["analyze", str(store.root), "-O", "rel_tol=0.1"])
    assert res.exit_code != 0 and "ANALYZER.rel_tol" in res.output
    # A misspelt option of a named analyzer is refused with the closest valid key.
    res = runner.invoke(app, ["analyze", str(store.root), "--only", "sensitivity", "-O", "sensitivity.n_resample=5"])
    assert res.exit_code == 2 and "Did you mean 'n_resamples'" in res.output


def test_the_printed_note_names_each_flagged_question_with_its_flags(ablated_run: RunStore) -> None:
    # With the threshold below any phrase sensitivity, q1 (the answered question) is flagged; q2 is
    # left out as degenerate and so raises nothing.
    res = CliRunner().invoke(app, ["analyze", str(ablated_run.root), "--only", "sensitivity", "-O",
                                   "sensitivity.flow=false", "-O", "sensitivity.phrase_sensitivity_max=-1"])
    assert res.exit_code == 0, res.output
    notes = [line.strip() for line in res.output.splitlines() if "flagged" in line]
    assert len(notes) == 1 and re.fullmatch(r"flagged for instructors: [\w.-]+/q1 \(unstable_under_rephrasing\)",
                                            notes[0]), notes
