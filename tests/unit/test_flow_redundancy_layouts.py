"""Redundant steps do not depend on layout: tests/cases/flow/redundancy_layouts.yaml.

Each solution is written in four layouts (numbered steps with "Final answer:", "Step k:" headings,
paragraphs, LaTeX display lines); steps are compared by a key piece of their text, since indices
differ between layouts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow import analyze_solution
from mathlens.analyze.flow.graph import components, question_parts

CASES_FILE = Path(__file__).resolve().parents[1] / "cases" / "flow" / "redundancy_layouts.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))["cases"]
#: later steps that use an earlier result by name, with arguments, or through its components
REFERENCES_FILE = CASES_FILE.with_name("redundancy_references.yaml")
REFERENCES: list[dict[str, Any]] = yaml.safe_load(REFERENCES_FILE.read_text(encoding="utf-8"))["cases"]


def _redundant_keys(text: str, question: str, keys: list[str]) -> set[str]:
    result = analyze_solution(text, question)
    found: set[str] = set()
    for key in keys:
        holders = [s for s in result.steps if key in s.text]
        assert len(holders) == 1, f"key {key!r} should name exactly one step, found {len(holders)}"
        if holders[0].redundant:
            found.add(key)
    return found


def test_the_table_has_enough_cases() -> None:
    assert len(CASES) >= 4
    assert all(len(c["layouts"]) >= 4 for c in CASES)
    assert sum(1 for c in CASES if c["redundant"]) >= 2
    assert sum(1 for c in CASES if not c["redundant"]) >= 3


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_layout_gives_the_expected_redundant_steps(case: dict[str, Any]) -> None:
    got = {layout["layout"]: _redundant_keys(layout["text"], case["question"], layout["keys"])
           for layout in case["layouts"]}
    expected = set(case["redundant"])
    assert got == {name: expected for name in got}


def _step_of(result: Any, key: str) -> int:
    holders = [s.index for s in result.steps if key in s.text]
    assert len(holders) == 1, f"key {key!r} should name exactly one step, found {len(holders)}"
    return holders[0]


@pytest.mark.parametrize("case", REFERENCES, ids=[c["name"] for c in REFERENCES])
def test_a_reference_by_name_or_components_is_a_dependency(case: dict[str, Any]) -> None:
    for layout in case["layouts"]:
        result = analyze_solution(layout["text"], case["question"])
        redundant = {key for key in layout["keys"] if result.steps[_step_of(result, key)].redundant}
        assert redundant == set(case["redundant"]), layout["layout"]
        for later, earlier in _pairs(case, layout):
            assert _step_of(result, earlier) in result.steps[_step_of(result, later)].uses, \
                (layout["layout"], later, earlier, [s.uses for s in result.steps])


def _pairs(case: dict[str, Any], layout: dict[str, Any]) -> list[tuple[str, str]]:
    """The `uses` pairs of a case in this layout's keys (LaTeX layouts key the same steps differently:
    a pair is given by the position of its keys in the plain layouts' key list)."""
    plain = case["layouts"][0]["keys"]
    out = []
    for later, earlier in case["uses"]:
        out.append((layout["keys"][plain.index(later)] if later in plain else later,
                    layout["keys"][plain.index(earlier)] if earlier in plain else earlier))
    return out


def test_a_final_answer_line_links_to_the_steps_it_restates() -> None:
    case = next(c for c in CASES if c["name"] == "gradient_four_parts")
    layout = next(x for x in case["layouts"] if x["layout"] == "numbered_final_answer")
    result = analyze_solution(layout["text"], case["question"])
    last = result.steps[-1]
    assert last.text.startswith("Final answer:") and last.final
    # (a) the gradient, (b) the directional derivative, (c) the direction, (d) the rate
    restated = {result.steps[i].text.split(" ", 1)[0] for i in last.uses}
    assert {"2.", "5.", "6.", "7."} <= restated


def test_helpers() -> None:
    assert components("((1, 2), sqrt(3))") == ["(1, 2)", "sqrt(3)"]
    assert components("(x + 1)*(x - 1)") == []
    assert question_parts("(a) find f' (b) find f'' (c) find f'''") == 3
    assert question_parts("Find the value of (a + b) when a = 2.") == 0
