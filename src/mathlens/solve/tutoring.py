"""Tutoring requests: context conditions are configurations, learner profiles are variants.

A tutoring run (`mathlens tutor run`) is planned by the ordinary planner (`mathlens.runs.plan`).
Its configurations are the four context conditions, `condition-1` .. `condition-4`; each question
is sent once per learner paired with it, as a variant of kind `"profile"` named after the
learner. Everything the requests are made from is the run's `TutorDesign`, kept in the manifest
(`Manifest.tutor`): the learners, the grade-level objectives shown in conditions 3 and 4, and for
each model whether it reads images. So a resume or a later analysis plans exactly the same
requests, whatever has happened to the data files since.

The conditions (the tutoring study names only the first; the others add learner information in
the user turn and grade-level objectives in a system prompt):

1. `question-only`: one user turn with the question (and its options);
2. `learner`: the learner's description of themselves, then the question, in the user turn;
3. `objectives`: a system prompt with the grade's learning objectives, then the question;
4. `learner+objectives`: both the system prompt of 3 and the user turn of 2.

Diagrams: an item's images go with the user turn to models that read images. For a text-only
model the design's image mode decides: `describe` (and `auto`) put the item's written description
of the diagram into the text instead; `send` insists on the images, and planning refuses a
text-only model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.models.base import Message
from mathlens.solve.configurations import Built
from mathlens.solve.variant import Variant

Performance = Literal["high", "intermediate", "low"]
Attitude = Literal["dislikes", "neutral", "likes"]
SelfEfficacy = Literal["low", "moderate", "high"]
ImageMode = Literal["auto", "send", "describe"]
IMAGE_MODES: tuple[str, ...] = ("auto", "send", "describe")

_PERFORMANCE_TEXT: dict[str, str] = {
    "high": "My math marks are among the best in my class.",
    "intermediate": "My math marks are about average for my class.",
    "low": "My math marks are usually lower than most of my class.",
}
_ATTITUDE_TEXT: dict[str, str] = {
    "dislikes": "I don't like math and I avoid it when I can.",
    "neutral": "Math is okay, but it is not my favourite subject.",
    "likes": "I like math and enjoy working on problems.",
}
_SELF_EFFICACY_TEXT: dict[str, str] = {
    "low": "I am not confident that I can solve a question like this one.",
    "moderate": "I can solve some questions like this, but not always.",
    "high": "I am confident that I can solve questions like this one.",
}


class LearnerProfile(BaseModel):
    """One synthetic learner. `description`, when given, replaces the generated self-description."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    grade: int = Field(ge=1, le=12)
    performance: Performance
    attitude: Attitude = "neutral"
    self_efficacy: SelfEfficacy = "moderate"
    prior_knowledge: tuple[str, ...] = ()
    description: str | None = None

    def self_description(self) -> str:
        """What the learner says about themselves in the user turn (conditions 2 and 4).

        >>> LearnerProfile(id="a", grade=4, performance="low", attitude="likes", self_efficacy="high",
        ...                prior_knowledge=("add numbers",)).self_description().splitlines()[0]
        'I am in grade 4. My math marks are usually lower than most of my class.'
        """
        if self.description:
            return self.description.strip()
        lines = [
            f"I am in grade {self.grade}. {_PERFORMANCE_TEXT[self.performance]}",
            f"{_ATTITUDE_TEXT[self.attitude]} {_SELF_EFFICACY_TEXT[self.self_efficacy]}",
        ]
        if self.prior_knowledge:
            lines.append("So far I have learned to " + "; ".join(self.prior_knowledge) + ".")
        lines.append("Can you help me with this question?")
        return "\n".join(lines)

    def summary(self) -> str:
        """A one-line description for judges and worksheets (independent of the context condition)."""
        known = "; ".join(self.prior_knowledge) or "not stated"
        return (f"grade {self.grade}, {self.performance} performer, attitude to math: {self.attitude}, "
                f"self-efficacy: {self.self_efficacy}, prior knowledge: {known}")


@dataclass(frozen=True)
class Condition:
    """One context condition: which learner information the tutor is given."""

    number: int
    name: str
    learner_in_user: bool
    objectives_in_system: bool
    description: str

    @property
    def label(self) -> str:
        """The configuration name: `condition-<n>`."""
        return condition_label(self.number)


CONDITIONS: dict[int, Condition] = {
    1: Condition(1, "question-only", False, False, "the math question only"),
    2: Condition(2, "learner", True, False, "the learner's self-description in the user turn, then the question"),
    3: Condition(3, "objectives", False, True, "a system prompt with the grade-level learning objectives"),
    4: Condition(4, "learner+objectives", True, True, "both the objectives system prompt and the self-description"),
}


def condition_label(number: int) -> str:
    """The configuration name of a context condition: `condition-<n>`."""
    return f"condition-{number}"


def condition_of(label: str) -> int:
    """Inverse of `condition_label` (`ValueError` for another configuration name)."""
    prefix = "condition-"
    if not label.startswith(prefix) or not label[len(prefix):].isdigit() or int(label[len(prefix):]) not in CONDITIONS:
        raise ValueError(f"{label!r} is not a tutoring condition label")
    return int(label[len(prefix):])


class TutorDesign(BaseModel):
    """A tutoring run's design, as the manifest keeps it (`Manifest.tutor`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[2] = 2
    profiles: tuple[LearnerProfile, ...] = Field(min_length=1)
    profile_source: str = "default"
    conditions: tuple[int, ...] = Field(min_length=1)
    image_mode: ImageMode = "auto"
    #: pair each learner with the items of their own grade (an item without a grade goes to everyone)
    match_grade: bool = True
    rubric: str = "v1"
    #: grade -> the learning objectives of the system prompt in conditions 3 and 4
    objectives: dict[int, tuple[str, ...]] = Field(default_factory=dict)
    #: model spec -> whether it reads images, as found when the run was made
    accepts_images: dict[str, bool] = Field(default_factory=dict)

    def profile(self, profile_id: str) -> LearnerProfile | None:
        return next((p for p in self.profiles if p.id == profile_id), None)

    def learners_for(self, question: Question) -> list[LearnerProfile]:
        """The learners a question is put to."""
        if not self.match_grade or question.grade is None:
            return list(self.profiles)
        return [p for p in self.profiles if p.grade == question.grade]


def profile_variants(design: TutorDesign, question: Question) -> list[Variant]:
    """One variant of kind "profile" per learner the question is put to (a tutoring run sends no
    unpersonalised "original": condition 1 is the question alone, still answered for each learner)."""
    return [Variant(name=p.id, kind="profile") for p in design.learners_for(question)]


def objectives_prompt(grade: int, objectives: tuple[str, ...]) -> str:
    """The system prompt of conditions 3 and 4 for one grade."""
    lines = [f"You are tutoring a grade {grade} student in mathematics.",
             f"By the end of grade {grade}, students are expected to meet these learning objectives:"]
    lines += [f"- {o}" for o in objectives]
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
                            "cannot be shown to a text-only model (add one, or declare a model that reads images "
                            "with -M vision=true)")
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
                        "use --images describe (or auto) to send the written description instead, or declare "
                        "that the model reads images with -M vision=true")
    return True


def tutor_messages(question: Question, profile: LearnerProfile, condition: int, describe_images: bool,
                   objectives: tuple[str, ...] = ()) -> list[Message]:
    """The messages of one tutoring request (`objectives`: the learner's grade's, for conditions 3
    and 4). Image paths are sent as the question gives them.

    >>> q = Question(id="q", text="What is 2 + 2?")
    >>> p = LearnerProfile(id="p", grade=4, performance="low", description="I am Sam.")
    >>> [(m.role, m.content) for m in tutor_messages(q, p, 2, describe_images=False)]
    [('user', 'I am Sam.\\n\\nWhat is 2 + 2?')]
    """
    cond = CONDITIONS[condition]
    body = item_text(question, describe_images)
    if cond.learner_in_user:
        body = f"{profile.self_description()}\n\n{body}"
    images = tuple(question.images) if question.images and not describe_images else ()
    messages = ([Message(role="system", content=objectives_prompt(profile.grade, objectives))]
                if cond.objectives_in_system else [])
    messages.append(Message(role="user", content=body, images=images))
    return messages


def build_for_learner(design: TutorDesign, configuration: str, question: Question, variant: Variant,
                      model: str) -> Built:
    """The request of one planned tutoring task (the planner calls this for profile variants)."""
    condition = condition_of(configuration)
    profile = design.profile(variant.name)
    if profile is None:
        raise UserError(f"the tutoring design has no learner {variant.name!r}")
    accepts = design.accepts_images.get(model)
    if accepts is None:
        raise UserError(f"the tutoring design does not say whether model {model!r} reads images")
    describe = describe_for(question, design.image_mode, accepts, model)
    objectives: tuple[str, ...] = ()
    if CONDITIONS[condition].objectives_in_system:
        objectives = design.objectives.get(profile.grade, ())
        if not objectives:
            known = ", ".join(str(g) for g in sorted(design.objectives)) or "none"
            raise UserError(f"no learning objectives are written for grade {profile.grade}, the grade of learner "
                            f"{profile.id!r} (known grades: {known})")
    return Built(messages=tutor_messages(question, profile, condition, describe, objectives))


@dataclass(frozen=True)
class TutorCondition:
    """A context condition as a configuration. Its requests need a learner, so they are made by
    `build_for_learner` from the run's tutoring design; outside a tutoring run it cannot build."""

    name: str
    condition: int
    options: dict[str, Any] = field(default_factory=dict)

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        raise UserError(f"configuration {self.name!r} is a tutoring context condition: it needs learner "
                        "profiles, so run it with `mathlens tutor run`")


def condition_1(options: dict[str, Any] | None = None) -> TutorCondition:
    """`condition-1`: the question only."""
    return TutorCondition(condition_label(1), 1, dict(options or {}))


def condition_2(options: dict[str, Any] | None = None) -> TutorCondition:
    """`condition-2`: the learner's self-description, then the question."""
    return TutorCondition(condition_label(2), 2, dict(options or {}))


def condition_3(options: dict[str, Any] | None = None) -> TutorCondition:
    """`condition-3`: the grade's learning objectives as a system prompt, then the question."""
    return TutorCondition(condition_label(3), 3, dict(options or {}))


def condition_4(options: dict[str, Any] | None = None) -> TutorCondition:
    """`condition-4`: the objectives system prompt and the self-description."""
    return TutorCondition(condition_label(4), 4, dict(options or {}))
