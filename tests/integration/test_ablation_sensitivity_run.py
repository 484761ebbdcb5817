"""Ablation runs end to end: plan with `manifest.ablation`, execute, then `mathlens sensitivity`."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.analyze.ablation import SENSITIVITY, compute_sensitivity
from mathlens.analyze.registry import run_analyzers
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from support.embedded import TEST_EMBEDDED_SPEC

EXAM = """id: tiny
name: Exam II
course: Calc III
questions:
  - id: q1
    text: "Find the gradient ∇f of f(x,y)=x^2 y at point (-1,4)"
    answers: ["<-8, 1>"]
  - id: q2
    text: "Let f(x) = x^3. Find f'(2)."
    answers: ["12"]
"""


def _manifest(tmp_path: Path, spec: str, exam_text: str = EXAM, **extra: object) -> tuple[RunStore, object]:
    exam = tmp_path / "exam.yaml"
    exam.write_text(exam_text, encoding="utf-8")
    manifest = base_manifest(items=[ItemSource(source=str(exam))], models=[ModelEntry(spec=spec)],
                             generate=GenerateConfig(max_tokens=extra.pop("max_tokens", 64)),  # type: ignore[arg-type]
                             system_role="Answer briefly.", **extra)
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    return store, manifest


def _answer(messages: list[Message]) -> str:
    # A scripted solver: with the point it evaluates, without it it stays symbolic.
    q = messages[-1].content
    if "gradient" in q.lower() and "(-1,4)" in q:
        return "grad f = <2xy, x^2>, at the point <-8, 1>. Final answer: <-8, 1>"
    if "gradient" in q.lower():
        return "grad f = <2xy, x^2> in general. Final answer: <2xy, x^2>"
    return "f'(x) = 3x^2 so f'(2) = 12. Final answer: 12"


async def test_scripted_ablation_run_then_cli_recompute(tmp_path: Path) -> None:
    store, manifest = _manifest(tmp_path, "mock/solver", ablation={"elements": ["all"], "pairs": True,
                                                                   "paraphrases": True})
    model = get_model("mock/solver", {"func": _answer}, cache=None)
    tasks = plan_tasks(manifest)  # type: ignore[arg-type]
    result = await execute(store, manifest, {"mock/solver": model})  # type: ignore[arg-type]
    assert result.written == len(tasks) and result.errors == 0
    kinds = {r.variant.kind for r in store.records()}
    assert kinds == {"original", "ablation", "pair", "paraphrase"}

    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "sensitivity", str(store.root), "--json",
                           "--no-flow", "--resamples", "200"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok" and doc["n_questions"] == 2
    q1 = next(q for q in doc["questions"] if q["question_id"] == "q1")
    # Only removing the point changes this solver's answer, so it tops the impact ranking.
    assert q1["impact"][0]["element_text"] == "(-1,4)" and q1["impact"][0]["element_type"] == "coordinate"
    assert q1["ps_element_text"] == "(-1,4)" and q1["phrase_sensitivity"] > 0.3
    assert {i["impact"] for i in q1["impact"][1:]} == {0.0}
    assert q1["n_ablations"] == 4 and q1["pairs"]["n"] == 6 and q1["paraphrases"]["n"] == 3
    row = doc["exams"][0]
    assert (row["course"], row["exam"], row["configuration"]) == ("Calc III", "Exam II", "baseline")
    # The stored files match what was printed, and nothing called a model.
    stored = list(SENSITIVITY.entries(store.root))
    assert stored[0].robustness == doc["questions"][0]["robustness"]
    rows = list(csv.DictReader((store.analysis_dir / "sensitivity_exams.csv").open()))
    assert len(rows) == 1 and float(rows[0]["robustness"]) == pytest.approx(row["robustness"]["mean"], abs=1e-4)

    summary = run_analyzers(store, only=["sensitivity"], options={"sensitivity": {"flow": False}})
    outcome = summary["sensitivity"]
    assert outcome.status == "ok" and outcome.summary is not None and outcome.summary.n_questions == 2


def test_run_without_variants_reports_status(tmp_path: Path) -> None:
    store, _ = _manifest(tmp_path, "mock/x")
    report = compute_sensitivity(store)
    assert report.status == "empty" and report.questions == []


def test_cli_reports_a_bad_run_dir(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "sensitivity", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "not a run directory" in proc.stderr


@pytest.mark.embedded
async def test_embedded_ablation_run(tmp_path: Path, embedded_model_path: Path) -> None:
    one_question = EXAM.split("  - id: q2")[0]
    store, manifest = _manifest(tmp_path, TEST_EMBEDDED_SPEC, one_question,
                                ablation={"elements": ["coordinates", "keywords"]}, max_tokens=32)
    models = build_models(manifest, None, RetryPolicy(), concurrency=None)  # type: ignore[arg-type]
    result = await execute(store, manifest, models)  # type: ignore[arg-type]
    # The original prompt, the coordinate removed, and "Find" replaced: three short requests.
    assert result.written == 3 and result.errors == 0
    texts = {r.variant.name: r.messages[-1].content for r in store.records()}
    assert texts["coordinate-1"].endswith("Find the gradient ∇f of f(x,y)=x^2 y")
    report = compute_sensitivity(store)
    assert report.status == "ok"
    q1 = next(q for q in report.questions if q.question_id == "q1")
    assert q1.status == "ok" and q1.n_ablations == 2
    assert q1.robustness is not None and 0.0 <= q1.robustness <= 1.0
    assert q1.phrase_sensitivity == pytest.approx(max(i.impact for i in q1.impact))
    assert {i.element_type for i in q1.impact} == {"coordinate", "keyword"}
    assert q1.step_count is not None and q1.step_count >= 1
    row = report.exams[0]
    assert (row.course, row.n_questions, row.robustness.n) == ("Calc III", 1, 1)
