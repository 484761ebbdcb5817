"""The four context conditions on the command line, and one tutoring request put together.

The conditions themselves, and how a request is built from a question, a learner and a condition,
live with the other request builders (`mathlens.solve.tutoring`, where the planner finds them):

1. `question-only`: one user turn with the question (and its options);
2. `learner`: the learner's description of themselves, then the question, in the user turn;
3. `objectives`: a system prompt with the grade's learning objectives, then the question;
4. `learner+objectives`: both the system prompt of 3 and the user turn of 2.

This module parses `--conditions` and builds a request with the shipped grade objectives
(`data/learners.yaml`), as `mathlens tutor run` records them in the design.
"""

from __future__ import annotations

from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.tutoring import (
    CONDITIONS,
    IMAGE_MODES,
    Condition,
    ImageMode,
    LearnerProfile,
    condition_label,
    condition_of,
    describe_for,
    image_description,
    item_text,
    tutor_messages,
)
from mathlens.solve.tutoring import objectives_prompt as _objectives_prompt

from .profiles import grade_objectives

__all__ = ["CONDITIONS", "IMAGE_MODES", "Condition", "ImageMode", "build_messages", "condition_label",
           "condition_of", "describe_for", "image_description", "item_text", "objectives_prompt",
           "parse_conditions"]


def parse_conditions(text: str) -> list[int]:
    """`"1,2,3,4"` -> `[1, 2, 3, 4]`, rejecting unknown or repeated numbers.

    >>> parse_conditions("3, 1")
    [1, 3]
    """
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) not in CONDITIONS:
            raise UserError(f"unknown context condition {part!r}: choose from 1, 2, 3, 4")
        if int(part) in out:
            raise UserError(f"context condition {part} is listed twice")
        out.append(int(part))
    if not out:
        raise UserError("name at least one context condition (1-4)")
    return sorted(out)


def objectives_prompt(grade: int) -> str:
    """The system prompt of conditions 3 and 4 for one grade, with the shipped objectives."""
    return _objectives_prompt(grade, grade_objectives(grade))


def build_messages(question: Question, profile: LearnerProfile, condition: int,
                   describe_images: bool) -> list[Message]:
    """The messages of one tutoring request, with the shipped objectives of the learner's grade.

    >>> q = Question(id="q", text="What is 2 + 2?")
    >>> p = LearnerProfile(id="p", grade=4, performance="low", description="I am Sam.")
    >>> [(m.role, m.content) for m in build_messages(q, p, 2, describe_images=False)]
    [('user', 'I am Sam.\\n\\nWhat is 2 + 2?')]
    """
    objectives = grade_objectives(profile.grade) if CONDITIONS[condition].objectives_in_system else ()
    return tutor_messages(question, profile, condition, describe_images, objectives)
