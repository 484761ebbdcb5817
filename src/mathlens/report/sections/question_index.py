"""An index of the questions on the main page with a one-line summary each, linking to its block
(a large run's other questions are listed on the question pages).

The counts are `mathlens.analyze.questions.question_counts` (one row per question and run); the
section selects and renders them.
"""

from __future__ import annotations

from mathlens.analyze.questions import QuestionCounts
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

EXCERPT = 90


def _answers(q: QuestionCounts) -> str | None:
    return None if q.checked is None else f"{q.correct} of {q.checked}"


def build(ctx: ReportContext) -> Table | None:
    """Question, responses, errors, truncations, correct answers, mean complexity, phrase sensitivity."""
    if not ctx.views:
        return None
    counted = {(run.label, q.exam_id, q.question_id): q for run in ctx.runs for q in run.questions}
    rows: list[tuple[Cell, ...]] = []
    links: list[str] = []
    shown = ctx.views[: ctx.options.main_questions]  # the questions on this page; the rest are on question pages
    for view in shown:
        text = " ".join(view.text.split())
        excerpt = text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")
        for run in ctx.runs:
            q = counted.get((run.label, view.exam_id, view.question_id))
            if q is None:
                continue
            rows.append((view.label, excerpt, *((run.label,) if ctx.multi_run else ()),
                         q.responses, q.variants, q.errors, q.truncated, _answers(q), q.mean_complexity,
                         q.with_invalid_step, q.phrase_sensitivity))
            links.append(view.anchor)
    columns = ("question", "text", *(("run",) if ctx.multi_run else ()), "responses", "variants", "errors",
               "truncated", "correct final answers", "mean complexity", "with an invalid step",
               "phrase sensitivity (max)")
    return Table(ctx.uid("question-index"), "Questions", columns, tuple(rows),
                 decimals={columns.index("mean complexity"): 1}, row_links=tuple(links),
                 caption="Original prompts (variants counts the ablation and paraphrase records). – : the analysis "
                         "that counts it has not run."
                         + (f" The {len(shown)} of {len(ctx.views)} questions on this page; the others are on the "
                            "question pages linked under Questions." if len(ctx.views) > len(shown) else ""))


SECTION = ReportSection(id="question_index", title="Question index", template="sections/flags.html.j2", build=build,
                        analyses=("sensitivity", "answers", "flow"))
