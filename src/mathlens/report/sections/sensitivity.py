"""Per question: prompt-ablation sensitivity (`analysis/sensitivity.json`).

For each model and configuration: robustness, phrase sensitivity, the impact of each prompt element
ranked as in the calculus study's "Important phrase … Impact …" lines (drawn as bars), each variant's
text with the changed span highlighted, and its divergence and answer flip.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from mathlens.report.charts import ChartLayout, ranked_bars
from mathlens.report.context import ReportContext
from mathlens.report.loader import QuestionView, RunData
from mathlens.report.lookup import first, num
from mathlens.report.registry import QuestionSection
from mathlens.report.tables import Cell, Table

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


def _fmt(v: Any, digits: int = 3) -> str:
    f = num(v)
    return "–" if f is None else f"{f:.{digits}f}"


def _element(d: dict[str, Any]) -> str:
    text, typ = first(d, "element_text"), first(d, "element_type")
    if text and typ:
        return f"{text} ({typ})"
    return str(text or typ or first(d, "variant", default=""))


def _variant_texts(run: RunData, q: dict[str, Any], original: str) -> tuple[VariantText, ...]:
    answers = {d.get("variant"): d.get("answer") for d in q.get("details") or [] if isinstance(d, dict)}
    out = []
    seen: set[str] = set()
    for rec in run.records:
        v = rec.variant
        if (v.kind == "original" or rec.model != q.get("model") or rec.configuration != q.get("configuration")
                or rec.exam_id != q.get("exam_id") or rec.question_id != q.get("question_id") or v.name in seen):
            continue
        seen.add(v.name)
        text = v.question_text if v.question_text is not None else ""
        out.append(VariantText(name=v.name, kind=v.kind, element=_element(v.model_dump()),
                               segments=diff_segments(original, text), answer=answers.get(v.name)))
    return tuple(out)


def _panel(ctx: ReportContext, view: QuestionView, run: RunData, q: dict[str, Any]) -> SensitivityPanel:
    label = f"{q.get('model')} · {q.get('configuration')}" + (f" · {run.label}" if ctx.multi_run else "")
    ps_el = _element({"element_text": q.get("ps_element_text"), "element_type": q.get("ps_element_type"),
                      "variant": q.get("ps_variant")})
    metrics = [("robustness (mean cosine)", f"{_fmt(q.get('robustness'))} ± {_fmt(q.get('robustness_sd'))}"),
               ("phrase sensitivity (max 1 − cosine)", f"{_fmt(q.get('phrase_sensitivity'))}  from {ps_el}"),
               ("mean normalised Levenshtein", _fmt(q.get("mean_levenshtein"))),
               ("answer-flip rate", f"{_fmt(q.get('answer_flip_rate'))} of {q.get('n_answer_compared', 0)}"),
               ("pattern-change rate", f"{_fmt(q.get('pattern_change_rate'))} of {q.get('n_pattern_compared', 0)}"),
               ("ablations", str(q.get("n_ablations", 0))),
               ("excluded (degenerate responses)", str(q.get("excluded_degenerate", 0)))]
    cons = q.get("consistency")
    if isinstance(cons, dict) and cons.get("status") == "ok":
        metrics.append(("repeat consistency", f"answer agreement {_fmt(cons.get('answer_agreement'))}, "
                                              f"mean pairwise cosine {_fmt(cons.get('mean_pairwise_cosine'))} "
                                              f"over {cons.get('n_runs')} runs"))
    flags = tuple((str(f.get("name", "")), str(f.get("reason", ""))) for f in q.get("flags") or []
                  if isinstance(f, dict))
    impacts = [(_element(i), float(i["impact"])) for i in q.get("impact") or []
               if isinstance(i, dict) and num(i.get("impact")) is not None]
    chart = ranked_bars(ctx.uid("impact", view.anchor, label), f"Impact of each prompt element · {label}",
                        impacts, x_title="Impact (1 − TF-IDF cosine to the original response)", x_max=1.0)
    rows: list[tuple[Cell, ...]] = []
    for d in q.get("details") or []:
        if not isinstance(d, dict):
            continue
        cos = num(d.get("cosine"))
        rows.append((d.get("variant"), d.get("kind"), d.get("element_type"), d.get("element_text"), cos,
                     None if cos is None else 1.0 - cos, num(d.get("levenshtein")), d.get("answer"),
                     d.get("original_answer"), d.get("variant_answer"), d.get("step_change"),
                     d.get("pattern_changed"), d.get("status")))
    details = Table(ctx.uid("variants", view.anchor, label), f"Variants · {label}",
                    ("variant", "kind", "element type", "element", "cosine", "impact", "Levenshtein", "answer",
                     "original answer", "variant answer", "step change", "pattern changed", "status"),
                    tuple(rows)) if rows else None
    original = view.question.prompt_text() if view.question is not None else view.text
    return SensitivityPanel(label=label, status=str(q.get("status", "")), note=str(q.get("note", "")),
                            metrics=tuple(metrics), flags=flags,
                            impact_lines=tuple(sorted(impacts, key=lambda p: -p[1])),
                            chart=chart, details=details, variants=_variant_texts(run, q, original))


def build(ctx: ReportContext, view: QuestionView) -> list[SensitivityPanel] | None:
    """One panel per model and configuration that has sensitivity results for this question."""
    out = []
    for run in ctx.runs:
        doc = run.analysis("sensitivity")
        if not isinstance(doc, dict):
            continue
        for q in doc.get("questions") or []:
            if isinstance(q, dict) and q.get("exam_id") == view.exam_id and q.get("question_id") == view.question_id:
                out.append(_panel(ctx, view, run, q))
    return out or None


SECTION = QuestionSection(id="sensitivity", title="Prompt sensitivity", template="sections/sensitivity.html.j2",
                          build=build, analyses=("sensitivity",))
