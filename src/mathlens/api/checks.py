"""One answer, one solution: the answer check, the step checks and the reasoning-flow analysis.

Each function is what the analyses of a run do to one response, with no run around it:
`check_answer` is the `answers` analysis's check, `verify_steps` the step checks of the `flow`
analysis, `flow` the whole flow analysis. The symbolic work runs in a worker process under a time
budget, as in a run; nothing here raises on odd input (hostile text is bounded as in a run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mathlens.analyze.flow.models import FlowResult
    from mathlens.analyze.flow.solution import FlowConfig
    from mathlens.analyze.grading.equivalence import EquivalenceConfig
    from mathlens.analyze.grading.verdicts import AnswerVerdict
    from mathlens.analyze.verify.results import ClaimCheck, Confidence, VerifyConfig

StepVerdict = Literal["valid", "invalid", "unverifiable", "none"]


@dataclass(frozen=True)
class StepCheck:
    """The check of one step of a solution.

    `text` is `solution[start:end]` (stripped); `verdict` is ``invalid`` when a claim of the step is
    false, ``valid`` when some are true and none false, ``unverifiable`` when the step states
    something the checker could not decide (or its check ran out of time: `status`), ``none`` when
    it states nothing checkable. `claims` holds each relation checked, with what its left side
    really is when it is false (`expected`), how it was decided (`kind`) and the reading choices it
    rests on; `confidence` is how sure the surest flag of the step is (None when nothing is false).
    """

    index: int
    text: str
    start: int
    end: int
    verdict: StepVerdict
    status: Literal["ok", "timeout", "error", "skipped"]
    claims: tuple[ClaimCheck, ...] = ()
    confidence: Confidence | None = None
    notes: tuple[str, ...] = ()
    error: str = ""

    @property
    def invalid(self) -> bool:
        """True when a claim of this step is false."""
        return self.verdict == "invalid"


#: what `check_answer` compares with: one accepted answer, several, or one (or several) per part
Reference = str | Sequence[str] | Mapping[str, str | Sequence[str]]


def _accepted(reference: str | Sequence[str]) -> list[str]:
    return [a for a in ([reference] if isinstance(reference, str) else [str(r) for r in reference]) if a.strip()]


def _question(reference: Reference, question: str | None,
              choices: Mapping[str, str] | Sequence[str] | None) -> object:
    from mathlens.items.schema import Part, Question

    if isinstance(reference, Mapping):  # a question with lettered parts: label -> accepted answer(s)
        parts = [Part(label=str(label), text=f"part ({label})", answers=_accepted(refs))
                 for label, refs in reference.items()]
        return Question(id="q", text=question or "(question)", parts=parts)
    answers = _accepted(reference)
    labelled: dict[str, str] | None = None
    if isinstance(choices, Mapping):
        labelled = {str(k): str(v) for k, v in choices.items()}
    elif choices is not None:
        labelled = {chr(ord("A") + i): str(v) for i, v in enumerate(choices)}
    return Question(id="q", text=question or "(question)", answers=answers, choices=labelled or None)


def check_answer(response: str, reference: Reference, *, question: str | None = None,
                 choices: Mapping[str, str] | Sequence[str] | None = None,
                 config: EquivalenceConfig | None = None, cut: bool = False) -> AnswerVerdict:
    """Read the final answer of `response` and compare it with `reference` (one accepted answer,
    several, or a mapping from part labels to each part's accepted answer or answers, which
    checks the response part by part: `verdict.parts`); `choices` makes it a multiple-choice
    question (labels to texts, or texts labelled A, B, C...). The verdict says `correct`,
    `incorrect`, `unparseable`, `unverifiable` or `no_reference`, with the answer read
    (`predicted`), the reference it was compared with and how.
    `cut=True` says the token cap cut the response: unless it marks an answer the cut did not
    reach (a box, an answer line, "the answer is"), the verdict is `no_answer`, with the reason in
    `note` (what the work stopped on is not its answer).

    >>> check_answer("so the answer is 0.5", "1/2").status
    'correct'
    """
    from mathlens.analyze.grading.equivalence import DEFAULT_CONFIG
    from mathlens.analyze.grading.equivalence import check_answer as check

    q = _question(reference, question, choices)
    return check(response, q, config or DEFAULT_CONFIG, cut=cut)  # type: ignore[arg-type]


def verify_steps(solution: str, question: str | None = None, *, config: VerifyConfig | None = None
                 ) -> list[StepCheck]:
    """Split `solution` into steps and check every claim of each (definitions in `question`, such as
    ``f(x, y) = x^2 y``, are known to every step); one `StepCheck` per step, in order.

    >>> [s.verdict for s in verify_steps("2 + 3 = 5.\\nThen 5 * 4 = 21.")]
    ['valid', 'invalid']
    """
    from mathlens.analyze.flow.segment import MAX_STEP_CHARS, segment_steps
    from mathlens.analyze.flow.solution import MAX_TEXT_CHARS, step_confidence
    from mathlens.analyze.verify.checker import verify_steps as check

    steps = segment_steps(solution[:MAX_TEXT_CHARS] if solution else "", MAX_STEP_CHARS)
    maths = check(["" if s.cut else s.text for s in steps], question, config) if steps else []
    return [StepCheck(index=s.index, text=s.text, start=s.start, end=s.end, verdict=m.verdict, status=m.status,
                      claims=m.claims, confidence=step_confidence(m.claims),
                      notes=(*m.notes, *([s.note] if s.note else [])), error=m.error)
            for s, m in zip(steps, maths, strict=True)]


def flow(text: str, question: str | None = None, *, config: FlowConfig | None = None) -> FlowResult:
    """The reasoning-flow analysis of one solution: its steps with their operations, concepts,
    complexity and checks, the reasoning graph, the redundant and final steps, and the metrics
    (complexity score, first invalid step, reasoning pattern). Never raises on odd input.

    >>> result = flow("f_x = 2xy\\nSo at (-1, 4), 2(-1)(4) = -8.", question="f(x, y) = x^2 y")
    >>> result.metrics.total_steps, result.first_invalid_step
    (2, None)
    """
    from mathlens.analyze.flow import analyze_solution

    return analyze_solution(text, question, config)
