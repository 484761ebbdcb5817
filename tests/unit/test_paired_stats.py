"""`mathlens.stats.paired` against statsmodels and scipy on fixed tables, hand computations, and edge cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from mathlens.stats.paired import (
    EXACT_FLIP_MAX,
    adjust,
    benjamini_hochberg,
    binomial_upper,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    sign_flip_test,
)

#: (b, c): discordant counts of 2x2 tables [[both right, b], [c, both wrong]]
TABLES = [(0, 0), (0, 1), (1, 0), (1, 9), (9, 1), (5, 5), (3, 12), (20, 31), (0, 17), (40, 2), (101, 77)]


@pytest.mark.parametrize(("b", "c"), TABLES)
def test_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    table = np.array([[7, b], [c, 4]])
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact(b, c).p_value == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("b", "c"), [t for t in TABLES if sum(t) > 0])
def test_mcnemar_matches_a_two_sided_binomial_test(b: int, c: int) -> None:
    # scipy's two-sided binomial test sums the outcomes no likelier than the one seen; at p = 1/2
    # the distribution is symmetric, so that is twice the smaller tail (capped at 1)
    assert mcnemar_exact(b, c).p_value == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_mcnemar_by_hand() -> None:
    # b = 1, c = 4: P(X <= 1 | n = 5) = (1 + 5) / 32, doubled
    assert mcnemar_exact(1, 4).p_value == pytest.approx(12 / 32)
    r = mcnemar_exact(0, 0)
    assert r.p_value == 1.0 and r.discordant == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_mcnemar_refuses_bad_counts(bad: object) -> None:
    with pytest.raises(ValueError, match="non-negative whole number"):
        mcnemar_exact(bad, 2)  # type: ignore[arg-type]


PVALUES = [
    [0.01, 0.04, 0.03, 0.005],
    [0.2, 0.2, 0.01, 0.049, 0.051, 0.9, 1.0],
    [0.0, 1.0],
    [0.04],
    [0.001, 0.001, 0.001],
]


@pytest.mark.parametrize("p", PVALUES)
def test_holm_and_bh_match_statsmodels(p: list[float]) -> None:
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]), abs=1e-12)
    assert benjamini_hochberg(p) == pytest.approx(list(multipletests(p, method="fdr_bh")[1]), abs=1e-12)
    assert adjust(p, "none") == p


def test_corrections_by_hand_and_edges() -> None:
    # Holm: sorted 0.01, 0.03, 0.04 times 3, 2, 1 -> 0.03, 0.06, 0.04 -> monotone 0.03, 0.06, 0.06
    assert holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm([]) == [] and benjamini_hochberg([]) == []
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.5, 1.2])
    with pytest.raises(ValueError, match="NaN"):
        benjamini_hochberg([0.5, float("nan")])
    with pytest.raises(ValueError, match="unknown correction"):
        adjust([0.5], "bonferroni")  # type: ignore[arg-type]


def _exact_flip_p(d: list[float]) -> float:
    """Every sign pattern written out (the definition, independent of the vectorised code)."""
    obs = abs(sum(d))
    count = total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total += 1
        count += abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= obs - 1e-12
    return count / total


@pytest.mark.parametrize("d", [[1.0, 2.0, 3.0], [0.5, -0.25, 1.0, 0.75, 0.1], [2.0, 2.0, -2.0, 2.0], [0.3] * 6])
def test_sign_flip_exact_by_enumeration(d: list[float]) -> None:
    r = sign_flip_test(d)
    assert r.exact and r.p_value == pytest.approx(_exact_flip_p(d))


def test_sign_flip_zeros_are_left_out() -> None:
    assert sign_flip_test([0.0, 1.0, 0.0, 2.0, 3.0]).p_value == pytest.approx(_exact_flip_p([1.0, 2.0, 3.0]))
    r = sign_flip_test([0.0, 0.0])
    assert r.p_value == 1.0 and r.n_nonzero == 0


def test_sign_flip_monte_carlo_close_to_exact_and_never_zero() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1.0, size=EXACT_FLIP_MAX + 6)
    mc = sign_flip_test(d, n_resamples=40_000, seed=1)
    assert not mc.exact
    # the exact value, enumerated in blocks (2^20 patterns)
    m = d.size
    hits = 0
    for start in range(0, 2 ** m, 1 << 16):
        idx = np.arange(start, min(start + (1 << 16), 2 ** m))
        signs = ((idx[:, None] >> np.arange(m)) & 1) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= abs(d.sum()) - 1e-9))
    exact = hits / 2 ** m
    assert abs(mc.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1e-4
    far = sign_flip_test(np.full(40, 1.0), n_resamples=500, seed=0)
    assert far.p_value == pytest.approx(1 / 501)  # the observed pattern itself always counts


def test_bootstrap_percentile_against_the_exact_bootstrap_distribution() -> None:
    # three pairs: the 27 equally likely resamples of the differences can be listed
    a, b = [1.0, 2.0, 4.0], [2.0, 2.0, 7.0]
    d = [y - x for x, y in zip(a, b, strict=True)]  # 1, 0, 3
    means = sorted(sum(d[i] for i in idx) / 3 for idx in itertools.product(range(3), repeat=3))
    r = paired_bootstrap(a, b, n_resamples=50_000, seed=3, confidence=0.8)
    assert r.mean_diff == pytest.approx(4 / 3) and r.mean_a == pytest.approx(7 / 3)
    # the 10% and 90% points of the exact distribution (27 atoms): between neighbouring atoms
    lo = np.quantile(means, 0.1)
    hi = np.quantile(means, 0.9)
    assert means[1] - 1e-9 <= r.low <= means[4] + 1e-9 and abs(r.low - lo) <= 1 / 3 + 1e-9
    assert means[22] - 1e-9 <= r.high <= means[25] + 1e-9 and abs(r.high - hi) <= 1 / 3 + 1e-9


def test_bootstrap_close_to_scipy_percentile() -> None:
    rng = np.random.default_rng(11)
    a = rng.normal(0.5, 0.2, size=60)
    b = a + rng.normal(0.05, 0.1, size=60)
    ours = paired_bootstrap(a, b, n_resamples=20_000, seed=2)
    ref = bootstrap((a, b), lambda x, y: np.mean(y - x), paired=True, vectorized=False, n_resamples=20_000,
                    method="percentile", random_state=np.random.default_rng(9)).confidence_interval
    width = ref.high - ref.low
    assert ours.low == pytest.approx(ref.low, abs=0.05 * width)
    assert ours.high == pytest.approx(ref.high, abs=0.05 * width)
    assert ours.low < ours.mean_diff < ours.high


def test_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(40), rng.random(40)
    assert paired_bootstrap(a, b, seed=4) == paired_bootstrap(a, b, seed=4)
    assert paired_bootstrap(a, b, seed=4).low != paired_bootstrap(a, b, seed=5).low


def test_bootstrap_edges() -> None:
    ties = paired_bootstrap([0.2, 0.5, 1.0], [0.2, 0.5, 1.0])
    assert (ties.status, ties.mean_diff, ties.low, ties.high, ties.p_value) == ("ties", 0.0, 0.0, 0.0, 1.0)
    one = paired_bootstrap([0.25], [0.75])
    assert (one.status, one.n, one.low, one.high, one.p_value) == ("single", 1, 0.5, 0.5, 1.0)
    with pytest.raises(ValueError, match="no pairs"):
        paired_bootstrap([], [])
    with pytest.raises(ValueError, match="pair up"):
        paired_bootstrap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match=r"b\[1\] is nan"):
        paired_bootstrap([1.0, 2.0], [1.0, float("nan")])
    with pytest.raises(ValueError, match=r"a\[0\] is inf"):
        paired_bootstrap([float("inf")], [1.0])
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap([1.0], [2.0], confidence=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap([1.0, 2.0], [2.0, 2.0], n_resamples=0)


def test_binomial_upper_bound() -> None:
    # Clopper-Pearson, one-sided 95%: 0 of 400 -> 1 - 0.05^(1/400)
    assert binomial_upper(0, 400) == pytest.approx(1 - 0.05 ** (1 / 400))
    assert binomial_upper(20, 400) > 0.05 > 20 / 400 - 1e-12
    assert binomial_upper(5, 5) == 1.0
