"""Agreement between raters: Cohen's kappa (plain or weighted), Krippendorff's alpha, simple rates.

Conventions shared by every function here:

* Ratings are numbers (points, scale values) or labels; `None` marks a missing rating.
* Pairwise statistics (`cohen_kappa`, `percent_agreement`, `mean_absolute_error`) use only the
  units both raters rated; sequences of different lengths are an error.
* A statistic that has no value on the data (no units, or no variation at all, where kappa and
  alpha divide by zero) returns `None`, never NaN. Callers show it as "undefined".

Weighted kappa with numeric labels weighs a disagreement by the numeric distance between the two
ratings, |x - y| (linear) or (x - y)^2 (quadratic), scaled by the largest distance between labels.
For labels 0, 1, ..., k this is the usual (i - j)^2 / k^2 table; for points such as 0, 0.5, 2 it
keeps the real spacing instead of treating neighbours in sorted order as one step apart. Pass
`labels` to fix the scale (e.g. every possible point value of a criterion) rather than using only
the observed ratings.

    >>> cohen_kappa([0, 1, 2, 2], [0, 1, 2, 2])
    1.0
    >>> round(krippendorff_alpha([[1, 2, 3], [1, 2, 4]], level="interval"), 3)
    0.878
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

Rating = float | int | str | None
Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]


def _complete_pairs(a: Sequence[Rating], b: Sequence[Rating]) -> list[tuple[Rating, Rating]]:
    if len(a) != len(b):
        raise ValueError(f"the two raters rated different numbers of units ({len(a)} and {len(b)})")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _sort_labels(labels: list[Hashable]) -> list[Hashable]:
    if all(_is_number(x) for x in labels):
        return sorted(labels, key=float)  # type: ignore[arg-type]
    return sorted(labels, key=str)


def cohen_kappa(
    a: Sequence[Rating],
    b: Sequence[Rating],
    weights: Weights = None,
    labels: Sequence[Rating] | None = None,
) -> float | None:
    """Cohen's kappa between two raters; `weights="quadratic"` gives the quadratic-weighted kappa.

    kappa = 1 - sum(w * observed) / sum(w * expected), where `observed` is the joint distribution
    of the two ratings, `expected` the product of its margins and `w` the disagreement weight
    (0 on the diagonal). Returns `None` when there is no unit rated by both, or when chance
    disagreement is zero (both raters used one and the same label throughout).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 3)
    0.5
    """
    pairs = _complete_pairs(a, b)
    if not pairs:
        return None
    observed_labels = {x for p in pairs for x in p}
    scale = list(labels) if labels is not None else list(observed_labels)
    missing = observed_labels - set(scale)
    if missing:
        raise ValueError(f"ratings outside the given labels: {sorted(map(str, missing))}")
    order = _sort_labels(list(dict.fromkeys(x for x in scale if x is not None)))
    index = {label: i for i, label in enumerate(order)}
    k = len(order)
    joint = np.zeros((k, k))
    for x, y in pairs:
        joint[index[x], index[y]] += 1
    joint /= joint.sum()
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    w = _kappa_weights(order, weights)
    chance = float((w * expected).sum())
    if chance <= 1e-15:
        return None
    return 1.0 - float((w * joint).sum()) / chance


def _kappa_weights(order: list[Hashable], weights: Weights) -> np.ndarray:
    k = len(order)
    if weights is None:
        return 1.0 - np.eye(k)
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    numeric = all(_is_number(x) for x in order)
    pos = np.asarray([float(x) for x in order]) if numeric else np.arange(k, dtype=float)  # type: ignore[arg-type]
    dist = np.abs(pos[:, None] - pos[None, :])
    span = float(dist.max()) if k > 1 else 1.0
    dist = dist / (span or 1.0)
    return dist if weights == "linear" else dist**2


def percent_agreement(a: Sequence[Rating], b: Sequence[Rating], tolerance: float = 0.0) -> float | None:
    """The share of units both raters rated on which they agree (numbers: within `tolerance`).

    >>> percent_agreement([1, 2, 3, None], [1, 2, 4, 4])
    0.6666666666666666
    """
    pairs = _complete_pairs(a, b)
    if not pairs:
        return None
    agree = 0
    for x, y in pairs:
        if _is_number(x) and _is_number(y):
            agree += abs(float(x) - float(y)) <= tolerance  # type: ignore[arg-type]
        else:
            agree += x == y
    return agree / len(pairs)


def mean_absolute_error(a: Sequence[Rating], b: Sequence[Rating]) -> float | None:
    """Mean |a - b| over the units both raters rated (numeric ratings only).

    >>> mean_absolute_error([1, 2, 3], [2, 2, 5])
    1.0
    """
    pairs = _complete_pairs(a, b)
    if not pairs:
        return None
    if not all(_is_number(x) and _is_number(y) for x, y in pairs):
        raise ValueError("mean absolute error needs numeric ratings")
    return float(np.mean([abs(float(x) - float(y)) for x, y in pairs]))  # type: ignore[arg-type]


def krippendorff_alpha(ratings: Sequence[Sequence[Rating]], level: Level = "interval") -> float | None:
    """Krippendorff's alpha; `ratings[r][u]` is rater r's value for unit u (`None` when missing).

    alpha = 1 - D_o / D_e, computed from the coincidence matrix: a unit with m >= 2 ratings adds
    1/(m-1) for each ordered pair of ratings by different raters; units with fewer than two
    ratings are not pairable and drop out. `level` picks the difference function: nominal (0/1),
    ordinal (ranks by the marginal counts), interval ((c-k)^2) or ratio (((c-k)/(c+k))^2).
    Returns `None` when fewer than two pairable values exist or every pairable value is equal.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, not {level!r}")
    if not ratings:
        return None
    n_units = len(ratings[0])
    if any(len(row) != n_units for row in ratings):
        raise ValueError("every rater's row must cover the same units")
    values = [v for row in ratings for v in row if v is not None]
    if level != "nominal" and not all(_is_number(v) for v in values):
        raise ValueError(f"{level} alpha needs numeric ratings")
    order = _sort_labels(list(dict.fromkeys(values)))
    index = {label: i for i, label in enumerate(order)}
    k = len(order)
    coincidence = np.zeros((k, k))
    for u in range(n_units):
        unit = [index[row[u]] for row in ratings if row[u] is not None]
        m = len(unit)
        if m < 2:
            continue
        counts = np.bincount(unit, minlength=k).astype(float)
        pair_counts = np.outer(counts, counts) - np.diag(counts)  # ordered pairs, different raters
        coincidence += pair_counts / (m - 1)
    marginals = coincidence.sum(axis=1)
    n = float(marginals.sum())
    if n < 2:
        return None
    delta = _alpha_differences(order, marginals, level)
    disagreement_observed = float((coincidence * delta).sum())
    disagreement_expected = float((np.outer(marginals, marginals) * delta).sum())
    if disagreement_expected <= 1e-15:
        return None
    return 1.0 - (n - 1) * disagreement_observed / disagreement_expected


def _alpha_differences(order: list[Hashable], marginals: np.ndarray, level: Level) -> np.ndarray:
    k = len(order)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        # delta(c, k) = (sum of marginals from c to k, minus half of the two end marginals)^2
        cum = np.concatenate([[0.0], np.cumsum(marginals)])
        out = np.zeros((k, k))
        for i in range(k):
            for j in range(i, k):
                d = cum[j + 1] - cum[i] - (marginals[i] + marginals[j]) / 2
                out[i, j] = out[j, i] = d * d
        return out
    pos = np.asarray([float(x) for x in order])  # type: ignore[arg-type]
    diff = pos[:, None] - pos[None, :]
    if level == "interval":
        return diff**2
    total = pos[:, None] + pos[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total == 0, 0.0, diff / np.where(total == 0, 1.0, total))
    return ratio**2

