"""Two-way ANOVA, Tukey HSD, letters and the rank-based fallback against independent computations."""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
import scikit_posthocs
import yaml
from scipy import stats

from mathlens.stats.anova import (
    AnovaResult,
    PostHoc,
    RankTest,
    _holm,
    compact_letters,
    dunn_holm,
    kruskal_dunn,
    tukey_hsd,
    two_way_anova,
)

CASES = Path(__file__).resolve().parents[1] / "cases" / "adaptivity"
TABLES: list[dict[str, Any]] = yaml.safe_load((CASES / "anova_tables.yaml").read_text(encoding="utf-8"))
LETTERS: list[dict[str, Any]] = yaml.safe_load((CASES / "letters.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", TABLES, ids=[c["name"] for c in TABLES])
def test_hand_worked_table(case: dict[str, Any]) -> None:
    res = two_way_anova(case["rows"], "y", "a", "b")
    assert res.status == "ok" and res.residual_df == case["residual_df"]
    for term, want in case["effects"].items():
        got = res.effect(term)
        assert got.sum_sq == pytest.approx(want["sum_sq"])
        assert got.df == want["df"]
        f_got = got.F
        assert f_got == pytest.approx(want["F"])
        assert got.partial_eta_sq == pytest.approx(want["partial_eta_sq"])
        assert got.p == pytest.approx(stats.f.sf(want["F"], want["df"], case["residual_df"]))


def balanced_table(seed: int = 3, n: int = 4) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    shift = {"m1": 0.0, "m2": 1.5, "m3": 0.4}
    return [{"y": round(rng.gauss(shift[m] + (0.5 if p == "low" else 0.0), 1.0), 3), "model": m, "perf": p}
            for m in shift for p in ("high", "low") for _ in range(n)]


def test_balanced_design_matches_the_textbook_sums_of_squares() -> None:
    rows = balanced_table()
    y = np.array([r["y"] for r in rows])
    grand = y.mean()
    n = 4

    def mean_of(**kw: str) -> float:
        return float(np.mean([r["y"] for r in rows if all(r[k] == v for k, v in kw.items())]))

    models, perfs = ("m1", "m2", "m3"), ("high", "low")
    ss_m = n * len(perfs) * sum((mean_of(model=m) - grand) ** 2 for m in models)
    ss_p = n * len(models) * sum((mean_of(perf=p) - grand) ** 2 for p in perfs)
    ss_cells = n * sum((mean_of(model=m, perf=p) - grand) ** 2 for m in models for p in perfs)
    ss_e = sum((r["y"] - mean_of(model=r["model"], perf=r["perf"])) ** 2 for r in rows)
    df_e = len(rows) - len(models) * len(perfs)
    expected = {"model": (ss_m, 2), "perf": (ss_p, 1), "model:perf": (ss_cells - ss_m - ss_p, 2)}
    res = two_way_anova(rows, "y", "model", "perf")
    for term, (ss, df) in expected.items():
        e = res.effect(term)
        f = (ss / df) / (ss_e / df_e)
        assert e.sum_sq == pytest.approx(ss) and e.df == df
        f_got = e.F
        assert f_got == pytest.approx(f) and e.p == pytest.approx(stats.f.sf(f, df, df_e))
        assert e.partial_eta_sq == pytest.approx(ss / (ss + ss_e))
    resid = [r["y"] - mean_of(model=r["model"], perf=r["perf"]) for r in rows]
    assert res.normality is not None and res.normality.p == pytest.approx(stats.shapiro(resid).pvalue)
    cells = [[r["y"] for r in rows if (r["model"], r["perf"]) == (m, p)] for m in models for p in perfs]
    assert res.levene is not None and res.levene.p == pytest.approx(stats.levene(*cells, center="median").pvalue)


def test_tukey_matches_scipy_with_unequal_groups() -> None:
    groups = {"a": [1.0, 2.0, 3.0, 2.5], "b": [5.0, 6.0, 7.0, 4.0, 5.5], "c": [9.0, 9.5, 8.0, 7.2, 6.0, 8.8]}
    values = [v for g in groups.values() for v in g]
    labels = [k for k, g in groups.items() for _ in g]
    res = tukey_hsd(values, labels)
    ref = stats.tukey_hsd(*groups.values())
    ci = ref.confidence_interval(0.95)
    names = list(groups)
    for pair in res.pairs:
        i, j = names.index(pair.a), names.index(pair.b)
        assert pair.mean_diff == pytest.approx(np.mean(groups[pair.b]) - np.mean(groups[pair.a]))
        assert pair.p_adj == pytest.approx(ref.pvalue[i, j], rel=1e-3, abs=1e-6)
        # scipy's interval is for mean(i) - mean(j); ours for mean(b) - mean(a)
        assert (pair.low, pair.high) == pytest.approx((-ci.high[i, j], -ci.low[i, j]), rel=1e-4)
        assert pair.reject == (ref.pvalue[i, j] < 0.05)


@pytest.mark.parametrize("case", LETTERS, ids=[c["name"] for c in LETTERS])
def test_compact_letters(case: dict[str, Any]) -> None:
    assert compact_letters(case["means"], [tuple(p) for p in case["significant"]]) == case["letters"]


def test_letters_agree_with_the_pairwise_decisions() -> None:
    rows = balanced_table(seed=11, n=6)
    res = tukey_hsd([r["y"] for r in rows], [r["model"] for r in rows])
    for p in res.pairs:
        share = bool(set(res.letters[p.a]) & set(res.letters[p.b]))
        assert share == (not p.reject)


def test_kruskal_and_dunn_match_scipy_and_scikit_posthocs() -> None:
    rows = balanced_table(seed=5, n=6)
    values, labels = [r["y"] for r in rows], [r["model"] for r in rows]
    res = kruskal_dunn(values, labels)
    samples = [[r["y"] for r in rows if r["model"] == m] for m in ("m1", "m2", "m3")]
    ref = stats.kruskal(*samples)
    h_got = res.H
    assert h_got == pytest.approx(ref.statistic) and res.p == pytest.approx(ref.pvalue) and res.df == 2
    import pandas as pd

    matrix = scikit_posthocs.posthoc_dunn(pd.DataFrame({"y": values, "g": labels}), val_col="y", group_col="g",
                                          p_adjust="holm")
    assert res.posthoc is not None
    for p in res.posthoc.pairs:
        assert p.p_adj == pytest.approx(matrix.loc[p.a, p.b])


def test_holm_by_hand() -> None:
    # sorted: 0.01 * 3 = 0.03; 0.03 * 2 = 0.06; 0.04 * 1 = 0.04 -> raised to 0.06 (monotone)
    assert _holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert _holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_failed_assumptions_report_the_rank_based_tests() -> None:
    rng = random.Random(2)
    rows = [{"y": rng.gauss(0, 0.05 if m == "calm" else 5.0), "m": m, "p": p}
            for m in ("calm", "wild") for p in ("x", "y") for _ in range(15)]
    res = two_way_anova(rows, "y", "m", "p")
    assert res.levene is not None and res.levene.passed is False
    assert res.assumptions_met is False and res.reported == "nonparametric"
    assert "Kruskal-Wallis" in res.note and [t.factor for t in res.nonparametric] == ["m", "p"]
    assert res.effects  # the ANOVA itself is still reported beside the fallback


def test_assumptions_met_keeps_the_anova() -> None:
    res = two_way_anova(balanced_table(seed=3, n=8), "y", "model", "perf")
    assert res.assumptions_met is True and res.reported == "anova" and res.nonparametric == []
    assert [ph.factor for ph in res.posthoc] == ["model", "perf"]


def test_not_estimable_designs() -> None:
    one_level = [{"y": float(i), "a": "only", "b": "x" if i % 2 else "y"} for i in range(8)]
    res = two_way_anova(one_level, "y", "a", "b")
    assert res.status == "not_estimable" and "fewer than two levels" in res.note
    one_per_cell = [{"y": 1.0, "a": a, "b": b} for a in ("p", "q") for b in ("r", "s")]
    assert two_way_anova(one_per_cell, "y", "a", "b").status == "not_estimable"


def test_constant_groups_give_no_test_not_nan() -> None:
    res = tukey_hsd([1, 1, 2, 2], ["a", "a", "b", "b"])
    assert res.note.startswith("no variation") and all(p.p_adj is None for p in res.pairs)
    rk = kruskal_dunn([3, 3, 3, 3], ["a", "a", "b", "b"])
    assert rk.H is None and rk.p is None and rk.note
    dh = dunn_holm([1, 2, 3, 4, 5, 6], ["a", "a", "b", "b", "c", "c"])
    assert len(dh.pairs) == len(list(combinations("abc", 2)))


def test_an_empty_cell_leaves_the_inestimable_term_empty_not_nan() -> None:
    """With one (a, b) cell empty the B term cannot be estimated: its sum of squares is None (a
    NaN would make the stored tutoring statistics unreadable), and the result still serialises."""
    rng = random.Random(1)
    rows = [{"a": a, "b": b, "y": rng.random() + (a == "x")}
            for a in ("x", "y", "z") for b in ("p", "q") if (a, b) != ("z", "q") for _ in range(4)]
    res = two_way_anova(rows, "y", "a", "b")
    assert res.status == "ok"
    b = res.effect("b")
    assert b.sum_sq is None and b.F is None and b.partial_eta_sq is None
    assert res.effect("a").sum_sq is not None and res.effect("a").sum_sq > 0
    assert "NaN" not in res.model_dump_json()


@pytest.mark.parametrize("values", [{"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 3.0}], ids=["all equal", "equal per cell"])
def test_scores_that_never_vary_within_a_cell_say_so_and_give_no_f(values: dict[str, float]) -> None:
    """Every score equal (or equal within each cell, as a judge that answers alike gives): no residual
    variance, so F and p do not exist; they are None, the note says why, and nothing is printed."""
    import warnings

    rows = [{"a": a, "b": b, "y": values[a]} for a in ("x", "y") for b in ("p", "q", "r") for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # statsmodels' warnings about the degenerate fit stay inside
        res = two_way_anova(rows, "y", "a", "b")
    assert res.status == "ok" and "do not vary within the cells" in res.note
    assert all(e.F is None and e.p is None for e in res.effects)
    if len(set(values.values())) == 1:  # nothing varies: the sums of squares are rounding noise
        assert all(e.sum_sq is None and e.partial_eta_sq is None for e in res.effects)
    else:  # the factor a explains everything there is to explain
        assert res.effect("a").partial_eta_sq == pytest.approx(1.0)
    assert "NaN" not in res.model_dump_json()


def test_scores_that_vary_keep_a_plain_note() -> None:
    rng = random.Random(3)
    rows = [{"a": a, "b": b, "y": rng.random()} for a in ("x", "y") for b in ("p", "q") for _ in range(5)]
    assert "do not vary" not in two_way_anova(rows, "y", "a", "b").note


def test_posthocs_lists_the_anova_tests_then_the_rank_based_ones() -> None:
    def posthoc(factor: str, method: Literal["tukey-hsd", "dunn-holm"]) -> PostHoc:
        return PostHoc(factor=factor, method=method, means={}, n={}, pairs=[], letters={})

    tukey_a, tukey_b, dunn_b = posthoc("a", "tukey-hsd"), posthoc("b", "tukey-hsd"), posthoc("b", "dunn-holm")
    res = AnovaResult(status="ok", dv="y", factors=("a", "b"), n=12, posthoc=[tukey_a, tukey_b],
                      nonparametric=[RankTest(factor="a", H=None, df=1, p=None, posthoc=None),
                                     RankTest(factor="b", H=4.0, df=1, p=0.04, posthoc=dunn_b)])
    assert res.posthocs() == [tukey_a, tukey_b, dunn_b]
    assert AnovaResult(status="not_estimable", dv="y", factors=("a", "b"), n=0).posthocs() == []
