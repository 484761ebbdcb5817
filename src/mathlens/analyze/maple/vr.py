"""Solution validity v and redundancy r for the MAPLE score, from one of three sources.

* `flow` (default): our own analysis of the solution (mathlens.analyze.flow).
  v = share of the steps whose symbolic check could decide that are valid (mode `share`), or 0/1
  as the minimum over those steps (mode `min`, the solution-level rule ReasonEval uses). With no
  decidable step, v = 1 and `v_basis = "no-verifiable-steps"`: nothing shows the solution invalid,
  and the basis is stored beside the score so such solutions can be filtered.
  r = share of steps that the reasoning graph marks as not leading to the answer (mode `share`), or
  the maximum over the steps (mode `max`: 1 when any step is off the path to the answer).
  `min` validity with `max` redundancy is ReasonEval's solution-level rule applied to mathlens's
  own step scores, which are 0/1 per step (a step is valid or not, redundant or not).
* `judge`: the judge's own estimates (asked for in the same request as the step labels).
* `reasoneval`: the ReasonEval checkpoint at a user-given local path (see reasoneval.py).

The floor that keeps the score defined (r or v = 0 as a divisor) is applied by `score.maple_score`,
not here: the values stored as v and r are the measured ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mathlens.analyze.flow.models import FlowResult, HybridResult

VRSource = Literal["flow", "judge", "reasoneval"]
VR_SOURCES: tuple[VRSource, ...] = ("flow", "judge", "reasoneval")
ValidityMode = Literal["share", "min"]
RedundancyMode = Literal["share", "max"]


@dataclass(frozen=True)
class VR:
    """Validity and redundancy with where they came from (`None` when the source gave nothing)."""

    v: float | None
    r: float | None
    source: str
    v_basis: str = ""
    r_basis: str = ""
    error: str = ""


def validity_from_checks(checks: Sequence[bool | None], mode: ValidityMode = "share") -> tuple[float, str]:
    """v from per-step checks (True valid, False invalid, None undecided), and its basis.

    >>> validity_from_checks([True, False, None, True])
    (0.6666666666666666, '2/3 decidable steps valid')
    >>> validity_from_checks([True, False], mode="min")
    (0.0, 'min over 2 decidable steps')
    >>> validity_from_checks([None])
    (1.0, 'no-verifiable-steps')
    """
    decided = [c for c in checks if c is not None]
    if not decided:
        return 1.0, "no-verifiable-steps"
    if mode == "min":
        return (1.0 if all(decided) else 0.0), f"min over {len(decided)} decidable steps"
    valid = sum(decided)
    return valid / len(decided), f"{valid}/{len(decided)} decidable steps valid"


def redundancy_from_steps(n_steps: int, redundant: Sequence[int], mode: RedundancyMode = "share") -> tuple[float, str]:
    """r over the `n_steps` steps whose 0-based index is in `redundant`, and its basis: their share,
    or the maximum of the 0/1 step redundancies (mode `max`, ReasonEval's solution-level rule).

    >>> redundancy_from_steps(4, [1, 3, 3])
    (0.5, '2/4 steps off the path to the answer')
    >>> redundancy_from_steps(4, [1], mode="max")
    (1.0, 'max over 4 steps (1 off the path to the answer)')
    """
    if n_steps <= 0:
        return 0.0, "no steps"
    hits = {i for i in redundant if 0 <= i < n_steps}
    if mode == "max":
        return (1.0 if hits else 0.0), f"max over {n_steps} steps ({len(hits)} off the path to the answer)"
    return len(hits) / n_steps, f"{len(hits)}/{n_steps} steps off the path to the answer"


_VERDICT = {"valid": True, "invalid": False}

#: added to r's basis for a response the token cap cut: its path ends at the last step written
CUT_BASIS = " (cut by the token cap: the path runs to the last step written, not to an answer)"


def vr_from_flow(flow: FlowResult, mode: ValidityMode = "share", hybrid: HybridResult | None = None,
                 redundancy_mode: RedundancyMode = "share", *, cut: bool = False) -> VR:
    """v and r from a `FlowResult` of `mathlens.analyze.flow.analyze_solution`.

    A step's verdict `valid`/`invalid` decides it; `unverifiable` and `none` (no checkable claim)
    leave it undecided. With a `hybrid` check (`--step-judge`), the verdicts are the hybrid ones:
    SymPy's where it decided, the judge's for the rest (the source is then ``flow+judge``).
    Redundant steps are those with mathematics from which no final step of the reasoning graph
    can be reached. In a response the token cap `cut`, the final step is the last one written, not
    an answer: steps the rest would have used count as off the path, and the basis says so.
    """
    verdicts = [s.verdict for s in hybrid.steps] if hybrid is not None else [s.verdict for s in flow.steps]
    v, v_basis = validity_from_checks([_VERDICT.get(v) for v in verdicts], mode)
    r, r_basis = redundancy_from_steps(len(flow.steps), flow.metrics.redundant_steps, redundancy_mode)
    if cut:
        r_basis += CUT_BASIS
    source = "flow+judge" if hybrid is not None else "flow"
    return VR(v=v, r=r, source=source, v_basis=v_basis, r_basis=r_basis)
