"""What to trust: the first box of the page, before any figure.

For each run it says how much of what follows rests on answers that exist: the share of responses
cut by the token cap, degenerate, or without a final answer (the answers analysis's run totals); how
far the judge's grades agree with the answer checker (the grades analysis's `JudgeReliability`, with
the unreliable mark); over how many answered pairs the answer-flip rate is computed and how many were
left out (the sensitivity summary); and which complexity scale the flow analysis used. Every number
is read from the analysis that computed it; this section only words them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.grading.grades import GRADES
from mathlens.report.context import ReportContext
from mathlens.report.registry import ReportSection
from mathlens.rounding import percent

#: share of responses with a final answer below which the responses line is a warning
ANSWERED_WARNING = 0.8
#: what each depth definition of the complexity score measures, in words
SCALES = {
    "chars": "characters per step (the calculus study's scale; absolute values still differ from its tables)",
    "tokens": "tokens per step",
    "tree": "expression-tree depth per step",
}


@dataclass(frozen=True)
class TrustLine:
    """One statement of the box: what it is about, what it says, and whether it is a warning."""

    topic: str
    text: str
    warn: bool = False


@dataclass(frozen=True)
class TrustRun:
    label: str
    lines: tuple[TrustLine, ...]


def _pct(share: float | None) -> str:
    return "–" if share is None else percent(share)


def _responses(ctx: ReportContext, run_index: int) -> list[TrustLine]:
    run = ctx.runs[run_index]
    doc = run.document(ANSWERS)
    overall = doc.summary.overall if doc is not None else None
    if doc is None or overall is None:
        return [TrustLine("responses", "not checked yet: run `mathlens analyze` for truncation, degenerate output "
                                       "and final answers", warn=True)]
    n = overall.records
    cut = (f"{overall.truncated} ({_pct(overall.share(overall.truncated))}) were cut by the token cap"
           if overall.truncated else "none was cut by the token cap")
    degenerate = (f"{overall.degenerate} ({_pct(overall.share(overall.degenerate))}) are degenerate"
                  if overall.degenerate else "none is degenerate")
    out = [TrustLine("responses",
                     f"{overall.answered} of {n} ({_pct(overall.share(overall.answered))}) state a final answer; "
                     f"{cut}; {degenerate} (empty, an echo, a loop or the wrong script)",
                     warn=(overall.share(overall.answered) or 0.0) < ANSWERED_WARNING)]
    variants = any(g.variant != "original" for g in doc.summary.summary)
    correct = overall.correct_line("every response of the run, prompt variants included" if variants else "")
    if correct is not None:
        out.append(TrustLine("final answers", correct))
    return out


def _judge(ctx: ReportContext, run_index: int) -> list[TrustLine]:
    doc = ctx.runs[run_index].document(GRADES)
    if doc is None:
        return []
    rel = doc.summary.reliability
    if rel is None:
        return [TrustLine("judge", "graded before grades were reconciled with the checker: re-run `mathlens grade` "
                                   "to see how far the judge agrees with it", warn=True)]
    who = ("the checker's verdict where it is decisive, the judge's points elsewhere"
           if rel.final_answer == "checker" else "the judge's own points (--final-answer judge)")
    return [TrustLine("judge", rel.mark(), warn=rel.unreliable),
            TrustLine("rubric scores", "rubric scores grade the whole solution (method, execution, final answer, "
                                       f"notation, clarity); their final-answer points are {who}. They are a "
                                       "different measure from final-answer accuracy above.")]


def _sensitivity(ctx: ReportContext, run_index: int) -> list[TrustLine]:
    doc = ctx.runs[run_index].document(SENSITIVITY)
    if doc is None or doc.summary.status != "ok":
        return []
    s = doc.summary
    return [TrustLine("answer flips",
                      f"computed over answered pairs of original and variant only: {s.answer_pairs.describe()}",
                      warn=s.answer_pairs.left_out > s.answer_pairs.compared)]


def _scale(ctx: ReportContext, run_index: int) -> list[TrustLine]:
    doc = ctx.runs[run_index].document(FLOW)
    if doc is None:
        return []
    d = doc.summary.depth_definition
    return [TrustLine("complexity scale", f"{d}: {SCALES.get(d, d)}; 'too dense' above "
                                          f"{doc.summary.dense_threshold:g}")]


def build(ctx: ReportContext) -> list[TrustRun]:
    """One list of statements per run."""
    out = []
    for i, run in enumerate(ctx.runs):
        lines = [*_responses(ctx, i), *_judge(ctx, i), *_sensitivity(ctx, i), *_scale(ctx, i)]
        out.append(TrustRun(label=run.label if ctx.multi_run else "", lines=tuple(lines)))
    return out


SECTION = ReportSection(id="trust", title="What to trust", template="sections/trust.html.j2", build=build)
