"""`mathlens compare` on real runs: the scripted `mock` model through `mathlens run`, records written
through `RunStore` for one run with several configurations or variants, the real `mathlens analyze`,
then `mathlens compare` with `--json`, `--csv` and `--out`.

The expected numbers are computed here from what each run was told to answer (which questions it
gets right), independently of the code under test: discordant counts by set arithmetic, p-values
with scipy's binomial test, corrections with statsmodels.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from mathlens.analyze.compare.models import COMPARE
from support.compare_runs import (
    ABLATED,
    CONFIGS,
    IDS,
    RIGHT,
    add_grades_and_maple,
    cli,
    cli_json,
    metric,
    mock_run,
    store_run,
)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("compare-two")
    ids_a, ids_b = [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 9]
    right_a, right_b = {1, 2, 3, 4, 5, 8}, {1, 2, 6, 7, 9}
    a = mock_run(tmp, "runA", ids_a, right_a)
    b = mock_run(tmp, "runB", ids_b, right_b)
    expect = {"ids_a": ids_a, "ids_b": ids_b, "right_a": right_a, "right_b": right_b}
    return a, b, expect


def test_two_runs_pairing_mcnemar_and_changed_items(two_runs: tuple[Path, Path, dict[str, Any]],
                                                    tmp_path: Path) -> None:
    a, b, ex = two_runs
    report = cli_json("compare", str(a), str(b), cache=tmp_path)
    (c,) = report["comparisons"]
    paired = sorted(set(ex["ids_a"]) & set(ex["ids_b"]))
    assert c["pairing"]["paired"] == len(paired) == 7
    assert (c["pairing"]["only_a"], c["pairing"]["only_a_ids"]) == (1, ["arith/q8"])
    assert (c["pairing"]["only_b"], c["pairing"]["only_b_ids"]) == (1, ["arith/q9"])
    assert c["pairing"]["key"] == ["model", "configuration", "exam_id", "question_id", "variant", "repeat"]
    down = {k for k in paired if k in ex["right_a"] and k not in ex["right_b"]}  # 3, 4, 5
    up = {k for k in paired if k not in ex["right_a"] and k in ex["right_b"]}  # 6, 7
    acc = metric(c, "accuracy")
    assert (acc["status"], acc["n"], acc["b"], acc["c"]) == ("ok", 7, len(down), len(up))
    assert acc["p_value"] == pytest.approx(binomtest(len(down), len(down) + len(up), 0.5).pvalue)
    assert acc["mean_a"] == pytest.approx(len(set(paired) & ex["right_a"]) / 7)
    assert acc["delta"] == pytest.approx((len(up) - len(down)) / 7)
    assert acc["ci_low"] <= acc["delta"] <= acc["ci_high"]
    changed = {(ch["item"], ch["direction"]) for ch in c["changed"]}
    assert changed == ({(f"arith/q{k}", "correct_to_wrong") for k in down}
                       | {(f"arith/q{k}", "wrong_to_correct") for k in up})
    q3 = next(ch for ch in c["changed"] if ch["item"] == "arith/q3")
    assert (q3["predicted_a"], q3["predicted_b"]) == ("4", "5")
    assert q3["record"]["key"].startswith("mock/student|baseline|arith|q3") and q3["record_b"]["question_id"] == "q3"
    assert (c["correct_to_wrong"], c["wrong_to_correct"]) == (len(down), len(up))
    # a wrong sum is an invalid step: the share of invalid steps follows the verdicts
    inv = metric(c, "invalid_step_share")
    assert len(down) > len(up)
    assert inv["status"] == "ok" and inv["n"] == 7 and inv["delta"] > 0 and inv["mean_a"] > 0
    # no grades and no MAPLE in these runs: unavailable, with the command that makes them, not an error
    rubric, maple = metric(c, "rubric_percent"), metric(c, "maple")
    assert rubric["status"] == "unavailable" and rubric["command"] == f"mathlens grade {a}"
    assert maple["status"] == "unavailable" and maple["command"].startswith("mathlens maple")
    # the Holm family is every metric with a p-value
    family = [m for m in c["metrics"] if m["p_value"] is not None]
    assert report["family"] == len(family)
    expected = multipletests([m["p_value"] for m in family], method="holm")[1]
    assert [m["p_adjusted"] for m in family] == pytest.approx(list(expected))


def test_two_runs_text_csv_and_document(two_runs: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, b, _ = two_runs
    table = tmp_path / "cmp.csv"
    out = tmp_path / "cmpdoc"
    changed = tmp_path / "changed.csv"
    res = cli("compare", str(a), str(b), "--csv", str(table), "--out", str(out), "--correction", "bh",
              "--changed-csv", str(changed), env={"COLUMNS": "200"})
    assert "only in A: arith/q8" in res.output and "McNemar b=3 c=2" in res.output
    assert "mathlens grade" in res.output and "Changed verdicts: 3 correct→wrong, 2 wrong→correct" in res.output
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [r["metric"] for r in rows] == ["accuracy", "rubric_percent", "maple", "robustness", "complexity",
                                           "invalid_step_share"]
    acc = rows[0]
    assert (acc["b_a_right_b_wrong"], acc["c_a_wrong_b_right"], acc["paired"], acc["only_a"]) == ("3", "2", "7", "1")
    assert float(acc["p_value"]) == pytest.approx(binomtest(3, 5, 0.5).pvalue)
    assert rows[1]["status"] == "unavailable" and rows[1]["command"].startswith("mathlens grade")
    doc = COMPARE.read(out)
    assert doc is not None and doc.summary.options.correction == "bh"
    entries = list(COMPARE.entries(out))
    assert sorted(e.item for e in entries) == ["arith/q3", "arith/q4", "arith/q5", "arith/q6", "arith/q7"]
    assert doc.envelope.entries == 5 and doc.summary.comparisons[0].pairing.only_b_ids == ["arith/q9"]
    flips = {r["item"]: r["direction"] for r in csv.DictReader(changed.open(encoding="utf-8"))}
    # the fixture's answers: q3-q5 right only in A, q6-q7 right only in B
    assert flips == {**{f"arith/q{k}": "correct_to_wrong" for k in (3, 4, 5)},
                     **{f"arith/q{k}": "wrong_to_correct" for k in (6, 7)}}


def test_same_run_twice_is_all_ties(two_runs: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    a, _, _ = two_runs
    (c,) = cli_json("compare", str(a), str(a), cache=tmp_path)["comparisons"]
    acc = metric(c, "accuracy")
    assert (acc["b"], acc["c"], acc["p_value"], acc["delta"]) == (0, 0, 1.0, 0.0)
    assert c["changed"] == [] and c["pairing"]["only_a"] == 0


def test_two_runs_of_two_models_pair_on_the_rest_and_repeats_pair_by_number(tmp_path: Path) -> None:
    a = mock_run(tmp_path, "m1", [1, 2, 3], {1, 2}, model="mock/one", repeats=2)
    b = mock_run(tmp_path, "m2", [1, 2, 3], {1, 3}, model="mock/two")
    plain = cli_json("compare", str(a), str(b), cache=tmp_path)
    by_model = cli_json("compare", str(a), str(b), "--by", "model", cache=tmp_path)
    # each run holds one model, a different one: the model is the change compared, not part of an item
    assert "but model" in plain["rule"]
    for report in (plain, by_model):
        (c,) = report["comparisons"]
        assert "model" not in c["pairing"]["key"]
        # repeat 0 meets repeat 0; run A's second repeats have no partner and are listed, not dropped
        assert (c["pairing"]["paired"], c["pairing"]["only_a"], c["pairing"]["only_b"]) == (3, 3, 0)
        assert sorted(c["pairing"]["only_a_ids"]) == ["arith/q1 · r1", "arith/q2 · r1", "arith/q3 · r1"]
        acc = metric(c, "accuracy")
        assert (acc["n"], acc["b"], acc["c"]) == (3, 1, 1)  # q2 broken, q3 fixed
        assert {ch["item"] for ch in c["changed"]} == {"arith/q2 · r0", "arith/q3 · r0"}
    (c,) = by_model["comparisons"]
    assert (c["a"]["value"], c["b"]["value"]) == ("mock/one", "mock/two")


def test_a_field_shared_by_both_runs_stays_in_the_key(tmp_path: Path) -> None:
    a = mock_run(tmp_path, "s1", [1, 2, 3], {1, 2})
    b = mock_run(tmp_path, "s2", [1, 2], {1})
    (c,) = cli_json("compare", str(a), str(b), cache=tmp_path)["comparisons"]
    assert c["pairing"]["key"] == ["model", "configuration", "exam_id", "question_id", "variant", "repeat"]
    assert (c["pairing"]["paired"], c["pairing"]["only_a"], c["pairing"]["only_b"]) == (2, 1, 0)


@pytest.fixture(scope="module")
def config_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compare-configs")
    run = store_run(tmp / "c")
    cli_json("analyze", str(run), cache=tmp / ".cache")
    points = {conf: {k: float(k + i) for k in IDS} for i, conf in enumerate(CONFIGS)}
    add_grades_and_maple(run, points)
    return run


def test_within_run_by_configuration(config_run: Path, tmp_path: Path) -> None:
    report = cli_json("compare", str(config_run), "--by", "configuration", cache=tmp_path)
    comps = report["comparisons"]
    assert [(c["a"]["value"], c["b"]["value"]) for c in comps] == [("baseline", "rag"), ("baseline", "contextual")]
    for c in comps:
        conf = c["b"]["value"]
        assert c["pairing"]["key"] == ["model", "exam_id", "question_id", "variant", "repeat"]
        assert (c["pairing"]["paired"], c["pairing"]["only_a"], c["pairing"]["only_b"]) == (6, 0, 0)
        b = len(RIGHT["baseline"] - RIGHT[conf])
        cc = len(RIGHT[conf] - RIGHT["baseline"])
        acc = metric(c, "accuracy")
        assert (acc["b"], acc["c"]) == (b, cc)
        assert acc["p_value"] == pytest.approx(binomtest(b, b + cc, 0.5).pvalue if b + cc else 1.0)
        # rubric %: mean over the two judge runs of 100 * total / 10; configuration i adds i points
        rub = metric(c, "rubric_percent")
        shift = 10.0 * CONFIGS.index(conf)
        assert rub["status"] == "ok" and rub["n"] == 6 and rub["delta"] == pytest.approx(shift)
        assert rub["mean_a"] == pytest.approx(sum(10 * k - 5 for k in IDS) / 6)
        # a constant shift on every pair: every sign pattern but the observed one and its mirror is smaller
        assert rub["p_value"] == pytest.approx(2 / 2 ** 6)
        assert metric(c, "maple")["delta"] == pytest.approx(CONFIGS.index(conf) / 20)
    family = [m for c in comps for m in c["metrics"] if m["p_value"] is not None]
    assert report["family"] == len(family)
    assert [m["p_adjusted"] for m in family] == pytest.approx(
        list(multipletests([m["p_value"] for m in family], method="holm")[1]))
    bh = cli_json("compare", str(config_run), "--by", "configuration", "--correction", "bh", cache=tmp_path)
    bh_family = [m for c in bh["comparisons"] for m in c["metrics"] if m["p_value"] is not None]
    assert [m["p_adjusted"] for m in bh_family] == pytest.approx(
        list(multipletests([m["p_value"] for m in bh_family], method="fdr_bh")[1]))
    none = cli_json("compare", str(config_run), "--by", "configuration", "--correction", "none", cache=tmp_path)
    assert all(m["p_adjusted"] == m["p_value"] for c in none["comparisons"] for m in c["metrics"]
               if m["p_value"] is not None)


def test_within_run_by_variant(tmp_path: Path) -> None:
    run = store_run(tmp_path / "v", variants=True)
    cli_json("analyze", str(run), cache=tmp_path / ".cache")
    report = cli_json("compare", str(run), "--by", "variant", cache=tmp_path)
    (c,) = report["comparisons"]
    assert (c["a"]["value"], c["b"]["value"]) == ("original", "number-1")
    assert c["pairing"]["key"] == ["model", "configuration", "exam_id", "question_id", "repeat"]
    assert c["pairing"]["paired"] == len(ABLATED)
    unablated = [k for k in IDS if k not in ABLATED]
    assert c["pairing"]["only_a"] == len(unablated)
    assert sorted(c["pairing"]["only_a_ids"]) == sorted(f"arith/q{k}" for k in unablated)
    acc = metric(c, "accuracy")
    # q2: right on the original, wrong when ablated; q5: wrong on the original, right when ablated
    assert (acc["b"], acc["c"]) == (1, 1)
    assert {(ch["item"], ch["direction"]) for ch in c["changed"]} == {("arith/q2", "correct_to_wrong"),
                                                                      ("arith/q5", "wrong_to_correct")}
    rob = metric(c, "robustness")
    assert rob["status"] == "unavailable" and "variants" in rob["reason"]


def test_unanalysed_runs_report_every_metric_unavailable(tmp_path: Path) -> None:
    run = store_run(tmp_path / "u")
    report = cli_json("compare", str(run), "--by", "configuration", cache=tmp_path)
    for c in report["comparisons"]:
        assert c["pairing"]["paired"] == 6
        assert {m["status"] for m in c["metrics"]} == {"unavailable"}
        assert metric(c, "accuracy")["command"] == f"mathlens analyze {run}"
        assert metric(c, "robustness")["command"] == f"mathlens sensitivity {run}"
    assert report["family"] == 0


def test_unreadable_document_makes_its_metric_unavailable(tmp_path: Path) -> None:
    run = store_run(tmp_path / "old")
    cli_json("analyze", str(run), cache=tmp_path / ".cache")
    (run / "analysis" / "answers.jsonl").unlink()
    (run / "analysis" / "answers.json").write_text("{}", encoding="utf-8")  # the layout of older releases
    flow = run / "analysis" / "flow.jsonl"
    lines = flow.read_text(encoding="utf-8").splitlines()
    flow.write_text("\n".join([lines[0], '{"record": 1}', *lines[2:]]) + "\n", encoding="utf-8")
    c = cli_json("compare", str(run), "--by", "configuration", cache=tmp_path)["comparisons"][0]
    acc = metric(c, "accuracy")
    assert acc["status"] == "unavailable" and "unversioned layout" in acc["reason"]
    assert acc["command"] == f"mathlens analyze {run}"
    for name in ("complexity", "invalid_step_share"):
        assert metric(c, name)["status"] == "unavailable" and "flow.jsonl: line 2" in metric(c, name)["reason"]
    assert metric(c, "robustness")["status"] in ("ok", "no_pairs")


def test_usage_errors(config_run: Path, tmp_path: Path) -> None:
    res = cli("compare", str(config_run), code=2)
    assert "--by" in res.output
    res = cli("compare", str(config_run), "--by", "colour", code=2)
    assert "model, configuration or variant" in res.output
    res = cli("compare", str(config_run), "--by", "model", code=2)
    assert "one model only" in res.output
    res = cli("compare", str(config_run), str(config_run), "--by", "configuration", code=2)
    assert "3 configuration values" in res.output
