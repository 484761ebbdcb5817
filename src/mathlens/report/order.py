"""The order of questions on the page: the most telling first.

A reader opens a report to see where the reasoning went wrong, so a question comes earlier when its
original responses hold what the lens is for: a grade the checker contradicts, a step found invalid,
a wrong final answer; one whose responses are degenerate (a loop, an echo) comes later. The order
only selects; it reads the statuses the analyses stored. Flow
entries are read only for the first `FLOW_CANDIDATES` questions after the cheaper signals have
ordered them, so ordering a very large run costs one pass over the answers and grades.
"""

from __future__ import annotations

from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.grading.grades import GRADES
from mathlens.report.loader import QuestionView, RunData

#: questions whose flow entries are read to find invalid steps
FLOW_CANDIDATES = 200
#: weights of what makes a question telling (higher first)
DISAGREEMENT, INVALID_STEP, WRONG_ANSWER, NO_ANSWER = 8, 4, 2, 1
#: a degenerate response (a loop, an echo) shows the model failing, not reasoning: it comes later
DEGENERATE = -5


def _answer_weight(runs: list[RunData], view: QuestionView) -> int:
    weight = 0
    for resp in view.originals:
        run, key = resp.run, resp.record.key
        entry = run.entry(ANSWERS, key) if run.document(ANSWERS) is not None else None
        if entry is not None and entry.status == "incorrect":
            weight = max(weight, WRONG_ANSWER)
        flags = run.quality.get(key)
        if flags is not None and flags.no_final_answer and not flags.degenerate:
            weight = max(weight, NO_ANSWER)
        if flags is not None and flags.degenerate:
            weight += DEGENERATE
        if run.document(GRADES) is not None and any(g.disagreements for g in run.entries(GRADES, key)):
            weight += DISAGREEMENT
    return weight


def _has_invalid_step(view: QuestionView) -> bool:
    for resp in view.originals:
        run = resp.run
        if run.document(FLOW) is None:
            continue
        entry = run.entry(FLOW, resp.record.key)
        if entry is not None and entry.result is not None and entry.result.first_invalid_step is not None:
            return True
    return False


def telling_order(runs: list[RunData], views: list[QuestionView]) -> list[QuestionView]:
    """`views` with the most telling questions first (ties keep the run's order)."""
    weights = {id(v): _answer_weight(runs, v) for v in views}
    first = sorted(views, key=lambda v: -weights[id(v)])
    for v in first[:FLOW_CANDIDATES]:
        if _has_invalid_step(v):
            weights[id(v)] += INVALID_STEP
    return sorted(views, key=lambda v: -weights[id(v)])
