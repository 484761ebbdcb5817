"""Percentile bootstrap confidence intervals with an explicit seed.

    >>> ci = bootstrap_ci([1.0, 2.0, 3.0, 4.0], n_resamples=500, seed=1)
    >>> ci.estimate, ci.n
    (2.5, 4)
    >>> ci.low <= 2.5 <= ci.high
    True

The statistic is computed on the original sample (`estimate`) and on `n_resamples` samples drawn
with replacement; `low`/`high` are the (1-confidence)/2 and (1+confidence)/2 quantiles of the
resampled statistics. Any sequence can be resampled (numbers, pairs of ratings, columns of a
rating matrix), so one function serves means, kappas and alphas alike.

A statistic may be undefined on a sample (a kappa when both raters gave one constant label): it
then returns `None`. Such resamples are left out and counted in `undefined`; if the statistic is
undefined on the original sample the interval has `status="undefined"` and no numbers, rather
than a NaN that would travel silently into a table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")

CIStatus = Literal["ok", "empty", "undefined", "degenerate"]


class CI(BaseModel):
    """A point estimate with a bootstrap interval.

    `status`: `ok`; `empty` (no values); `undefined` (the statistic has no value on the sample);
    `degenerate` (one value only, or every resample undefined: the estimate stands without an
    interval, `low == high == estimate`).
    """

    model_config = ConfigDict(frozen=True)

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float = 0.95
    n_resamples: int = 0
    undefined: int = 0
    status: CIStatus = "ok"

    def format(self, digits: int = 3) -> str:
        """`"0.812 [0.701, 0.903]"`, or the status word when there is no estimate."""
        if self.estimate is None:
            return self.status
        est = f"{self.estimate:.{digits}f}"
        if self.low is None or self.high is None or self.status != "ok":
            return est
        return f"{est} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def mean(values: Sequence[Any]) -> float | None:
    """The arithmetic mean, `None` for an empty sequence."""
    return fmean(values) if len(values) else None


def _finite(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def bootstrap_ci(
    values: Sequence[T],
    stat: Callable[[Sequence[T]], float | None] = mean,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> CI:
    """Percentile bootstrap interval for `stat(values)`.

    `values` is resampled with replacement as whole items, so for paired data pass the pairs
    (`list(zip(a, b))`) and a statistic that unpacks them. A NaN or infinite statistic counts as
    undefined, the same as `None`.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    if n_resamples < 0:
        raise ValueError("n_resamples must not be negative")
    items = list(values)
    n = len(items)
    if n == 0:
        return CI(estimate=None, low=None, high=None, n=0, confidence=confidence, status="empty")
    estimate = _finite(stat(items))
    if estimate is None:
        return CI(estimate=None, low=None, high=None, n=n, confidence=confidence, status="undefined")
    if n == 1 or n_resamples == 0:
        return CI(estimate=estimate, low=estimate, high=estimate, n=n, confidence=confidence,
                  status="degenerate")
    import numpy as np  # here: the CI model is read by light commands that draw nothing

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_resamples, n))
    if stat is mean and all(isinstance(v, (int, float)) for v in items):
        # The common case, vectorised: a mean of 2000 resamples of a few thousand numbers.
        arr = np.asarray(items, dtype=float)
        stats = arr[draws].mean(axis=1)
        undefined = 0
    else:
        collected: list[float] = []
        for row in draws:
            value = _finite(stat([items[i] for i in row]))
            if value is not None:
                collected.append(value)
        undefined = n_resamples - len(collected)
        stats = np.asarray(collected, dtype=float)
    return percentile_interval(estimate, stats, n, n_resamples, undefined, confidence)


def percentile_interval(estimate: float, stats: Any, n: int, n_resamples: int, undefined: int,
                        confidence: float) -> CI:
    """The percentile interval of the finite resample statistics `stats` (a NumPy array) around
    `estimate`; degenerate (the estimate alone) when no resample gave a value."""
    import numpy as np

    if stats.size == 0:
        return CI(estimate=estimate, low=estimate, high=estimate, n=n, confidence=confidence,
                  n_resamples=n_resamples, undefined=undefined, status="degenerate")
    alpha = (1 - confidence) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return CI(estimate=estimate, low=float(low), high=float(high), n=n, confidence=confidence,
              n_resamples=n_resamples, undefined=undefined, status="ok")
