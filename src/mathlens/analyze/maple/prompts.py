"""Prompts for the two model-facing MAPLE stages: self-reflection and step judging.

Written in our own words after the seed's description (001_c607caa65db8a290.txt, sections 3.1-3.2):
the reflecting model sees its own solution next to the reference solution and says where its
reasoning departs; the judge sees the label set, the question, the reference solution and the
generated solution split into numbered steps, and names the labels of each erroneous step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mathlens.analyze.maple.labels import LabelSet
from mathlens.models.base import Message

#: Longest text of one kind placed in a prompt; model output is untrusted and may be very long.
MAX_FIELD_CHARS = 6000

REFLECTION_SYSTEM = (
    "You are reviewing your own attempt at a math problem. The attempt reached a wrong final "
    "answer. Compare it with the reference solution and say plainly where your reasoning first "
    "departs from it and what kind of mistake that was (for example a misread question, a method "
    "that does not fit, a method used wrongly, an arithmetic slip, or no answer at all). "
    "Answer in two to four sentences."
)

JUDGE_SYSTEM = (
    "You are a careful grader of step-by-step math solutions. You are given a list of error "
    "labels, a question, its reference solution, and a solution to grade, split into numbered "
    "steps. Find every step that contains an error. For each such step give its number, one or "
    "more label ids from the list that describe the error, and a reason of at most one sentence. "
    "A step that is correct, or merely restates earlier work, is not listed. If no step contains "
    "an error, return an empty list. Use only the label ids given."
)

JUDGE_VR_ADDENDUM = (
    " Also rate the whole solution: `validity` is the share of its steps that are mathematically "
    "correct (0 to 1), and `redundancy` the share of its steps that do not help reach the answer "
    "(0 to 1)."
)


def clip(text: str | None, limit: int = MAX_FIELD_CHARS) -> str:
    """`text` cut to `limit` characters, with a marker when something was cut."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit] + "\n[... cut ...]"


_ASY = re.compile(r"\[asy\].*?\[/asy\]", re.S | re.I)
#: Reference solutions are cut shorter than model output: a small judge's context (and time) is
#: better spent on the steps it must label.
MAX_REFERENCE_CHARS = 2000


def reference_text(solution: str | None) -> str | None:
    """A reference solution for a prompt: Asymptote drawing code removed (a text judge cannot read a
    figure), cut to `MAX_REFERENCE_CHARS`.

    >>> reference_text("Draw [asy]draw((0,0)--(1,1));[/asy] so the area is 2.")
    'Draw [figure] so the area is 2.'
    """
    if not solution:
        return None
    return clip(_ASY.sub("[figure]", solution), MAX_REFERENCE_CHARS)


def reflection_messages(
    question: str, solution: str, reference_solution: str | None, reference_answer: str | None
) -> list[Message]:
    """Messages that ask a model to reflect on its own incorrect solution, given the reference."""
    parts = [f"Problem:\n{clip(question)}", f"Your solution:\n{clip(solution)}"]
    if reference_solution:
        parts.append(f"Reference solution:\n{reference_text(reference_solution)}")
    if reference_answer:
        parts.append(f"Correct final answer: {clip(reference_answer, 500)}")
    parts.append("Where does your reasoning depart from the reference, and what kind of mistake is it?")
    return [
        Message(role="system", content=REFLECTION_SYSTEM),
        Message(role="user", content="\n\n".join(parts)),
    ]


def format_labels(labels: LabelSet) -> str:
    """One line per label: `- id (Name): definition`."""
    return "\n".join(f"- {lab.id} ({lab.name}): {lab.definition}" for lab in labels.labels)


def number_steps(steps: Sequence[str]) -> str:
    """Steps as `[1] ...`, `[2] ...`, each cut to a bounded length."""
    return "\n".join(f"[{i}] {clip(s, 1200)}" for i, s in enumerate(steps, start=1))


def judge_messages(
    labels: LabelSet,
    question: str,
    steps: Sequence[str],
    reference_solution: str | None,
    reference_answer: str | None = None,
    estimate_vr: bool = False,
) -> list[Message]:
    """Messages for the step judge; the reply schema is built by `judge.judge_reply_model`."""
    system = JUDGE_SYSTEM + (JUDGE_VR_ADDENDUM if estimate_vr else "")
    parts = [f"Error labels:\n{format_labels(labels)}", f"Question:\n{clip(question)}"]
    if reference_solution:
        parts.append(f"Reference solution:\n{reference_text(reference_solution)}")
    if reference_answer:
        parts.append(f"Correct final answer: {clip(reference_answer, 500)}")
    parts.append(f"Solution to grade ({len(steps)} steps):\n{number_steps(steps)}")
    keys = "erroneous_steps" + (", validity and redundancy" if estimate_vr else "")
    parts.append(
        f"Reply with one JSON object with the keys {keys}; each entry of erroneous_steps has a "
        "step number, a list of label ids and a one-sentence reason."
    )
    return [Message(role="system", content=system), Message(role="user", content="\n\n".join(parts))]
