"""Consistency across repeated runs of the same prompt (calculus seed 000, §5.3).

The seed re-ran one exam five times and found the same marks each time. With `--runs N` we
measure, per question, how often the repeats agree on the final answer and how similar their
texts are: the share of repeat pairs whose final answers are equivalent (pairs where an answer
is missing are left out and counted), the share of repeats giving the most common answer, and
the mean pairwise TF-IDF cosine (vectoriser fitted on that question's repeats). Degenerate
responses are left out before this (by the caller) and counted in `excluded_degenerate`.
"""

from __future__ import annotations

import itertools
from statistics import fmean
from typing import Literal

from pydantic import BaseModel

from mathlens.analyze.ablation.divergence import pairwise_cosines
from mathlens.analyze.ablation.outcomes import compare_answers
from mathlens.items.schema import Question


class Consistency(BaseModel):
    """Agreement of the original prompt's repeats. `status="single_run"` with fewer than two."""

    status: Literal["ok", "single_run"]
    n_runs: int
    answer_agreement: float | None = None
    n_answer_pairs: int = 0
    n_unknown_pairs: int = 0
    modal_share: float | None = None
    mean_pairwise_cosine: float | None = None
    excluded_degenerate: int = 0


def repeat_consistency(responses: list[str], question: Question | None, answers: bool = True) -> Consistency:
    """Consistency of the responses to one prompt over repeats (in repeat order)."""
    n = len(responses)
    if n < 2:
        return Consistency(status="single_run", n_runs=n)
    cosines = pairwise_cosines(responses)
    agree = compared = unknown = 0
    groups: list[list[int]] = []
    if answers:
        same: dict[tuple[int, int], bool] = {}
        for i, j in itertools.combinations(range(n), 2):
            cmp = compare_answers(responses[i], responses[j], question)
            if cmp.status == "unknown":
                unknown += 1
                continue
            compared += 1
            agree += cmp.status == "same"
            same[(i, j)] = cmp.status == "same"
        # Group repeats whose answers match the group's first member, for the modal share.
        for i in range(n):
            for g in groups:
                if same.get((g[0], i), False):
                    g.append(i)
                    break
            else:
                groups.append([i])
    modal = max(len(g) for g in groups) / n if groups and compared else None
    return Consistency(
        status="ok", n_runs=n, answer_agreement=agree / compared if compared else None,
        n_answer_pairs=compared, n_unknown_pairs=unknown, modal_share=modal,
        mean_pairwise_cosine=fmean(cosines) if cosines else None,
    )
