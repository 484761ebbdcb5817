"""Tests for paired comparisons: the same items measured under two conditions (A and B).

Four pieces, each a pure function over plain numbers (no mathlens types), with explicit seeds:

* `mcnemar_exact(b, c)`: McNemar's exact test for a paired binary outcome. `b` counts the items
  right under A and wrong under B, `c` the items wrong under A and right under B; items with the
  same outcome on both sides carry no information about a difference. Under the null hypothesis
  each discordant item is equally likely to fall either way, so `b ~ Binomial(b + c, 1/2)` and the
  two-sided p-value is `min(1, 2 · P(X <= min(b, c)))` (the convention of
  `statsmodels.stats.contingency_tables.mcnemar(exact=True)`). With no discordant pair, p = 1.

* `paired_bootstrap(a, b)`: the mean of the differences `b - a` with a **percentile** bootstrap
  interval (whole pairs resampled with replacement; the interval is the (1-conf)/2 and (1+conf)/2
  quantiles of the resampled means), and a p-value from a **sign-flip permutation test** on the
  same differences (`sign_flip_test`). The permutation test is used for the p-value rather than
  inverting the bootstrap because it is exact under its null hypothesis (the differences are
  symmetric about zero, which holds when A and B are exchangeable within a pair), where bootstrap
  p-values run small on few pairs. All ties (every difference zero) give an interval [0, 0] and
  p = 1; a single pair gives a degenerate interval (low = high = the difference) and p = 1.

* `sign_flip_test(d)`: the statistic is |sum(d)|; the reference distribution flips the sign of
  every difference independently. Up to `EXACT_FLIP_MAX` non-zero differences all 2^n sign
  patterns are enumerated (an exact p-value); above, `n_resamples` random patterns are drawn and
  p = (1 + #{|T*| >= |T|}) / (1 + n_resamples), which is never below 1/(n_resamples + 1) and
  keeps the test's size at or under alpha. Zero differences are left out (a flip changes nothing).

* `holm(p)` and `benjamini_hochberg(p)`: adjusted p-values for a family of tests (Holm's step-down
  family-wise error control; Benjamini and Hochberg's step-up false discovery rate), the same
  numbers as `statsmodels.stats.multitest.multipletests(p, method="holm" | "fdr_bh")[1]`.

Inputs are validated: NaN or infinite values, arrays of different lengths, empty samples, negative
counts and p-values outside [0, 1] raise `ValueError` naming the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import binom

#: up to this many non-zero differences the sign-flip test enumerates every sign pattern
EXACT_FLIP_MAX = 14
#: resampled statistics computed at once (bounds memory: rows x pairs integers per block)
_BLOCK_CELLS = 2_000_000
MAX_RESAMPLES = 1_000_000

Correction = Literal["holm", "bh", "none"]


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's exact test: `b` (A right, B wrong), `c` (A wrong, B right), two-sided `p_value`."""

    b: int
    c: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.b + self.c


@dataclass(frozen=True)
class SignFlipResult:
    """A sign-flip permutation test of the mean difference: `exact` when every pattern was enumerated."""

    statistic: float
    p_value: float
    n_nonzero: int
    exact: bool
    n_resamples: int


@dataclass(frozen=True)
class PairedBootstrap:
    """Mean difference `b - a` over `n` pairs, its percentile bootstrap interval, and the sign-flip p-value.

    `status`: `ok`; `ties` (every difference is zero); `single` (one pair: no interval to speak of).
    """

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    p_value: float
    p_exact: bool
    status: Literal["ok", "ties", "single"] = "ok"
    ci_method: str = "percentile"
    test: str = "sign-flip permutation"


def _check_count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"{name} must be a non-negative whole number, not {value!r}")
    return int(value)


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """McNemar's exact (binomial) test on the discordant counts `b` and `c`.

    >>> mcnemar_exact(1, 9).p_value  # doctest: +ELLIPSIS
    0.0214...
    >>> mcnemar_exact(0, 0).p_value
    1.0
    """
    b, c = _check_count("b", b), _check_count("c", c)
    n = b + c
    if n == 0:
        return McNemarResult(b, c, 1.0)
    p = float(min(1.0, 2.0 * binom.cdf(min(b, c), n, 0.5)))
    return McNemarResult(b, c, p)


def _finite_array(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] is {float(arr[bad[0]])}: NaN and infinite values cannot be compared "
                         f"(leave the item out and report it)")
    return arr


def _check_resamples(n_resamples: int) -> int:
    n = _check_count("n_resamples", n_resamples)
    if n < 1 or n > MAX_RESAMPLES:
        raise ValueError(f"n_resamples must lie between 1 and {MAX_RESAMPLES}, not {n}")
    return n


def sign_flip_test(diffs: Sequence[float] | np.ndarray, n_resamples: int = 10_000, seed: int = 0) -> SignFlipResult:
    """Two-sided sign-flip permutation test that the differences are centred on zero (see the module notes).

    >>> sign_flip_test([1.0, 2.0, 3.0]).p_value  # all 8 patterns; |6| reached by 2 of them
    0.25
    """
    d = _finite_array("diffs", diffs)
    n_resamples = _check_resamples(n_resamples)
    nz = d[d != 0.0]
    observed = float(abs(nz.sum()))
    m = nz.size
    if m == 0:
        return SignFlipResult(0.0, 1.0, 0, True, 0)
    # a tolerance on the comparison, so patterns equal to the observed sum up to rounding count as reached
    tol = 1e-9 * max(1.0, float(np.abs(nz).sum()))
    if m <= EXACT_FLIP_MAX:
        patterns = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        stats = np.abs(patterns @ nz)
        p = float(np.count_nonzero(stats >= observed - tol)) / patterns.shape[0]
        return SignFlipResult(observed, min(1.0, p), m, True, int(patterns.shape[0]))
    rng = np.random.default_rng(seed)
    hits = 0
    rows = max(1, _BLOCK_CELLS // m)
    done = 0
    while done < n_resamples:
        k = min(rows, n_resamples - done)
        signs = rng.integers(0, 2, size=(k, m), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ nz) >= observed - tol))
        done += k
    return SignFlipResult(observed, (1 + hits) / (1 + n_resamples), m, False, n_resamples)


def paired_bootstrap(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, n_resamples: int = 2000,
                     confidence: float = 0.95, seed: int = 0) -> PairedBootstrap:
    """Mean difference `b - a`, percentile bootstrap CI over pairs, sign-flip p-value (module notes).

    >>> r = paired_bootstrap([0.0, 0.5, 0.5, 1.0], [0.5, 1.0, 0.5, 1.0], seed=1)
    >>> r.mean_diff, r.low <= r.mean_diff <= r.high
    (0.25, True)
    """
    x, y = _finite_array("a", a), _finite_array("b", b)
    if x.size != y.size:
        raise ValueError(f"a and b must pair up: {x.size} values against {y.size}")
    if x.size == 0:
        raise ValueError("no pairs to compare")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    n_resamples = _check_resamples(n_resamples)
    d = y - x
    n = int(d.size)
    mean_diff = float(d.mean())
    flip = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
    def result(low: float, high: float, resamples: int, status: Literal["ok", "ties", "single"]) -> PairedBootstrap:
        return PairedBootstrap(n=n, mean_a=float(x.mean()), mean_b=float(y.mean()), mean_diff=mean_diff, low=low,
                               high=high, confidence=confidence, n_resamples=resamples, p_value=flip.p_value,
                               p_exact=flip.exact, status=status)

    if not np.any(d):
        return result(0.0, 0.0, 0, "ties")
    if n == 1:
        return result(mean_diff, mean_diff, 0, "single")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=float)
    rows = max(1, _BLOCK_CELLS // n)
    for start in range(0, n_resamples, rows):
        k = min(rows, n_resamples - start)
        means[start:start + k] = d[rng.integers(0, n, size=(k, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return result(float(low), float(high), n_resamples, "ok")


def _pvalues(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    p = _finite_array("pvalues", pvalues)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("p-values must lie in [0, 1]")
    return p


def _step_adjusted(pvalues: Sequence[float] | np.ndarray,
                   step: Callable[[np.ndarray, int], np.ndarray]) -> list[float]:
    """Adjusted p-values in the input order: `step(sorted p, m)` adjusts them in ascending order."""
    p = _pvalues(pvalues)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.minimum(1.0, step(p[order], m))
    return [float(v) for v in out]


def holm(pvalues: Sequence[float] | np.ndarray) -> list[float]:
    """Holm-adjusted p-values, in the input order.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    return _step_adjusted(pvalues, lambda p, m: np.maximum.accumulate((m - np.arange(m)) * p))


def benjamini_hochberg(pvalues: Sequence[float] | np.ndarray) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in the input order.

    >>> [round(v, 3) for v in benjamini_hochberg([0.01, 0.04, 0.03])]
    [0.03, 0.04, 0.04]
    """
    return _step_adjusted(pvalues, lambda p, m: np.minimum.accumulate((p * m / np.arange(1, m + 1))[::-1])[::-1])


def adjust(pvalues: Sequence[float] | np.ndarray, method: Correction) -> list[float]:
    """`holm`, `benjamini_hochberg` or no correction (`none`: the p-values as given)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "none":
        return [float(v) for v in _pvalues(pvalues)]
    raise ValueError(f"unknown correction {method!r} (holm, bh, none)")


def binomial_upper(successes: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a proportion (used to judge simulated error rates)."""
    successes, trials = _check_count("successes", successes), _check_count("trials", trials)
    if trials == 0 or successes > trials:
        raise ValueError("need 0 <= successes <= trials and trials > 0")
    if successes == trials:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(confidence, successes + 1, trials - successes))


__all__ = ["EXACT_FLIP_MAX", "Correction", "McNemarResult", "PairedBootstrap", "SignFlipResult", "adjust",
           "benjamini_hochberg", "binomial_upper", "holm", "mcnemar_exact", "paired_bootstrap",
           "sign_flip_test"]
