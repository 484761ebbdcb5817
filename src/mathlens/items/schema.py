"""Exams, questions and datasets as they are written to and read from disk.

A dataset (MATH, GSM8K, any JSONL) loads into the same `Exam` shape as a course exam, with no
course or cohort: every later stage handles one kind of item set.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cohort(Strict):
    """Student results for the same exam. `illustrative=True` marks numbers that are not real data."""

    class_average: float | None = Field(None, ge=0, le=100, description="class average in percent")
    size: int | None = Field(None, ge=0)
    std: float | None = Field(None, ge=0, description="standard deviation in percent, if known")
    scores: list[float] | None = Field(None, description="per-student percentages, if known")
    illustrative: bool = False
    note: str | None = None


class Part(Strict):
    """One lettered part (a), (b)... of a question."""

    label: str
    text: str
    points: float | None = Field(None, ge=0)
    answer: str | None = None
    answers: list[str] = Field(default_factory=list, description="alternative accepted answers")


class Question(Strict):
    """One question. `answers` hold accepted final answers (plain text or LaTeX)."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    points: float | None = Field(None, ge=0)
    parts: list[Part] = Field(default_factory=list)
    topics: list[str] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list)
    answer_format: Literal["plain", "latex", "auto"] = "auto"
    solution: str | None = None
    choices: dict[str, str] | None = Field(None, description="multiple-choice options, label -> text")
    images: list[str] = Field(default_factory=list)
    level: int | None = None
    subject: str | None = None
    grade: int | None = None
    class_average: float | None = Field(None, ge=0, le=100,
                                        description="the students' average on this question, in percent of its points")
    class_std: float | None = Field(None, ge=0, description="the students' standard deviation on it, in percent")
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_part_labels(self) -> Question:
        labels = [p.label for p in self.parts]
        if len(labels) != len(set(labels)):
            raise ValueError(f"question {self.id!r} repeats a part label: {labels}")
        return self

    @property
    def total_points(self) -> float | None:
        if self.points is not None:
            return self.points
        pts = [p.points for p in self.parts]
        return sum(p for p in pts if p is not None) if pts and all(p is not None for p in pts) else None

    def prompt_text(self) -> str:
        """The text sent to a model: the stem, its parts, and its options."""
        lines = [self.text.strip()]
        for p in self.parts:
            lines.append(f"({p.label}) {p.text.strip()}")
        if self.choices:
            lines.extend(f"{k}. {v}" for k, v in self.choices.items())
        return "\n".join(lines)


class Exam(Strict):
    """An ordered set of questions, with course and cohort information when it is a real exam."""

    id: str = Field(min_length=1)
    name: str
    course: str | None = None
    total_points: float | None = Field(None, ge=0)
    cohort: Cohort | None = None
    source: str | None = Field(None, description="where the questions come from, and their licence")
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Exam:
        seen: set[str] = set()
        for q in self.questions:
            if q.id in seen:
                raise ValueError(f"question id {q.id!r} appears twice")
            seen.add(q.id)
        return self
