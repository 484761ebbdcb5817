"""Per question, first: what the lens found in each original response, in one card.

The final-answer verdict beside the reference (answers analysis), the invalid steps with the values
expected (flow analysis), and the rubric grade as reconciled with the checker (grades analysis): the
total, the judge's own total when a check replaced its final-answer points, and every disagreement
between the judge and the checks, in words. The reasoning graph follows in the flow section.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.grading.grades import GRADES
from mathlens.report.context import ReportContext
from mathlens.report.flowdata import flow_for
from mathlens.report.loader import QuestionView, Response
from mathlens.report.registry import QuestionSection

#: invalid steps listed per response (the step table under the graph lists all of them)
MAX_STEPS = 3


@dataclass(frozen=True)
class LensStep:
    number: int
    text: str
    expected: str


@dataclass(frozen=True)
class LensGrade:
    grader: str
    status: str
    total: float | None
    judge_total: float | None
    max_total: float
    disagreements: tuple[str, ...]
    checks: tuple[str, ...]


@dataclass(frozen=True)
class LensPart:
    label: str
    status: str
    answer: str | None
    reference: str | None
    #: why no answer was read, when that is known (the token cap cut this part)
    note: str = ""


@dataclass(frozen=True)
class LensCard:
    label: str
    verdict: str | None
    answer: str | None
    reference: str | None
    how: str | None
    #: why no answer was read (the token cap cut the response first, the request failed...)
    reason: str
    parts: tuple[LensPart, ...]
    #: the answer was read part by part (the whole reading is not shown beside the parts)
    by_parts: bool
    flags: tuple[str, ...]
    invalid: tuple[LensStep, ...]
    invalid_total: int
    checked: bool
    grades: tuple[LensGrade, ...]


def _grades(resp: Response) -> tuple[LensGrade, ...]:
    out = []
    for g in resp.run.entries(GRADES, resp.record.key):
        checks = tuple(f"{c.unit}: {c.finding}" + (" (points from the checker)" if c.used == "checker" else "")
                       for c in g.checks)
        out.append(LensGrade(grader=g.rater, status=g.status, total=g.total, judge_total=g.judge_total,
                             max_total=g.max_total, disagreements=tuple(c.why for c in g.disagreements),
                             checks=checks))
    return tuple(out)


def _card(ctx: ReportContext, resp: Response) -> LensCard:
    entry = resp.run.entry(ANSWERS, resp.record.key)
    verdict = entry.verdict if entry is not None else None
    flow = flow_for(resp.run, resp.record.key)
    bad = [s for s in flow.steps if s.verification == "invalid"] if flow is not None else []
    steps = tuple(LensStep(number=s.number, text=s.text[:300], expected=s.expected or "") for s in bad[:MAX_STEPS])
    flags = resp.run.quality.get(resp.record.key)
    return LensCard(label=ctx.response_label(resp), verdict=entry.status if entry is not None else None,
                    answer=verdict.predicted if verdict is not None else None,
                    reference=verdict.reference if verdict is not None else None,
                    how=verdict.how if verdict is not None else None,
                    reason=entry.reason if entry is not None else "",
                    parts=tuple(LensPart(p.label, p.status, p.predicted, p.reference, p.note)
                                for p in (verdict.parts if verdict is not None else [])),
                    by_parts=verdict is not None and verdict.by_parts,
                    flags=tuple(flags.names()) if flags is not None else (), invalid=steps, invalid_total=len(bad),
                    checked=flow is not None, grades=_grades(resp))


def build(ctx: ReportContext, view: QuestionView) -> list[LensCard] | None:
    """One card per original response that some analysis covers."""
    cards = [_card(ctx, r) for r in view.originals]
    cards = [c for c in cards if c.verdict is not None or c.checked or c.grades]
    return cards or None


SECTION = QuestionSection(id="lens", title="What the lens found", template="sections/lens.html.j2", build=build,
                          analyses=("answers", "flow", "grades"))
