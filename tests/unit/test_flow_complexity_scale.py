"""The complexity score's d̄ under each depth definition, on the calculus study's worked example.

The study (seed 000, §6.1) prints a seven-step gradient solution with four unique operations and
four concepts and a complexity score of 23; its instructor scenario flags complexity above 20.
"""

from __future__ import annotations

import pytest

from mathlens.analyze.ablation.flags import FlagConfig, question_flags
from mathlens.analyze.flow import analyze_solution, complexity_score
from mathlens.analyze.flow.models import DENSE_THRESHOLDS, dense_threshold
from mathlens.analyze.flow.solution import FlowConfig, step_tokens
from mathlens.analyze.verify.steps import verify_steps
from mathlens.report.context import ReportOptions

# The seven steps as the study's report prints them (§6.1).
STUDY_STEPS = [
    r"Start solving the calculus problem step by step.",
    r"(a) Find $\nabla f$: the gradient of f, using partial derivatives.",
    r"(b) Compute the directional derivative in the direction of $\overrightarrow{w}=-\widehat{𝚤}+\widehat{𝚥}$ "
    r"at $(-1,4)$.",
    r"Compute $\nabla f(-1,4)=\langle 2(-1)\left(4\right),{(-1)}^2\rangle =\langle -8,1\rangle$.",
    r"Find the unit vector in the direction of $\overrightarrow{w}=-\widehat{𝚤}+\widehat{𝚥}$, where "
    r"$\parallel \overrightarrow{w}\parallel =\sqrt{2}$, so the unit vector is "
    r"$\langle -{\displaystyle \frac{1}{\sqrt{2}}},{\displaystyle \frac{1}{\sqrt{2}}}\rangle$.",
    r"(c) Direction of most rapid increase at $(-1,4)$ is along $\nabla f=\langle -8,1\rangle$.",
    r"(d) Maximum rate of change at $(-1,4)$ is $\parallel \nabla f\parallel =\sqrt{{(-8)}^2+1^2}=\sqrt{65}$.",
]
STUDY_QUESTION = r"For $f(x,y)=x^{2}y$, (a) Find $\nabla f$ (b) Find the directional derivative at $(-1,4)$"
STUDY_VALUE, STUDY_THRESHOLD, OPS, CONCEPTS = 23.0, 20.0, 4, 4


def _example_scores() -> dict[str, float]:
    depths = [m.depth for m in verify_steps(STUDY_STEPS, STUDY_QUESTION) if m.depth > 0]
    tokens = [step_tokens(s) for s in STUDY_STEPS]
    chars = [len(s) for s in STUDY_STEPS]
    return {"tree": complexity_score(OPS, CONCEPTS, sum(depths) / len(depths)),
            "tokens": complexity_score(OPS, CONCEPTS, sum(tokens) / len(tokens)),
            "chars": complexity_score(OPS, CONCEPTS, sum(chars) / len(chars))}


def test_only_the_character_depth_lands_the_worked_example_near_the_study() -> None:
    scores = _example_scores()
    assert abs(scores["chars"] - STUDY_VALUE) / STUDY_VALUE < 0.15  # 25.1 against 23
    assert scores["tokens"] < STUDY_THRESHOLD < scores["chars"]  # 8.9: tokens are the wrong scale
    assert scores["tree"] < 5  # 3.9: the tree height is a different scale again


def test_thresholds_are_the_study_flag_carried_to_each_scale() -> None:
    scores = _example_scores()
    assert DENSE_THRESHOLDS["chars"] == STUDY_THRESHOLD
    for definition in ("tree", "tokens"):
        assert DENSE_THRESHOLDS[definition] == round(scores[definition] * STUDY_THRESHOLD / STUDY_VALUE, 1)
    # the study's example is flagged under every definition, as 23 > 20 is in the study
    assert all(scores[d] > dense_threshold(d) for d in ("tree", "tokens", "chars"))


@pytest.mark.parametrize(("text", "expected"), [
    ("f_x = 2xy", 5),  # f x = 2 xy: the subscript mark is markup
    ("Compute $\\nabla f = \\langle -8, 1 \\rangle$.", 11),  # commands are one token each; $ is not counted
    ("The answer is 3.75 dollars.", 6),  # a decimal is one number
    ("$$\\frac{9}{\\sqrt{2}}$$", 4),  # \frac 9 \sqrt 2: braces are grouping, not content
    ("∇f · u", 4),
    ("", 0),
])
def test_token_counting(text: str, expected: int) -> None:
    assert step_tokens(text) == expected


def test_the_chosen_definition_is_stored_and_used() -> None:
    text = "1. f_x = 2xy and f_y = x^2.\n2. So ∇f = <2xy, x^2>."
    by = {d: analyze_solution(text, "For f(x, y) = x^2 y find ∇f.", FlowConfig(depth=d)).metrics
          for d in ("tree", "tokens", "chars")}
    for d, m in by.items():
        assert m.depth_definition == d
        d_bar = {"tree": m.mean_depth, "tokens": m.mean_tokens, "chars": m.mean_chars}[d]
        assert m.complexity_score == complexity_score(m.unique_operations, m.unique_concepts, d_bar)
    # "1 . f x = 2 xy and f y = x ^ 2 ." and "2 . So ∇ f = < 2 xy , x ^ 2 > .": 15 tokens each
    assert by["tree"].mean_tokens == by["chars"].mean_tokens == 15


def test_flag_thresholds_follow_the_definition() -> None:
    assert [f.name for f in question_flags(4.0, None, 0, FlagConfig())] == ["too_dense"]  # tree: above 3.4
    assert question_flags(4.0, None, 0, FlagConfig(complexity_depth="chars")) == []
    assert [f.threshold for f in question_flags(21.0, None, 0, FlagConfig(complexity_depth="chars"))] == [20.0]
    assert question_flags(4.0, None, 0, FlagConfig(complexity_max=5.0)) == []  # an explicit threshold wins
    assert ReportOptions().complexity_threshold is None  # the report uses the definition's threshold


def test_sensitivity_flags_on_the_scale_the_stored_flow_analysis_used(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A run analysed with `-O flow.depth=chars` gets its "too dense" flags at the character-scale
    threshold (the stored complexity scores are on that scale), unless a threshold is given."""

    from mathlens.analyze.ablation import SENSITIVITY
    from mathlens.analyze.registry import run_one
    from mathlens.runs.store import RunStore
    from support import report_run as fx

    run = fx.make_run(tmp_path / "run", [fx.SOLUTION], limit=1, ablate=True, analyze=False)
    store = RunStore(run)
    run_one(store, "flow", {"depth": "chars"})
    run_one(store, "sensitivity", {"n_resamples": 20})
    doc = SENSITIVITY.read(run)
    assert doc is not None and doc.summary.thresholds.complexity_max == dense_threshold("chars")
    run_one(store, "sensitivity", {"n_resamples": 20, "complexity_max": 5.0})
    doc = SENSITIVITY.read(run)
    assert doc is not None and doc.summary.thresholds.complexity_max == 5.0
