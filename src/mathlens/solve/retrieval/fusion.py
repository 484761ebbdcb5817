"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009).

Each ranking contributes 1 / (k + rank) to an item it contains (rank counted from 1); items are
ordered by their summed contribution. k = 60 is the constant of the original paper; it damps the
weight of the very first ranks so that no single ranking dominates.
"""

from __future__ import annotations

from collections.abc import Sequence


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Fuse rankings of ids into one list of (id, fused score), best first.

    Ties are broken by the best single rank an item reached, then by id, so the order is stable.

    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=1)[0][0]
    'b'
    """
    if k < 0:
        raise ValueError("k must not be negative")
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    score: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + w / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(score.items(), key=lambda p: (-p[1], best[p[0]], p[0]))
