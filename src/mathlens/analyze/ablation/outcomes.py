"""What each response concluded and how it got there: final answer, step count, operation sequence.

These feed the measures the calculus seed could not take: whether an ablation flipped the final
answer, and whether it changed the reasoning pattern. The final answer comes from the grading
package (`extract_final_answer`, compared with `equivalent`); steps and operations come from the
reasoning-flow package when it is installed, else a plain step count and no pattern. Each result
records which source it used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from mathlens.items.schema import Question

AnswerStatus = Literal["same", "flipped", "unknown"]


@dataclass(frozen=True)
class AnswerComparison:
    """`same`/`flipped` when both final answers were found and compared, else `unknown`."""

    status: AnswerStatus
    original: str | None
    variant: str | None
    method: str


def answer_source() -> str:
    """Which comparison final answers go through in this installation."""
    return "grading.equivalence" if _grading() is not None else "final-answer line, text match"


def _grading() -> tuple[Any, Any] | None:
    try:
        from mathlens.analyze.grading.equivalence import equivalent
        from mathlens.analyze.readers.answers import extract_final_answer
    except ImportError:
        return None
    return extract_final_answer, equivalent


_FINAL_LINE = re.compile(r"final answer\s*[:\-]\s*(.+)", re.I)


def final_answer(text: str, question: Question | None) -> tuple[str | None, dict[str, str]]:
    """The response's final answer and its per-part answers (label -> text)."""
    grading = _grading()
    if grading is not None:
        fa = grading[0](text, question)
        parts = {p.label: p.text for p in fa.parts if p.text}
        return fa.text, parts
    hits = _FINAL_LINE.findall(text)
    return (hits[-1].strip() if hits else None), {}


def _same(a: str, b: str) -> tuple[bool | None, str]:
    grading = _grading()
    if grading is None:
        return _squash(a) == _squash(b), "text"
    result = grading[1](a, b)
    if result.status == "equal":
        return True, f"equivalence:{result.method}"
    if result.status == "different":
        return False, f"equivalence:{result.method}"
    return None, f"equivalence:{result.status}"


def _squash(s: str) -> str:
    return re.sub(r"[\s.]+", "", s.lower())


def compare_answers(original: str, variant: str, question: Question | None) -> AnswerComparison:
    """Did the final answer change between the two responses?

    Answers are compared part by part when both responses answer lettered parts, else as a
    whole; a pair where either answer is missing or cannot be compared is `unknown`, never
    counted as the same.
    """
    a, a_parts = final_answer(original, question)
    b, b_parts = final_answer(variant, question)
    common = sorted(set(a_parts) & set(b_parts))
    if common:
        methods = []
        for label in common:
            same, method = _same(a_parts[label], b_parts[label])
            methods.append(method)
            if same is None:
                return AnswerComparison("unknown", a, b, method)
            if not same:
                return AnswerComparison("flipped", a, b, method)
        return AnswerComparison("same", a, b, methods[0])
    if a is None or b is None:
        return AnswerComparison("unknown", a, b, "none")
    same, method = _same(a, b)
    if same is None:
        return AnswerComparison("unknown", a, b, method)
    return AnswerComparison("same" if same else "flipped", a, b, method)


@dataclass(frozen=True)
class FlowSummary:
    """Step count, operation sequence and complexity score of one response.

    `pattern` and `complexity` are None when the reasoning-flow package is not available;
    `source` says which one produced the numbers.
    """

    step_count: int
    pattern: tuple[str, ...] | None
    complexity: float | None
    source: str


_STEP_LINE = re.compile(r"^\s*(?:step\s*\d+|\d+[.)]|\(\w\)|[-*•])\s+", re.I | re.M)


def _plain_steps(text: str) -> int:
    """Numbered or bulleted lines, else non-empty lines: a rough count without the flow parser."""
    marked = len(_STEP_LINE.findall(text))
    return marked if marked else sum(1 for line in text.splitlines() if line.strip())


def from_flow_result(result: Any, source: str = "flow") -> FlowSummary:
    """Read a `mathlens.analyze.flow.FlowResult` (or its stored JSON form)."""
    metrics = result.metrics
    return FlowSummary(int(metrics.total_steps), tuple(metrics.reasoning_pattern), float(metrics.complexity_score),
                       source)


@lru_cache(maxsize=4096)
def summarize_flow(text: str, question_text: str | None) -> FlowSummary:
    """Steps, pattern and complexity of a response (cached per text and question text)."""
    try:
        from mathlens.analyze.flow import analyze_solution
    except ImportError:
        return FlowSummary(_plain_steps(text), None, None, "line count")
    try:
        result = analyze_solution(text, question_text)
    except Exception as exc:  # a parser failure on one response must not stop the analysis
        return FlowSummary(_plain_steps(text), None, None, f"line count (flow failed: {type(exc).__name__})")
    return from_flow_result(result)


def stored_flows(root: Path) -> dict[str, FlowSummary]:
    """Flow summaries by record key from the run's flow document (empty when it has not run).

    Reusing them keeps `mathlens sensitivity` consistent with `mathlens analyze --only flow` and
    avoids analysing every response twice. A flow document this version cannot read (an older
    layout) is not an error here: the responses are analysed afresh instead.
    """
    from mathlens.analyze.flow.models import FLOW
    from mathlens.runs.documents import DocumentError

    try:
        return {e.record.key: from_flow_result(e.result, "flow (stored)") for e in FLOW.entries(root)
                if e.status == "ok" and e.result is not None}
    except DocumentError:
        return {}
