"""Format compliance: LaTeX and markup in responses whose system role forbids them.

The calculus seed chose its model partly by this criterion (seed 000, §5.1): a model that keeps
writing `\\frac{x^2}{4}` or `$...$` when told to use keyboard notation is harder for a grader to
read. Each response gets a count per kind of violation; `summarize_compliance` totals them per
model.

    >>> r = format_violations(r"We get $\\frac{1}{2}$ and **done**.")
    >>> r.counts["latex_command"], r.counts["dollar_math"], r.counts["markdown_emphasis"]
    (1, 1, 1)
    >>> r.compliant
    False
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

#: kind -> (pattern, is it LaTeX (True) or general markup (False))
_PATTERNS: dict[str, tuple[re.Pattern[str], bool]] = {
    "dollar_math": (re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\s*\d[\d,.]*(?:\s|$))[^$\n]+?\$", re.S), True),
    "latex_delimiter": (re.compile(r"\\[()\[\]]"), True),
    "latex_command": (re.compile(r"\\[A-Za-z]+"), True),
    "latex_environment": (re.compile(r"\\begin\{[^}]*\}"), True),
    "markdown_emphasis": (re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__"), False),
    "markdown_heading": (re.compile(r"(?m)^#{1,6}\s+\S"), False),
    "markdown_code": (re.compile(r"```|`[^`\n]+`"), False),
    "markdown_table": (re.compile(r"(?m)^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$"), False),
}

#: phrases in a system role that forbid LaTeX (any one of them is enough)
_FORBIDS_LATEX = re.compile(r"(?i)(?:no|not|never|without|avoid|don't|do\s+not)\b[^.\n]{0,40}\blatex\b|"
                            r"\blatex\b[^.\n]{0,20}\b(?:forbidden|not allowed)")
_FORBIDS_MARKUP = re.compile(r"(?i)(?:no|not|never|without|avoid|don't|do\s+not)\b[^.\n]{0,60}\bmarkup\b")


@dataclass(frozen=True)
class FormatRules:
    """What a system role forbids: LaTeX, and other markup (markdown) beside it."""

    latex: bool = True
    markup: bool = True


def rules_from_role(system_role: str | None) -> FormatRules | None:
    """The format rules stated by a system role, or None when it forbids neither LaTeX nor markup.

    >>> rules_from_role("Do not use LaTeX or any other markup.")
    FormatRules(latex=True, markup=True)
    >>> rules_from_role("You are a helpful tutor.") is None
    True
    """
    if not system_role:
        return None
    latex = bool(_FORBIDS_LATEX.search(system_role))
    markup = bool(_FORBIDS_MARKUP.search(system_role))
    return FormatRules(latex=latex, markup=markup) if latex or markup else None


class FormatReport(BaseModel):
    """Violations in one response. `compliant` is judged against `rules` (both forbidden by default)."""

    model_config = ConfigDict(frozen=True)

    counts: dict[str, int]
    latex: int
    markup: int
    compliant: bool


def format_violations(text: str | None, rules: FormatRules | None = None) -> FormatReport:
    """Count each kind of LaTeX and markup violation in `text`.

    A `$` before a plain amount ("$18") is currency, not math. `\\(`, `\\[` and `\\begin{}` are
    counted beside the commands they introduce, so a response full of LaTeX scores high on
    several kinds at once.
    """
    rules = rules or FormatRules()
    text = text or ""
    counts = {kind: len(pattern.findall(text)) for kind, (pattern, _) in _PATTERNS.items()}
    latex = sum(n for kind, n in counts.items() if _PATTERNS[kind][1])
    markup = sum(n for kind, n in counts.items() if not _PATTERNS[kind][1])
    compliant = not ((rules.latex and latex) or (rules.markup and markup))
    return FormatReport(counts=counts, latex=latex, markup=markup, compliant=compliant)


class ComplianceSummary(BaseModel):
    """Format compliance of one model over its responses."""

    model: str
    responses: int
    compliant: int
    rate: float | None
    latex_violations: int
    markup_violations: int
    responses_with_latex: int
    responses_with_markup: int
    by_kind: dict[str, int]


def summarize_compliance(reports: Iterable[tuple[str, FormatReport]]) -> list[ComplianceSummary]:
    """Per-model totals from `(model, report)` pairs, in order of first appearance."""
    grouped: dict[str, list[FormatReport]] = {}
    for model, report in reports:
        grouped.setdefault(model, []).append(report)
    out = []
    for model, rs in grouped.items():
        by_kind = {kind: sum(r.counts.get(kind, 0) for r in rs) for kind in _PATTERNS}
        ok = sum(r.compliant for r in rs)
        out.append(ComplianceSummary(
            model=model, responses=len(rs), compliant=ok, rate=ok / len(rs) if rs else None,
            latex_violations=sum(r.latex for r in rs), markup_violations=sum(r.markup for r in rs),
            responses_with_latex=sum(r.latex > 0 for r in rs),
            responses_with_markup=sum(r.markup > 0 for r in rs), by_kind=by_kind,
        ))
    return out
