"""Per question: prompt-ablation sensitivity (the `SENSITIVITY` document).

For each model and configuration: robustness, phrase sensitivity, the impact of each prompt element
ranked as in the calculus study's "Important phrase … Impact …" lines (drawn as bars), each variant's
text with the changed span highlighted, and its divergence and answer flip.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.ablation.metrics import QuestionSensitivity
from mathlens.report.charts import ChartLayout, ranked_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView, RunData
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table, display_cell

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class VariantText:
    name: str
    kind: str
    element: str
    segments: tuple[tuple[str, str], ...]  # (equal | delete | insert, text)
    answer: str | None


@dataclass(frozen=True)
class SensitivityPanel:
    label: str
    status: str
    note: str
    metrics: tuple[tuple[str, str], ...]
    flags: tuple[tuple[str, str], ...]
    impact_lines: tuple[tuple[str, float], ...]
    chart: ChartLayout | None
    details: Table | None
    variants: tuple[VariantText, ...]


def diff_segments(original: str, variant: str) -> tuple[tuple[str, str], ...]:
    """Word-level diff of two prompt texts as (op, text) runs: `equal`, `delete` (only in the original),
    `insert` (only in the variant)."""
    a, b = _TOKEN.findall(original), _TOKEN.findall(variant)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("delete", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("insert", "".join(b[j1:j2])))
    return tuple(out)


def _element(text: str | None, typ: str | None, name: str | None = None) -> str:
    if text and typ:
        return f"{text} ({typ})"
    return str(text or typ or name or "")


def _variant_texts(run: RunData, q: QuestionSensitivity, original: str) -> tuple[VariantText, ...]:
    answers = {d.variant: d.answer for d in q.details}
    out = []
    seen: set[str] = set()
    for rec in run.records:
        v = rec.variant
        if (v.kind == "original" or rec.model != q.model or rec.configuration != q.configuration
                or rec.exam_id != q.exam_id or rec.question_id != q.question_id or v.name in seen):
            continue
        seen.add(v.name)
        text = v.question_text if v.question_text is not None else ""
        out.append(VariantText(name=v.name, kind=v.kind, element=_element(v.element_text, v.element_type, v.name),
                               segments=diff_segments(original, text), answer=answers.get(v.name)))
    return tuple(out)


def _panel(ctx: ReportContext, view: QuestionView, run: RunData, q: QuestionSensitivity) -> SensitivityPanel:
    label = f"{q.model} · {q.configuration}" + (f" · {run.label}" if ctx.multi_run else "")
    ps_el = _element(q.ps_element_text, q.ps_element_type, q.ps_variant)
    metrics = [("robustness (mean cosine)", f"{display_cell(q.robustness)} ± {display_cell(q.robustness_sd)}"),
               ("phrase sensitivity (max 1 − cosine)", f"{display_cell(q.phrase_sensitivity)}  from {ps_el}"),
               ("mean normalised Levenshtein", display_cell(q.mean_levenshtein)),
               ("answer-flip rate (answered pairs only)",
                f"{display_cell(q.answer_flip_rate)} of {q.answer_pairs.describe()}"),
               ("pattern-change rate", f"{display_cell(q.pattern_change_rate)} of {q.n_pattern_compared}"),
               ("ablations", str(q.n_ablations)),
               ("excluded (degenerate responses)", str(q.excluded_degenerate))]
    cons = q.consistency
    if cons is not None and cons.status == "ok":
        metrics.append(("repeat answer agreement (answered pairs only)",
                        f"{display_cell(cons.answer_agreement)} of {cons.n_answer_pairs} answered pairs; left out "
                        f"{cons.n_answer_unanswered} without a final answer, {cons.n_answer_truncated} cut by "
                        f"the token cap, {cons.n_unknown_pairs} not comparable"))
        metrics.append(("repeat text similarity", f"mean pairwise cosine {display_cell(cons.mean_pairwise_cosine)} "
                                                  f"over {cons.n_runs} runs"))
    flags = tuple((f.name, f.reason) for f in q.flags)
    impacts = [(_element(i.element_text, i.element_type, i.variant), i.impact) for i in q.impact]
    chart = ranked_bars(ctx.uid("impact", view.anchor, label), f"Impact of each prompt element · {label}",
                        impacts, x_title="Impact (1 − TF-IDF cosine to the original response)", x_max=1.0)
    rows: list[tuple[Cell, ...]] = [
        (d.variant, d.kind, d.element_type, d.element_text, d.cosine, d.impact,
         d.levenshtein, d.answer, d.original_answer, d.variant_answer, d.step_change, d.pattern_changed, d.status)
        for d in q.details]
    details = Table(ctx.uid("variants", view.anchor, label), f"Variants · {label}",
                    ("variant", "kind", "element type", "element", "cosine", "impact", "Levenshtein", "answer",
                     "original answer", "variant answer", "step change", "pattern changed", "status"),
                    tuple(rows)) if rows else None
    original = view.question.prompt_text() if view.question is not None else view.text
    return SensitivityPanel(label=label, status=q.status, note=q.note, metrics=tuple(metrics), flags=flags,
                            impact_lines=tuple(sorted(impacts, key=lambda p: -p[1])),
                            chart=chart, details=details, variants=_variant_texts(run, q, original))


def build(ctx: ReportContext, view: QuestionView) -> list[SensitivityPanel] | None:
    """One panel per model and configuration that has sensitivity results for this question."""
    out = []
    for run in ctx.runs:
        for q in run.entries_by(SENSITIVITY, ("exam_id", "question_id"), view.exam_id, view.question_id):
            out.append(_panel(ctx, view, run, q))
    return out or None


SECTION = QuestionSection(id="sensitivity", title="Prompt sensitivity", template="sections/sensitivity.html.j2",
                          build=build, analyses=("sensitivity",))
