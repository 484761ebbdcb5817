"""MAPLE label sets: the defaults, files, weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.maple.labels import LabelSet, default_labels, load_label_set, save_label_set
from mathlens.errors import UserError

SEED_LABELS = {
    "complete_misunderstanding",
    "partial_misunderstanding",
    "incorrect_method",
    "incorrectly_applied_method",
    "calculation_error",
    "incoherent_output",
    "no_solution",
}


def test_default_set_has_the_seven_seed_labels_with_distinct_severities() -> None:
    labels = default_labels()
    assert set(labels.ids) == SEED_LABELS
    assert sorted(lab.severity for lab in labels.labels) == list(range(1, 8))
    assert labels.source == "default" and labels.version == 1
    assert all(len(lab.definition) > 40 for lab in labels.labels)


def test_default_weights_follow_the_documented_severity_order() -> None:
    ordered = [lab.id for lab in default_labels().by_severity()]
    assert ordered[0] == "calculation_error" and ordered[-1] == "incoherent_output"
    weights = [lab.weight for lab in default_labels().by_severity()]
    assert weights == sorted(weights) and len(set(weights)) == 7


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    labels = default_labels().with_weights({"calculation_error": 2.5})
    path = save_label_set(labels, tmp_path / f"labels{suffix}")
    back = load_label_set(path)
    assert back == labels
    assert back.weights()["calculation_error"] == 2.5


def test_unknown_weight_names_are_refused() -> None:
    with pytest.raises(UserError, match="not in set"):
        default_labels().with_weights({"typo_label": 1.0})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id: x\nlabels: []\n", "labels"),
        (
            "id: x\nlabels:\n  - {id: Bad Id, name: n, definition: d, severity: 1, weight: 1}\n",
            "lower_snake_case",
        ),
        ("id: x\nlabels:\n  - {id: a, name: n, definition: d, severity: 1, weight: 0}\n", "positive weight"),
        (
            "id: x\nlabels:\n  - {id: a, name: n, definition: d, severity: 1, weight: 1}\n"
            "  - {id: a, name: m, definition: e, severity: 2, weight: 1}\n",
            "repeat",
        ),
        ("id: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_label_files_give_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_label_set(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such label file"):
        load_label_set(tmp_path / "nope.yaml")


def test_label_set_model_rejects_duplicates_directly() -> None:
    lab = default_labels().labels[0]
    with pytest.raises(ValueError, match="repeat"):
        LabelSet(id="x", labels=[lab, lab])


def test_bad_label_file_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text("id: x\nlabels:\n  - id: a\n    name: n\n    definition: d\n    severity: high\n    weight: 1\n")
    with pytest.raises(UserError) as info:
        load_label_set(path)
    assert f"{path}:6" in str(info.value) and "labels[0].severity" in str(info.value)
