"""Format compliance: LaTeX and markup counted per response and per model."""

from __future__ import annotations

from mathlens.analyze.grading.compliance import (
    FormatRules,
    format_violations,
    rules_from_role,
    summarize_compliance,
)
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE


def test_plain_keyboard_math_is_compliant() -> None:
    report = format_violations("1. f(x) = x^2/4\n2. f'(x) = x/2, sqrt(x+2), <-8, 1>\nFinal answer: x/2")
    assert report.compliant and report.latex == 0 and report.markup == 0


def test_currency_is_not_math() -> None:
    assert format_violations("She makes $18 a day and $2 per egg.").latex == 0


def test_each_kind_is_counted() -> None:
    text = "## Solution\nWe get $\\frac{x^2}{4}$ and \\(\\sqrt{2}\\).\n**Answer:** `42`\n$$x$$"
    report = format_violations(text)
    assert report.counts["markdown_heading"] == 1
    assert report.counts["dollar_math"] == 2
    assert report.counts["latex_delimiter"] == 2
    assert report.counts["latex_command"] == 2  # \frac and \sqrt (\( \) are delimiters)
    assert report.counts["markdown_emphasis"] == 1
    assert report.counts["markdown_code"] == 1
    assert not report.compliant


def test_rules_decide_what_counts_against_compliance() -> None:
    only_markdown = "**bold** x^2"
    assert not format_violations(only_markdown).compliant
    assert format_violations(only_markdown, FormatRules(latex=True, markup=False)).compliant


def test_rules_are_read_from_the_system_role() -> None:
    rules = rules_from_role(EXAM_SYSTEM_ROLE)
    assert rules == FormatRules(latex=True, markup=True)
    assert rules_from_role("Use LaTeX for all math.") is None
    assert rules_from_role("Do NOT use LaTeX or math markup of any kind.") == FormatRules(latex=True, markup=True)


def test_summary_per_model() -> None:
    reports = [("m1", format_violations("x^2")), ("m1", format_violations("$x^2$")),
               ("m2", format_violations("\\frac{1}{2} and \\sqrt{3}"))]
    by_model = {s.model: s for s in summarize_compliance(reports)}
    assert by_model["m1"].responses == 2 and by_model["m1"].compliant == 1 and by_model["m1"].rate == 0.5
    assert by_model["m2"].latex_violations == 2 and by_model["m2"].responses_with_latex == 1
