"""Instructor flags (the calculus study's §7.3 scenario): solutions to review before students see them.

Flags from the sensitivity analysis (too dense, unstable under rephrasing, unreliable under a
meaning-preserving variant) are shown as it computed them. Without a sensitivity analysis, "too
dense" is derived from the flow analysis with the report's own threshold, by default the one for
the depth definition the flow analysis used (its complexity scale: docs/flow.md). Two review flags are
always added when their data exist: a solution with an invalid step (flow), and a response cut
off at the token cap (records). A degenerate response (empty, an echo of the prompt or system role,
a loop, the wrong script) gets one "degenerate output" flag instead of flags computed on its text,
and the sensitivity flags were computed without such responses.
"""

from __future__ import annotations

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import dense_threshold
from mathlens.report.context import ReportContext
from mathlens.report.flowdata import flow_for
from mathlens.report.loader import question_label
from mathlens.report.registry import ReportSection
from mathlens.report.tables import Cell, Table

#: flags listed on the page (the first ones, most telling questions first); each question's block has its own
MAX_ROWS = 200


def build(ctx: ReportContext) -> Table | None:
    """One row per flag: question (linked), model and configuration, flag, reason, value, threshold
    (the first `MAX_ROWS`; the caption says how many there are)."""
    rows: list[tuple[Cell, ...]] = []
    links: list[str | None] = []
    anchors = {(v.exam_id, v.question_id): ctx.href(v.anchor) for v in ctx.views}
    opts = ctx.options
    for run in ctx.runs:
        has_sens = run.document(SENSITIVITY) is not None
        for q in run.all_entries(SENSITIVITY):
            for f in q.flags:
                rows.append((question_label(q.exam_id, q.question_id), f"{q.model} · {q.configuration}",
                             f.name.replace("_", " "), f.reason, f.value, f.threshold))
                links.append(anchors.get((q.exam_id, q.question_id)))
        for rec in run.records:
            if rec.variant.kind != "original":
                continue
            where = question_label(rec.exam_id, rec.question_id)
            who = f"{rec.model} · {rec.configuration}"
            if run.manifest.runs > 1:
                who += f" · repeat {rec.repeat + 1}"
            if run.degenerate(rec.key):
                quality = run.quality.get(rec.key)
                reason = "; ".join(quality.details) if quality is not None else ""
                rows.append((where, who, "degenerate output", reason, None, None))
                links.append(anchors.get((rec.exam_id, rec.question_id)))
                continue
            flow = flow_for(run, rec.key)
            if flow is not None:
                limit = opts.complexity_threshold
                if limit is None:
                    limit = dense_threshold(flow.depth_definition)
                if not has_sens and flow.complexity is not None and flow.complexity > limit:
                    rows.append((where, who, "too dense",
                                 f"complexity score ({flow.depth_definition} depth) above the threshold",
                                 flow.complexity, limit))
                    links.append(anchors.get((rec.exam_id, rec.question_id)))
                if flow.first_invalid is not None:
                    rows.append((where, who, "invalid step", f"step {flow.first_invalid} failed symbolic verification",
                                 float(flow.first_invalid), None))
                    links.append(anchors.get((rec.exam_id, rec.question_id)))
            if rec.truncated:
                rows.append((where, who, "truncated", "the response hit the token cap and may be incomplete", None,
                             None))
                links.append(anchors.get((rec.exam_id, rec.question_id)))
    if not rows:
        return None
    shown = f"The first {MAX_ROWS} of {len(rows)} flags. " if len(rows) > MAX_ROWS else ""
    return Table(ctx.uid("flags"), "Solutions to review", ("question", "model · configuration", "flag", "reason",
                                                            "value", "threshold"), tuple(rows[:MAX_ROWS]),
                 row_links=tuple(links[:MAX_ROWS]),
                 caption=shown + "Too dense: complexity above the threshold; unstable under rephrasing: "
                         "phrase sensitivity above the threshold; unreliable: the answer changed under a "
                         "meaning-preserving variant; degenerate output: the response is not an attempt at the "
                         "question (no other flag is computed on it).")


SECTION = ReportSection(id="flags", title="Instructor flags", template="sections/flags.html.j2", build=build,
                        analyses=("sensitivity", "flow", "answers"))
