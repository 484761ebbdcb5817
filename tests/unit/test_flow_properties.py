"""Property-based checks: random text and expressions through segmentation, extraction, parsing,
verification and the reasoning graph. No exception escapes, and every result carries a status."""

from __future__ import annotations

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow import graph as flow_graph
from mathlens.analyze.flow.segment import segment_steps
from mathlens.analyze.verify.extract import extract_math
from mathlens.analyze.verify.parse import parse_math
from mathlens.analyze.verify.steps import verify_steps

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_ATOMS = ["x", "y", "2", "-3", "1/2", "9", "^", "**", "(", ")", "[", "]", "{", "}", "=", "<", ">", "+", "-", "*",
          "/", "\\frac{", "\\sqrt{", "\\int", "dx", "$", "$$", "\\[", "\\]", "\\(", "\\)", "sin", "ln", "!", ",",
          ".", " ", "\n", "\n\n", "Step 1:", "(a)", "- ", "so", "\u202e", "\x00", "\x1b[31m", "e", "pi", "oo", "∞"]
math_text = st.lists(st.sampled_from(_ATOMS), max_size=60).map("".join)
any_text = st.one_of(st.text(max_size=400), math_text, st.tuples(st.text(max_size=80), math_text).map("".join))


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_segmentation_keeps_offsets(text: str) -> None:
    steps = segment_steps(text, max_chars=120, max_steps=20)
    assert len(steps) <= 20
    for step in steps:
        assert text[step.start:step.end] == step.text and step.text.strip() == step.text
        assert len(step.text) <= 120
    assert [s.index for s in steps] == list(range(len(steps)))


@SETTINGS
@given(any_text)
def test_extraction_spans_point_into_the_text(text: str) -> None:
    for span in extract_math(text):
        assert 0 <= span.start <= span.end <= len(text)
        assert span.notation in ("plain", "latex")


@SETTINGS
@given(math_text)
def test_parsing_always_has_a_status(text: str) -> None:
    parsed = parse_math(text, timeout_s=1.0)
    assert parsed.status in ("ok", "unparseable", "unverifiable")
    assert parsed.ok == (parsed.status == "ok")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(math_text, min_size=1, max_size=4))
def test_verification_always_has_a_status(steps: list[str]) -> None:
    results = verify_steps(steps, "Let f(x) = x^2.")
    assert len(results) == len(steps)
    for r in results:
        assert r.status in ("ok", "timeout", "error", "skipped")
        assert r.verdict in ("valid", "invalid", "unverifiable", "none")
        assert all(c.status in ("valid", "invalid", "unverifiable", "definition") for c in r.claims)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_whole_analysis_never_raises(text: str) -> None:
    result = analyze_solution(text)
    assert result.status in ("ok", "empty")
    assert all(s.verdict in ("valid", "invalid", "unverifiable", "none") for s in result.steps)


_ITEMS = ["x", "y", "f_x", "-3", "3", "12", "1/2", "-1/2", "2.5", "x1", "nabla_f", "56", "ab", "(-8, 1)",
          "(3, 12)", "-8", "1"]
_SEPS = [" ", "-", "/", ".", ",", "=", "(", ")", "", "_", "--"]
facts = st.builds(
    flow_graph.StepFacts,
    text=st.lists(st.tuples(st.sampled_from(_ITEMS), st.sampled_from(_SEPS)).map("".join), max_size=8).map("".join),
    defines=st.lists(st.sampled_from(_ITEMS), max_size=2).map(tuple),
    produces=st.lists(st.sampled_from(_ITEMS), max_size=2).map(tuple),
    mentions=st.lists(st.sampled_from(_ITEMS), max_size=3).map(tuple),
    has_math=st.booleans(),
    unknowns=st.lists(st.sampled_from(["x", "y", "f_x"]), max_size=2).map(tuple),
)


def _reference_graph(steps: list[flow_graph.StepFacts]) -> set[tuple[int, int, tuple[str, ...]]]:
    """The graph's definition, one pair of steps at a time (quadratic; fine for a few steps)."""
    graph = nx.DiGraph()
    for j, later in enumerate(steps):
        used = flow_graph._uses(later)
        for i in range(j):
            introduced = flow_graph._introduced(steps[i])
            shared = (introduced & used) | {v for v in introduced - used if flow_graph._in_text(v, later.text)}
            # a stated tuple of numbers is used when every entry is (small entries included)
            for item in introduced - shared:
                parts = flow_graph.components(item)
                if len(parts) >= 2 and all(flow_graph._TEXT_ITEM.fullmatch(p) for p in parts) and \
                        any(not flow_graph._TRIVIAL.match(p) for p in parts) and \
                        all(p in used or flow_graph._in_text(p, later.text) for p in parts):
                    shared.add(item)
            # a tuple whose every entry was stated before uses the latest step stating each small entry
            for item in used | flow_graph._introduced(later):
                parts = flow_graph.components(item)
                stated = [{p for p in steps[k].produces if flow_graph._SMALL_INT.match(p)} for k in range(j)]
                if len(parts) >= 2 and any(not flow_graph._TRIVIAL.match(p) for p in parts) and all(
                        any(p in flow_graph._introduced(steps[k]) or p in stated[k] for k in range(j))
                        for p in parts):
                    shared |= {p for p in parts if p in stated[i] and not any(p in stated[k] for k in range(i + 1, j))}
            # a step with an equation in an unknown, or a value for it, uses the latest equation in it
            for name in {*later.unknowns, *later.defines}:
                if name in steps[i].unknowns and not any(name in steps[k].unknowns for k in range(i + 1, j)):
                    shared.add(f"equation in {name}")
            if shared:
                graph.add_edge(i, j, via=tuple(sorted(shared)[:5]))
    return {(a, b, d["via"]) for a, b, d in graph.edges(data=True)}


@settings(max_examples=300, deadline=None)
@given(st.lists(facts, max_size=8))
def test_indexed_graph_matches_its_definition(steps: list[flow_graph.StepFacts]) -> None:
    built = flow_graph.build_graph(steps)
    assert {(a, b, tuple(d["via"])) for a, b, d in built.edges(data=True)} == _reference_graph(steps)
