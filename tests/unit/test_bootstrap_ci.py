"""Bootstrap intervals: determinism, coverage on a known distribution, and failure statuses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from mathlens.stats.agreement import cohen_kappa
from mathlens.stats.bootstrap import bootstrap_ci


def test_estimate_is_the_statistic_of_the_sample() -> None:
    ci = bootstrap_ci([1.0, 2.0, 3.0, 6.0], n_resamples=300, seed=4)
    assert ci.estimate == pytest.approx(3.0)
    assert ci.n == 4 and ci.status == "ok"
    assert ci.low is not None and ci.high is not None
    assert 1.0 <= ci.low <= 3.0 <= ci.high <= 6.0


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    values = list(np.random.default_rng(0).normal(size=50))
    assert bootstrap_ci(values, seed=7) == bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7).low != bootstrap_ci(values, seed=8).low


def test_interval_width_shrinks_with_n_and_covers_the_mean() -> None:
    rng = np.random.default_rng(1)
    small = bootstrap_ci(list(rng.normal(10, 2, 40)), seed=0)
    large = bootstrap_ci(list(rng.normal(10, 2, 4000)), seed=0)
    assert None not in (small.low, small.high, large.low, large.high)
    assert small.low is not None and small.high is not None
    assert large.low is not None and large.high is not None
    assert large.high - large.low < (small.high - small.low) / 4
    assert large.low < 10 < large.high
    # for a normal mean the percentile interval is close to +-1.96 sigma/sqrt(n)
    assert large.high - large.low == pytest.approx(2 * 1.96 * 2 / np.sqrt(4000), rel=0.15)


def test_constant_values_give_a_zero_width_interval() -> None:
    ci = bootstrap_ci([2.0] * 10)
    assert (ci.estimate, ci.low, ci.high) == (2.0, 2.0, 2.0)


def test_empty_single_and_undefined() -> None:
    assert bootstrap_ci([]).status == "empty"
    one = bootstrap_ci([5.0])
    assert one.status == "degenerate" and one.estimate == 5.0

    def kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
        return cohen_kappa([p[0] for p in pairs], [p[1] for p in pairs])

    # both raters constant: kappa has no value on the sample at all
    assert bootstrap_ci([(1, 1)] * 5, stat=kappa).status == "undefined"
    # resamples that happen to be constant are dropped and counted
    pairs = [(1, 1), (0, 0), (1, 1), (0, 1)]
    ci = bootstrap_ci(pairs, stat=kappa, n_resamples=400, seed=2)
    assert ci.status == "ok" and 0 < ci.undefined < 400
    assert ci.format().startswith(f"{ci.estimate:.3f} [")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], confidence=1.5)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], n_resamples=-1)
