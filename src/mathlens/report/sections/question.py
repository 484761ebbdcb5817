"""Per question: the question as sent, its points, topics and reference answers."""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView
from mathlens.report.registry import QuestionSection


@dataclass(frozen=True)
class QuestionData:
    text: str
    points: float | None
    topics: list[str]
    references: list[tuple[str, str]]  # (part or "", accepted answers)
    solution: str | None
    images: list[str]
    meta: list[tuple[str, str]]


def build(ctx: ReportContext, view: QuestionView) -> QuestionData:
    """The question's text and reference material (prompt text only when the items could not be reloaded)."""
    q = view.question
    if q is None:
        return QuestionData(view.text, None, [], [], None, [], [("note", "question file not available; text "
                                                                          "taken from the recorded prompt")])
    refs: list[tuple[str, str]] = []
    if q.answers:
        refs.append(("", " | ".join(q.answers)))
    for p in q.parts:
        accepted = [a for a in [p.answer, *p.answers] if a]
        if accepted:
            refs.append((f"({p.label})", " | ".join(accepted)))
    meta = [(k, str(v)) for k, v in (("level", q.level), ("subject", q.subject), ("grade", q.grade)) if v is not None]
    return QuestionData(text=q.prompt_text(), points=q.total_points, topics=list(q.topics), references=refs,
                        solution=q.solution, images=list(q.images), meta=meta)


SECTION = QuestionSection(id="question", title="Question", template="sections/question.html.j2", build=build)
