"""The four context conditions produce exactly the documented messages; diagrams are handled as documented."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.adaptivity.conditions import (
    build_messages,
    describe_for,
    item_text,
    parse_conditions,
)
from mathlens.analyze.adaptivity.design import load_tutor_exams
from mathlens.analyze.adaptivity.profiles import LearnerProfile
from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.runs.records import ItemSource

CASES = Path(__file__).resolve().parents[1] / "cases" / "adaptivity" / "conditions.yaml"
TABLE: dict[str, Any] = yaml.safe_load(CASES.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"condition-{c['condition']}")
def test_messages_per_condition(case: dict[str, Any]) -> None:
    q = Question.model_validate(TABLE["question"])
    p = LearnerProfile.model_validate(TABLE["profile"])
    texts = {
        "question": TABLE["question_text"],
        "learner+question": TABLE["learner_text"] + "\n\n" + TABLE["question_text"],
        "objectives": TABLE["objectives_text"],
    }
    got = [(m.role, m.content, m.images) for m in build_messages(q, p, case["condition"], describe_images=False)]
    assert got == [(m["role"], texts[m["content"]], ()) for m in case["messages"]]


def test_conditions_parse() -> None:
    assert parse_conditions("4,1") == [1, 4]
    for bad, msg in (("5", "unknown"), ("1,1", "twice"), ("", "at least one"), ("x", "unknown")):
        with pytest.raises(UserError, match=msg):
            parse_conditions(bad)


@pytest.fixture
def diagram_item() -> Question:
    return Question(id="d", text="What is the area?", images=["box.png"], choices={"A": "6", "B": "8"},
                    metadata={"image_description": "A 2 by 4 rectangle."})


def test_text_only_model_gets_the_written_description(diagram_item: Question) -> None:
    assert describe_for(diagram_item, "auto", accepts_images=False, model="embedded") is True
    assert item_text(diagram_item, True) == "What is the area?\n(The diagram shows: A 2 by 4 rectangle.)\nA. 6\nB. 8"


def test_send_mode_refuses_a_text_only_model(diagram_item: Question) -> None:
    with pytest.raises(UserError, match="text-only and cannot read the diagram of item 'd'"):
        describe_for(diagram_item, "send", accepts_images=False, model="embedded")


def test_image_capable_model_gets_the_file(diagram_item: Question, tmp_path: Path) -> None:
    assert describe_for(diagram_item, "auto", accepts_images=True, model="m") is False
    # image paths are relative to the item file, and requests name them absolutely
    exam_file = {"id": "ex", "name": "Ex", "questions": [diagram_item.model_dump(exclude_defaults=True)]}
    (tmp_path / "items.yaml").write_text(yaml.safe_dump(exam_file), encoding="utf-8")
    (exam,) = load_tutor_exams([ItemSource(source=str(tmp_path / "items.yaml"))])
    p = LearnerProfile(id="p", grade=4, performance="high")
    (user,) = build_messages(exam.questions[0], p, 1, describe_images=False)
    assert user.images == (str((tmp_path / "box.png").resolve()),)
    assert "diagram shows" not in user.content
    # describe mode wins even for an image-capable model
    assert describe_for(diagram_item, "describe", accepts_images=True, model="m") is True


def test_missing_description_is_a_clear_error() -> None:
    q = Question(id="nodesc", text="Look at the picture.", images=["x.png"])
    with pytest.raises(UserError, match=r"no metadata\.image_description"):
        item_text(q, True)
