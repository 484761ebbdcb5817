"""Agreement of two raters who each say yes or no: percent agreement and Cohen's kappa, with
bootstrap intervals computed from the 2x2 table.

Resampling n units with replacement from a 2x2 table of yes/no pairs draws the four cell counts
from a multinomial distribution with the observed proportions, so the percentile bootstrap of
`stats.bootstrap` is computed here from `n_resamples` multinomial draws of the table, vectorised:
the same estimator, in time independent of n. The point estimates are those of
`stats.agreement` (`percent_agreement`, `cohen_kappa`); kappa is undefined (None) when chance
agreement is 1 (both raters said the same word throughout), and resamples where it is undefined
are counted and left out, as in `bootstrap_ci`.

    >>> agreement, kappa = binary_agreement(TwoByTwo(both_yes=40, a_only=5, b_only=3, both_no=52), seed=1)
    >>> agreement.estimate, round(kappa.estimate, 3)
    (0.92, 0.838)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mathlens.stats.bootstrap import CI, percentile_interval


@dataclass(frozen=True)
class TwoByTwo:
    """Counts of units by the two raters' words: both yes, only a yes, only b yes, both no."""

    both_yes: int
    a_only: int
    b_only: int
    both_no: int

    @property
    def n(self) -> int:
        return self.both_yes + self.a_only + self.b_only + self.both_no


def _stats(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(agreement, kappa) per row of cell counts [both_yes, a_only, b_only, both_no]; kappa NaN
    where chance agreement is 1."""
    cells = cells.astype(float)
    n = cells.sum(axis=1)
    agree = (cells[:, 0] + cells[:, 3]) / n
    a_yes = (cells[:, 0] + cells[:, 1]) / n
    b_yes = (cells[:, 0] + cells[:, 2]) / n
    chance = a_yes * b_yes + (1 - a_yes) * (1 - b_yes)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(np.isclose(chance, 1.0), np.nan, (agree - chance) / (1 - chance))
    return agree, kappa


def _interval(estimate: float | None, draws: np.ndarray, n: int, n_resamples: int, confidence: float) -> CI:
    if estimate is None or not np.isfinite(estimate):
        return CI(estimate=None, low=None, high=None, n=n, confidence=confidence, status="undefined")
    if n == 1 or n_resamples == 0:
        return CI(estimate=estimate, low=estimate, high=estimate, n=n, confidence=confidence, status="degenerate")
    finite = draws[np.isfinite(draws)]
    return percentile_interval(estimate, finite, n, n_resamples, int(draws.size - finite.size), confidence)


def binary_agreement(table: TwoByTwo, n_resamples: int = 2000, confidence: float = 0.95,
                     seed: int = 0) -> tuple[CI, CI]:
    """(percent agreement, Cohen's kappa) of a 2x2 table, each with its percentile bootstrap interval."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    n = table.n
    if n == 0:
        empty = CI(estimate=None, low=None, high=None, n=0, confidence=confidence, status="empty")
        return empty, empty
    observed = np.array([[table.both_yes, table.a_only, table.b_only, table.both_no]])
    agree0, kappa0 = _stats(observed)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, observed[0] / n, size=n_resamples) if n_resamples else np.zeros((0, 4))
    agree, kappa = _stats(draws) if n_resamples else (np.zeros(0), np.zeros(0))
    kappa_estimate = float(kappa0[0]) if np.isfinite(kappa0[0]) else None
    return (_interval(float(agree0[0]), agree, n, n_resamples, confidence),
            _interval(kappa_estimate, kappa, n, n_resamples, confidence))
