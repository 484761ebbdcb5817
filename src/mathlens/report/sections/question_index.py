"""An index of the questions on the main page with a one-line summary each, linking to its block
(a large run's other questions are listed on the question pages)."""

from __future__ import annotations

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.report.context import ReportContext
from mathlens.report.flowdata import flow_for
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

EXCERPT = 90


def build(ctx: ReportContext) -> Table | None:
    """Question, responses, errors, truncations, correct answers, mean complexity, phrase sensitivity."""
    if not ctx.views:
        return None
    ps: dict[tuple[str, str], float] = {}
    for run in ctx.runs:
        for q in run.all_entries(SENSITIVITY):
            v = q.phrase_sensitivity
            if v is not None:
                k = (q.exam_id, q.question_id)
                ps[k] = max(ps.get(k, v), v)
    have_answers = any(r.document(ANSWERS) is not None for r in ctx.runs)
    have_flow = any(r.document(FLOW) is not None for r in ctx.runs)
    rows: list[tuple[Cell, ...]] = []
    shown = ctx.views[: ctx.options.main_questions]  # the questions on this page; the rest are on question pages
    for view in shown:
        recs = view.originals
        answers = [r.run.entry(ANSWERS, r.record.key) for r in recs]
        checked = [a for a in answers if a is not None]
        flows = [f for f in (flow_for(r.run, r.record.key) for r in recs) if f is not None]
        cx = [f.complexity for f in flows if f.complexity is not None]
        text = " ".join(view.text.split())
        rows.append((f"{view.exam_id} · {view.question_id}", text[:EXCERPT] + ("…" if len(text) > EXCERPT else ""),
                     len(recs), len(view.variants), sum(r.record.status == "error" for r in recs),
                     sum(r.record.truncated for r in recs),
                     (f"{sum(a.status == 'correct' for a in checked)} of {len(checked)}"
                      if have_answers else None),
                     sum(cx) / len(cx) if cx else None,
                     sum(f.first_invalid is not None for f in flows) if have_flow else None,
                     ps.get((view.exam_id, view.question_id))))
    return Table(ctx.uid("question-index"), "Questions", (
        "question", "text", "responses", "variants", "errors", "truncated", "correct final answers",
        "mean complexity", "with an invalid step", "phrase sensitivity (max)"), tuple(rows),
        decimals={7: 1}, row_links=tuple(v.anchor for v in shown),
        caption=(f"The {len(shown)} questions on this page; the other {len(ctx.views) - len(shown)} are on the "
                 "question pages linked under Questions." if len(ctx.views) > len(shown) else ""))


SECTION = ReportSection(id="question_index", title="Question index", template="sections/flags.html.j2", build=build,
                        analyses=("sensitivity", "answers", "flow"))
