"""What a step check returns, as plain values: no SymPy here, so a caller that only reads verdicts
(the CLI, the flow analysis, a notebook) never imports the symbolic machinery.

A `ClaimCheck` is the verdict on one relation of a step. Besides its status it says how the verdict
was reached (`kind`, one of `CLAIM_KINDS`) and which reading choices it rests on (`reading`): a
claim read with a guess the solution does not confirm (a letter run taken as a product, ``e`` as
Euler's number, ``1/2x`` as x/2...) is never ``invalid``, only ``unverifiable``
(`analyze/verify/guesses.py`). `confidence` grades a flag by its kind, from the precision each
kind reached on labelled steps (docs/flow.md, "How sure a flag is").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ClaimStatus = Literal["valid", "invalid", "unverifiable", "definition"]
StepStatus = Literal["ok", "timeout", "error", "skipped"]
#: how a verdict was reached
ClaimKind = Literal[
    "arithmetic",         # rational numbers computed exactly (12 * 4 = 48)
    "evaluation",         # numbers with roots, π, logarithms, trigonometry worked out exactly
    "rounding",           # decimals to the digits written, ≈
    "whole-number",       # quotient and remainder, congruences, gcd and lcm
    "symbolic identity",  # expand/cancel to zero, or a polynomial that does not
    "numeric sampling",   # the difference evaluated at sample points
    "derivative rule",    # a derivative, partial derivative or gradient against its definition
    "antiderivative",     # an indefinite integral, by differentiating the answer
    "limit",              # a limit, definite integral or sum worked out
    "equation",           # a value substituted into an equation, a rewriting of an equation
    "code output",        # the output written under a code block, against what the code prints
    "",                   # not decided (definitions, undecided claims)
]
CLAIM_KINDS: tuple[str, ...] = ("arithmetic", "evaluation", "rounding", "whole-number", "symbolic identity",
                                "numeric sampling", "derivative rule", "antiderivative", "limit", "equation",
                                "code output")
Confidence = Literal["high", "medium", "low"]

#: How sure an `invalid` verdict of each kind is, from the precision each kind reached as a flag
#: (bench/bench_verify_kinds.py and bench_verify_calculus.py, docs/flow.md): ``high`` at least 0.9
#: on data made here (perturbed GSM8K/MATH500 reference solutions, calculus steps) over 20 or more
#: flags; ``medium`` at least 0.6 wherever it was measured; ``low`` below that, or too few flags to
#: say (a kind without a grade is ``low``).
KIND_CONFIDENCE: dict[str, Confidence] = {
    "arithmetic": "high", "whole-number": "medium", "derivative rule": "high", "antiderivative": "high",
    "evaluation": "medium", "rounding": "medium", "equation": "medium", "limit": "medium",
    "symbolic identity": "low", "numeric sampling": "low", "code output": "medium",
}


def confidence(kind: str) -> Confidence:
    """How sure a flag of this kind is (``low`` for a kind without a grade).

    >>> confidence("arithmetic"), confidence("numeric sampling")
    ('high', 'low')
    """
    return KIND_CONFIDENCE.get(kind, "low")


#: why an equation in unknowns is undecided: it is a condition to solve, not an identity
EQUATION_REASON = "an equation to solve, not an identity"


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on one relation of a step.

    `expected` is what the left side actually is (for an invalid claim); `method` the check in
    words; `reason` why a claim is undecided; `kind` how the verdict was reached; `reading` the
    reading choices it rests on (each guess says whether the solution confirmed it).
    """

    text: str
    status: ClaimStatus
    expected: str = ""
    method: str = ""
    reason: str = ""
    kind: str = ""
    reading: tuple[str, ...] = ()

    @property
    def is_equation(self) -> bool:
        """Whether the claim is an equation in unknowns: checked as one (a value put into it, a
        rewriting of it) or left undecided as one to solve."""
        return self.kind == "equation" or self.reason == EQUATION_REASON


@dataclass(frozen=True)
class StepMath:
    """The symbolic reading of one step."""

    status: StepStatus = "ok"
    claims: tuple[ClaimCheck, ...] = ()
    depth: int = 0
    cues: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    spans: int = 0
    parsed: int = 0
    error: str = ""
    elapsed_s: float = 0.0

    @property
    def verdict(self) -> Literal["valid", "invalid", "unverifiable", "none"]:
        """``invalid`` if any claim is, ``valid`` if some are and none is invalid, ``none`` when
        the step states nothing checkable."""
        statuses = {c.status for c in self.claims}
        if "invalid" in statuses:
            return "invalid"
        if "valid" in statuses:
            return "valid"
        if "unverifiable" in statuses or self.status != "ok":
            return "unverifiable"
        return "none"


STEP_TIMEOUT_S = 2.0
SOLUTION_BUDGET_S = 10.0
#: Math snippets checked in one solution; later steps are `skipped` (a worked answer has < 100).
MAX_SPANS_PER_SOLUTION = 300


@dataclass(frozen=True)
class VerifyConfig:
    """Time budgets for `verify_steps`."""

    step_timeout_s: float = STEP_TIMEOUT_S
    solution_budget_s: float = SOLUTION_BUDGET_S
    max_spans: int = MAX_SPANS_PER_SOLUTION
