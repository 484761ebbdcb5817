"""The rubric data: 19 items, their dimensions, scales and reversed (absence) items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.adaptivity.judge import verdict_model
from mathlens.analyze.adaptivity.rubric import RubricItem, load_rubric
from mathlens.analyze.judging.units import Ordinal
from mathlens.errors import UnknownNameError, UserError

CASES = Path(__file__).resolve().parents[1] / "cases" / "adaptivity" / "rubric_scales.yaml"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load(CASES.read_text(encoding="utf-8"))
ROWS = [(dim, item_id, spec) for dim, items in EXPECTED.items() for item_id, spec in items.items()]


def test_nineteen_items_in_seed_order() -> None:
    rubric = load_rubric("v1")
    assert [i.id for i in rubric.items] == [f"Q{k}" for k in range(1, 20)]
    assert [len(rubric.by_dimension(d)) for d in ("adaptivity", "correctness", "quality")] == [9, 3, 7]


@pytest.mark.parametrize(("dimension", "item_id", "spec"), ROWS, ids=[r[1] for r in ROWS])
def test_item_scale_direction_and_dimension(dimension: str, item_id: str, spec: dict[str, Any]) -> None:
    item = load_rubric().item(item_id)
    assert item.dimension == dimension
    assert list(item.values) == spec["values"]
    assert item.direction == spec["direction"]
    if "code" in spec:
        assert item.code == spec["code"]
        assert load_rubric().item(spec["code"]) is item


@pytest.mark.parametrize("item_id", [r[1] for r in ROWS if r[2]["direction"] == "absence"])
def test_absence_items_score_one_when_the_failure_is_absent(item_id: str) -> None:
    item = load_rubric().item(item_id)
    assert item.value_of("no") == 1
    assert item.value_of("yes") == 0
    assert item.satisfied(item.value_of("no")) and not item.satisfied(item.value_of("yes"))


def test_negative_answers_on_motivational_items() -> None:
    for item_id in ("Q2", "Q3"):
        item = load_rubric().item(item_id)
        assert item.value_of("negative") == -1 and item.min_value == -1 and item.max_value == 1


def test_unknown_labels_values_and_items() -> None:
    item = load_rubric().item("Q12")
    assert item.label_of(1) == "mostly_correct"
    with pytest.raises(UserError):
        item.value_of("yes")
    with pytest.raises(UserError):
        item.label_of(3)
    with pytest.raises(UnknownNameError, match="Did you mean"):
        load_rubric().item("Q20")
    with pytest.raises(UnknownNameError):
        load_rubric("v9")


def test_verdict_schema_only_allows_the_item_labels() -> None:
    schema = verdict_model(load_rubric().item("Q3")).model_json_schema()
    assert schema["properties"]["rating"]["enum"] == ["negative", "no", "yes"]
    assert schema["required"] == ["rationale", "rating"]
    assert schema["properties"]["rationale"]["maxLength"] > 0


def test_malformed_items_are_rejected() -> None:
    base = {"id": "Q1", "code": "X", "dimension": "quality", "name": "n", "question": "q", "criterion": "c"}
    with pytest.raises(ValueError, match="absence item"):
        RubricItem.model_validate({**base, "direction": "absence", "scale": [
            {"value": 0, "label": "no", "meaning": "m"}, {"value": 1, "label": "yes", "meaning": "m"}]})
    with pytest.raises(ValueError, match="lowest value"):
        RubricItem.model_validate({**base, "direction": "presence", "scale": [
            {"value": 1, "label": "yes", "meaning": "m"}, {"value": 0, "label": "no", "meaning": "m"}]})


WORKSHEET = yaml.safe_load((CASES.parent / "worksheet_scores.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", WORKSHEET["accepted"], ids=lambda c: f"{c['item']}={c['text'].strip()}")
def test_what_an_annotator_may_write(case: dict[str, Any]) -> None:
    unit = load_rubric().item(case["item"]).unit
    assert unit.scale.parse(case["text"], unit.id, "sheet.csv:2") == case["score"]


@pytest.mark.parametrize("case", WORKSHEET["rejected"], ids=lambda c: f"{c['item']}={c['text']}")
def test_what_an_annotator_may_not_write(case: dict[str, Any]) -> None:
    unit = load_rubric().item(case["item"]).unit
    with pytest.raises(UserError, match=rf"^sheet.csv:2: score .* for {case['item']} is not one of"):
        unit.scale.parse(case["text"], unit.id, "sheet.csv:2")


def test_items_are_ordinal_units_and_dimensions_pool_them() -> None:
    rubric = load_rubric()
    unit = rubric.item("Q13").unit
    assert (unit.id, unit.code, unit.name) == ("Q13", rubric.item("Q13").code, rubric.item("Q13").name)
    assert isinstance(unit.scale, Ordinal) and unit.scale.top == 1 and unit.scale.direction == "absence"
    assert unit.scale.labels == ("yes", "no") and unit.scale.values == (0, 1)
    assert rubric.item("Q13").criterion in unit.instruction and rubric.item("Q13").question in unit.instruction
    assert [u.id for u in rubric.units(["SBS", "Q1"])] == ["Q1", "Q9"]
    scopes = {s.name: s for s in rubric.scopes()}
    assert list(scopes) == ["adaptivity", "correctness", "quality"]
    assert scopes["correctness"].units == ("Q10", "Q11", "Q12") and scopes["correctness"].combine == "pool"
    assert sum(u.scale.top for u in rubric.units()) == 20  # 9 + 4 + 7 possible points
