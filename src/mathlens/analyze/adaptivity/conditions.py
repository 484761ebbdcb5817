"""The four context conditions and how a tutoring request is put together.

Seed 003 names its first test group (the math question alone) and says the others add learner
information in the user prompt and grade-level learning objectives in a system prompt. mathlens
makes that explicit:

1. `question-only`: one user turn with the question (and its options);
2. `learner`: the learner's description of themselves, then the question, in the user turn;
3. `objectives`: a system prompt with the grade's learning objectives, then the question;
4. `learner+objectives`: both the system prompt of 3 and the user turn of 2.

Diagrams: an item's images go with the user turn to backends that read images. For a text-only
backend the image mode decides: `describe` (and `auto`) put the item's written description of the
diagram into the text instead; `send` insists on the images, and planning refuses a text-only model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.base import Message

from .profiles import LearnerProfile, grade_objectives

ImageMode = Literal["auto", "send", "describe"]
IMAGE_MODES: tuple[str, ...] = ("auto", "send", "describe")


@dataclass(frozen=True)
class Condition:
    """One context condition: which learner information the tutor is given."""

    number: int
    name: str
    learner_in_user: bool
    objectives_in_system: bool
    description: str


CONDITIONS: dict[int, Condition] = {
    1: Condition(1, "question-only", False, False, "the math question only"),
    2: Condition(2, "learner", True, False, "the learner's self-description in the user turn, then the question"),
    3: Condition(3, "objectives", False, True, "a system prompt with the grade-level learning objectives"),
    4: Condition(4, "learner+objectives", True, True, "both the objectives system prompt and the self-description"),
}


def condition_label(number: int) -> str:
    """The `configuration` name stored on run records: `condition-<n>`."""
    return f"condition-{number}"


def condition_of(label: str) -> int:
    """Inverse of `condition_label`."""
    prefix = "condition-"
    if not label.startswith(prefix) or not label[len(prefix):].isdigit():
        raise ValueError(f"{label!r} is not a tutoring condition label")
    return int(label[len(prefix):])


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
    """The system prompt of conditions 3 and 4 for one grade."""
    lines = [f"You are tutoring a grade {grade} student in mathematics.",
             f"By the end of grade {grade}, students are expected to meet these learning objectives:"]
    lines += [f"- {o}" for o in grade_objectives(grade)]
    lines.append("Keep your help within these objectives.")
    return "\n".join(lines)


def image_description(question: Question) -> str | None:
    """The item's written description of its diagram (`metadata.image_description`)."""
    value = question.metadata.get("image_description")
    return str(value) if value else None


def item_text(question: Question, describe_images: bool) -> str:
    """The question as the tutor sees it: stem, parts, diagram description if asked for, options."""
    lines = [question.text.strip()]
    lines += [f"({p.label}) {p.text.strip()}" for p in question.parts]
    if describe_images and question.images:
        desc = image_description(question)
        if desc is None:
            raise UserError(f"item {question.id!r} has a diagram but no metadata.image_description, so it "
                            "cannot be shown to a text-only model (use an image-capable model or add one)")
        lines.append(f"(The diagram shows: {desc})")
    if question.choices:
        lines += [f"{k}. {v}" for k, v in question.choices.items()]
    return "\n".join(lines)


def describe_for(question: Question, mode: ImageMode, accepts_images: bool, model: str) -> bool:
    """Whether the diagram goes as text (True) or as image files (False) for this model."""
    if not question.images:
        return False
    if mode == "describe":
        return True
    if accepts_images:
        return False
    if mode == "send":
        raise UserError(f"model {model!r} is text-only and cannot read the diagram of item {question.id!r}; "
                        "use --images describe (or auto) to send the written description instead")
    return True


def build_messages(question: Question, profile: LearnerProfile, condition: int,
                   describe_images: bool, image_root: Path | None = None) -> list[Message]:
    """The messages of one tutoring request.

    >>> from mathlens.items.schema import Question
    >>> q = Question(id="q", text="What is 2 + 2?")
    >>> p = LearnerProfile(id="p", grade=4, performance="low", description="I am Sam.")
    >>> [(m.role, m.content) for m in build_messages(q, p, 2, describe_images=False)]
    [('user', 'I am Sam.\\n\\nWhat is 2 + 2?')]
    """
    cond = CONDITIONS[condition]
    body = item_text(question, describe_images)
    if cond.learner_in_user:
        body = f"{profile.self_description()}\n\n{body}"
    images: tuple[str, ...] = ()
    if question.images and not describe_images:
        root = image_root or Path(".")
        images = tuple(str((root / img).resolve()) if not Path(img).is_absolute() else img
                       for img in question.images)
    messages = [Message(role="system", content=objectives_prompt(profile.grade))] if cond.objectives_in_system else []
    messages.append(Message(role="user", content=body, images=images))
    return messages
