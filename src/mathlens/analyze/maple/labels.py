"""Error label sets: the seven MAPLE defaults, user files, and drafts from label discovery.

A label set is data (YAML or JSON on disk): each label has a stable `id` that judges must answer
with, a display `name`, a `definition` shown to the judge, a `severity` rank and the penalty
`weight` the score uses. The default set lives in `data/labels_default_v1.yaml`.

    >>> labels = default_labels()
    >>> [lab.id for lab in labels.labels][:2]
    ['calculation_error', 'incorrectly_applied_method']
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mathlens.datafiles import load_model_file
from mathlens.errors import UserError

#: Label ids that judge-free detectors assign; a label set that lacks them simply gets no such labels.
INCOHERENT = "incoherent_output"
NO_SOLUTION = "no_solution"

_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class Label(BaseModel):
    """One error label."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="stable identifier, lower_snake_case; what a judge answers with")
    name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    severity: int = Field(ge=1, description="1 = least serious")
    weight: float = Field(ge=0, description="penalty weight w_l in the MAPLE error rate")
    examples: list[str] = Field(default_factory=list, description="representative reflections, if any")

    @model_validator(mode="after")
    def _check_id(self) -> Label:
        if not _ID.match(self.id):
            raise ValueError(f"label id {self.id!r} must be lower_snake_case (a-z, 0-9, _), at most 64 characters")
        return self


class LabelSet(BaseModel):
    """A versioned set of error labels."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    version: int = Field(1, ge=1)
    source: Literal["default", "user", "discovered"] = "user"
    labels: list[Label] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> LabelSet:
        ids = [lab.id for lab in self.labels]
        if len(ids) != len(set(ids)):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"label ids repeat: {dupes}")
        if sum(lab.weight for lab in self.labels) <= 0:
            raise ValueError("at least one label needs a positive weight")
        return self

    @property
    def ids(self) -> list[str]:
        """Label ids in file order."""
        return [lab.id for lab in self.labels]

    def weights(self) -> dict[str, float]:
        """Label id -> penalty weight."""
        return {lab.id: lab.weight for lab in self.labels}

    def get(self, label_id: str) -> Label | None:
        """The label with this id, or None."""
        return next((lab for lab in self.labels if lab.id == label_id), None)

    def with_weights(self, weights: dict[str, float]) -> LabelSet:
        """A copy with some weights replaced; unknown ids are a `UserError`."""
        unknown = sorted(set(weights) - set(self.ids))
        if unknown:
            raise UserError(f"weights name labels not in set {self.id!r}: {unknown}; known: {self.ids}")
        labels = [lab.model_copy(update={"weight": float(weights.get(lab.id, lab.weight))}) for lab in self.labels]
        return LabelSet(id=self.id, version=self.version, source=self.source, labels=labels)

    def by_severity(self) -> list[Label]:
        """Labels from least to most serious."""
        return sorted(self.labels, key=lambda lab: (lab.severity, lab.id))


def default_labels() -> LabelSet:
    """The seven MAPLE labels with our definitions and severity-rank weights (version 1)."""
    text = (resources.files("mathlens.analyze.maple") / "data" / "labels_default_v1.yaml").read_text("utf-8")
    return LabelSet.model_validate(yaml.safe_load(text))


def load_label_set(path: Path | str) -> LabelSet:
    """Read a label set from YAML or JSON; a bad file is a one-line `UserError`."""
    return load_model_file(path, LabelSet, "label")


def save_label_set(labels: LabelSet, path: Path | str) -> Path:
    """Write a label set as YAML (or JSON when the name ends in .json)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = labels.model_dump(mode="json")
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    return path
