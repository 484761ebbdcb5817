"""Consistency across repeated runs of the same prompt (calculus seed 000, §5.3).

The seed re-ran one exam five times and found the same marks each time. With `--runs N` we
measure, per question, how often the repeats agree on the final answer and how similar their
texts are: the share of repeat pairs whose final answers are equivalent, the share of repeats
giving the most common answer, and the mean pairwise TF-IDF cosine (vectoriser fitted on that
question's repeats). Degenerate responses are left out before this (by the caller) and counted in
`excluded_degenerate`.

Final answers are compared only where both repeats state one in full, as for answer flips
(`mathlens.analyze.ablation.metrics`): a pair in which either response states no final answer, or
either was cut by the token cap, is left out of the answer agreement and counted beside it
(`n_answer_unanswered`, `n_answer_truncated`); the modal share is taken over the repeats that
answered in full (`n_answered_runs`). A pair whose two answers cannot be compared (neither equal
nor different to the checker) is counted in `n_unknown_pairs`, never as agreeing. The text
cosine compares whole responses and keeps every usable repeat.
"""

from __future__ import annotations

import itertools
from statistics import fmean
from typing import Literal

from pydantic import BaseModel

from mathlens.analyze.ablation.divergence import pairwise_cosines
from mathlens.analyze.ablation.outcomes import compare_answers
from mathlens.items.schema import Question

#: why a response's final answer cannot be compared: it states none, or the token cap cut it
Unanswered = Literal["no_final_answer", "truncated"]


class Consistency(BaseModel):
    """Agreement of the original prompt's repeats. `status="single_run"` with fewer than two."""

    status: Literal["ok", "single_run"]
    n_runs: int
    #: share of compared pairs (both repeats answered in full, answers comparable) that agree
    answer_agreement: float | None = None
    n_answer_pairs: int = 0
    #: pairs of answered repeats whose answers could not be compared
    n_unknown_pairs: int = 0
    #: pairs left out: a repeat without a final answer / a repeat cut by the token cap
    n_answer_unanswered: int = 0
    n_answer_truncated: int = 0
    #: share of the repeats answered in full that give the most common answer
    modal_share: float | None = None
    n_answered_runs: int = 0
    mean_pairwise_cosine: float | None = None
    excluded_degenerate: int = 0


def _pair_left_out(a: Unanswered | None, b: Unanswered | None) -> Unanswered | None:
    if "no_final_answer" in (a, b):
        return "no_final_answer"
    return "truncated" if "truncated" in (a, b) else None


def repeat_consistency(responses: list[str], question: Question | None, answers: bool = True,
                       unanswered: list[Unanswered | None] | None = None) -> Consistency:
    """Consistency of the responses to one prompt over repeats (in repeat order).

    `unanswered[i]` says why response i's final answer cannot be compared (None: it states one in
    full); without it every response counts as answered."""
    n = len(responses)
    if n < 2:
        return Consistency(status="single_run", n_runs=n)
    why = unanswered if unanswered is not None else [None] * n
    if len(why) != n:
        raise ValueError("one unanswered reason per response")
    cosines = pairwise_cosines(responses)
    counts = {"agree": 0, "compared": 0, "unknown": 0, "no_final_answer": 0, "truncated": 0}
    answered = [i for i in range(n) if why[i] is None]
    groups: list[list[int]] = []
    if answers:
        same: dict[tuple[int, int], bool] = {}
        for i, j in itertools.combinations(range(n), 2):
            left_out = _pair_left_out(why[i], why[j])
            if left_out is not None:
                counts[left_out] += 1
                continue
            cmp = compare_answers(responses[i], responses[j], question)
            if cmp.status == "unknown":
                counts["unknown"] += 1
                continue
            counts["compared"] += 1
            counts["agree"] += cmp.status == "same"
            same[(i, j)] = cmp.status == "same"
        # Group the answered repeats whose answers match the group's first member, for the modal share.
        for i in answered:
            for g in groups:
                if same.get((g[0], i), False):
                    g.append(i)
                    break
            else:
                groups.append([i])
    compared = counts["compared"]
    modal = max(len(g) for g in groups) / len(answered) if groups and compared else None
    return Consistency(
        status="ok", n_runs=n, answer_agreement=counts["agree"] / compared if compared else None,
        n_answer_pairs=compared, n_unknown_pairs=counts["unknown"],
        n_answer_unanswered=counts["no_final_answer"], n_answer_truncated=counts["truncated"],
        modal_share=modal, n_answered_runs=len(answered) if answers else 0,
        mean_pairwise_cosine=fmean(cosines) if cosines else None,
    )
