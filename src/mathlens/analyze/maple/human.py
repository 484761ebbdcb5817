"""Human step error labels for MAPLE solutions: the annotation files, read and checked, and the
worksheet that starts one.

People label the steps of a solution as the `MAPLE` document numbered them (`SolutionMaple.steps`,
1-based), with the label ids of the run's label set, several labels per step allowed. Two formats:

* **JSON Lines** (`.jsonl`): one object per solution,
  ``{"key": RECORD_KEY, "erroneous_steps": [{"step": 2, "labels": ["calculation_error"]}]}``,
  optionally with `annotator` and `note`; steps not listed have no error, and an empty
  `erroneous_steps` says the person found none. The informational fields a worksheet carries
  (`question_id`, `question`, `reference`, `predicted`, `numbered_steps`) may stay in the file;
  `question_id`, when present, must match the record's.
* **CSV** (`.csv`): one row per step, columns `key`, `step`, `labels` (ids separated by `;`), and
  optionally `annotator`, `note`, `question_id`, `step_text`. A blank `labels` cell is a step
  without error; a row with a blank `step` (and blank labels) marks a solution whose steps are all
  free of error. Steps without a row have no error.

Anything else is refused with the file, the line and the field: a field or column that is not one
of these, a record key the MAPLE document does not hold, a solution annotated twice, a step number
outside the solution's steps or listed twice, a label id the label set does not have.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.maple.results import SolutionMaple
from mathlens.errors import UnknownNameError, UserError

Format = Literal["jsonl", "csv"]
CSV_SEPARATOR = ";"
#: JSONL fields a worksheet writes for the annotator to read; ignored on import (but `question_id`).
INFO_FIELDS = ("question_id", "question", "reference", "predicted", "numbered_steps")
JSONL_FIELDS = ("key", "erroneous_steps", "annotator", "note", *INFO_FIELDS)
STEP_FIELDS = ("step", "labels")
CSV_REQUIRED = ("key", "step", "labels")
CSV_COLUMNS = (*CSV_REQUIRED, "annotator", "note", "question_id", "step_text")


class HumanStep(BaseModel):
    """One step a person found erroneous (1-based `step`) and its labels."""

    model_config = ConfigDict(frozen=True)

    step: int = Field(ge=1)
    labels: list[str] = Field(min_length=1)


class HumanAnnotation(BaseModel):
    """One solution as a person labelled it: `steps` lists the erroneous steps only, by number."""

    model_config = ConfigDict(frozen=True)

    key: str
    steps: list[HumanStep] = Field(default_factory=list)
    annotator: str = ""
    note: str = ""
    line: int = Field(description="line of the file where the annotation starts")


@dataclass(frozen=True)
class HumanFile:
    """Every annotation of one file, in file order."""

    path: Path
    format: Format
    annotations: list[HumanAnnotation]


def file_format(path: Path) -> Format:
    """`jsonl` or `csv`, from the file name."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise UserError(f"{path}: human step labels are read from .jsonl or .csv files, not {suffix or 'no suffix'!r}")


@dataclass(frozen=True)
class _Checker:
    """Checks one file's values against the MAPLE document (`solutions` by key) and its label set."""

    path: Path
    solutions: Mapping[str, SolutionMaple]
    labels: LabelSet

    def fail(self, line: int, field: str, message: str) -> UserError:
        return UserError(f"{self.path}:{line}: field {field}: {message}")

    def solution(self, key: Any, line: int) -> SolutionMaple:
        if not isinstance(key, str) or not key:
            raise self.fail(line, "key", "a record key (text) is required")
        sol = self.solutions.get(key)
        if sol is None:
            raise self.fail(line, "key", f"record {key!r} is not in this run's MAPLE document")
        return sol

    def step(self, value: Any, sol: SolutionMaple, line: int, field: str) -> int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(line, field, f"a step number is a whole number, not {value!r}")
        n = len(sol.steps)
        if not 1 <= value <= n:
            raise self.fail(line, field, f"step {value} is out of range: the solution of {sol.record.key!r} has "
                                         f"{n} step{'s' if n != 1 else ''} (numbered 1 to {n})")
        return value

    def label_list(self, values: Iterable[Any], line: int, field: str, indexed: bool) -> list[str]:
        """Label ids, checked against the label set, without repeats; `indexed` names each item
        (`labels.1`) in an error, else the field itself."""
        out: list[str] = []
        for i, value in enumerate(values):
            label = value.strip() if isinstance(value, str) else value
            if not isinstance(label, str) or self.labels.get(label) is None:
                known = f" of label set {self.labels.id} v{self.labels.version}"
                raise self.fail(line, f"{field}.{i}" if indexed else field,
                                str(UnknownNameError("label", str(value), self.labels.ids)).replace(
                                    ". Known:", f". Known{known}:", 1))
            if label not in out:
                out.append(label)
        return out


def read_human_labels(path: Path, solutions: Mapping[str, SolutionMaple], labels: LabelSet) -> HumanFile:
    """Every annotation of a JSONL or CSV file, checked (see the module notes); a `UserError` names
    the file, line and field of the first problem."""
    fmt = file_format(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file of human step labels") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    check = _Checker(path, solutions, labels)
    annotations = _read_jsonl(text, check) if fmt == "jsonl" else _read_csv(text, check)
    if not annotations:
        raise UserError(f"{path}: holds no annotation")
    return HumanFile(path=path, format=fmt, annotations=annotations)


def _read_jsonl(text: str, check: _Checker) -> list[HumanAnnotation]:
    out: list[HumanAnnotation] = []
    first_line: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UserError(f"{check.path}:{lineno}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise UserError(f"{check.path}:{lineno}: a line holds one JSON object, not {type(obj).__name__}")
        for name in obj:
            if name not in JSONL_FIELDS:
                raise check.fail(lineno, str(name), f"unknown field; a line may hold {', '.join(JSONL_FIELDS)}")
        sol = check.solution(obj.get("key"), lineno)
        key = sol.record.key
        if key in first_line:
            raise check.fail(lineno, "key", f"record {key!r} is annotated twice (first on line {first_line[key]})")
        first_line[key] = lineno
        if obj.get("question_id") is not None and obj["question_id"] != sol.record.question_id:
            raise check.fail(lineno, "question_id", f"{obj['question_id']!r} is not the question of record {key!r} "
                                                    f"({sol.record.question_id!r})")
        steps = _jsonl_steps(obj.get("erroneous_steps", []), sol, lineno, check)
        annotator, note = obj.get("annotator", ""), obj.get("note", "")
        for name, value in (("annotator", annotator), ("note", note)):
            if not isinstance(value, str):
                raise check.fail(lineno, name, "must be text")
        out.append(HumanAnnotation(key=key, steps=steps, annotator=annotator, note=note, line=lineno))
    return out


def _jsonl_steps(items: Any, sol: SolutionMaple, lineno: int, check: _Checker) -> list[HumanStep]:
    if not isinstance(items, list):
        raise check.fail(lineno, "erroneous_steps", "must be a list of {step, labels} objects")
    seen: set[int] = set()
    steps = []
    for i, item in enumerate(items):
        field = f"erroneous_steps.{i}"
        if not isinstance(item, dict):
            raise check.fail(lineno, field, "must be an object with step and labels")
        for name in item:
            if name not in STEP_FIELDS:
                raise check.fail(lineno, f"{field}.{name}", "unknown field; a step holds step and labels")
        for name in STEP_FIELDS:
            if name not in item:
                raise check.fail(lineno, f"{field}.{name}", "is required")
        step = check.step(item["step"], sol, lineno, f"{field}.step")
        if step in seen:
            raise check.fail(lineno, f"{field}.step", f"step {step} is listed twice")
        seen.add(step)
        if not isinstance(item["labels"], list) or not item["labels"]:
            raise check.fail(lineno, f"{field}.labels", "must be a non-empty list of label ids")
        steps.append(HumanStep(step=step, labels=check.label_list(item["labels"], lineno, f"{field}.labels", True)))
    return sorted(steps, key=lambda s: s.step)


@dataclass
class _CsvSolution:
    """The rows of one solution read so far."""

    line: int
    annotator: str = ""
    notes: list[str] = field(default_factory=list)
    steps: dict[int, list[str]] = field(default_factory=dict)
    blank_row: int | None = None
    labelled_row: int | None = None


def _read_csv(text: str, check: _Checker) -> list[HumanAnnotation]:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    for name in header:
        if name not in CSV_COLUMNS:
            raise check.fail(1, repr(name), f"unknown column; the columns are {', '.join(CSV_COLUMNS)}")
    for name in CSV_REQUIRED:
        if name not in header:
            raise check.fail(1, name, "the column is missing")
    by_key: dict[str, _CsvSolution] = {}
    for row in reader:
        line = reader.line_num
        if None in row:
            raise UserError(f"{check.path}:{line}: more cells than columns")
        cells = {k: (v or "").strip() for k, v in row.items()}
        if not any(cells.values()):
            continue
        sol = check.solution(cells["key"], line)
        key = sol.record.key
        entry = by_key.setdefault(key, _CsvSolution(line=line))
        if cells.get("question_id") and cells["question_id"] != sol.record.question_id:
            raise check.fail(line, "question_id", f"{cells['question_id']!r} is not the question of record "
                                                  f"{key!r} ({sol.record.question_id!r})")
        if annotator := cells.get("annotator"):
            if entry.annotator and entry.annotator != annotator:
                raise check.fail(line, "annotator", f"record {key!r} has annotator {entry.annotator!r} on an "
                                                    "earlier line; one annotator per solution")
            entry.annotator = annotator
        if (note := cells.get("note")) and note not in entry.notes:
            entry.notes.append(note)
        labels = [p for p in cells["labels"].split(CSV_SEPARATOR) if p.strip()]
        if not cells["step"]:
            if labels:
                raise check.fail(line, "step", "labels need a step number")
            entry.blank_row = entry.blank_row or line
        else:
            step = check.step(cells["step"], sol, line, "step")
            if step in entry.steps:
                raise check.fail(line, "step", f"step {step} of record {key!r} is listed twice")
            entry.steps[step] = check.label_list(labels, line, "labels", False)
            if labels:
                entry.labelled_row = entry.labelled_row or line
        if entry.blank_row is not None and entry.labelled_row is not None:
            raise check.fail(line, "step", f"record {key!r} is marked free of errors (a row without a step, line "
                                           f"{entry.blank_row}) and has a labelled step (line {entry.labelled_row})")
    return [HumanAnnotation(key=key, annotator=e.annotator, note="; ".join(e.notes), line=e.line,
                            steps=[HumanStep(step=s, labels=labs) for s, labs in sorted(e.steps.items()) if labs])
            for key, e in by_key.items()]


def write_worksheet(path: Path, solutions: Iterable[SolutionMaple], questions: Mapping[str, str]) -> int:
    """A file for people to fill in, in the format of `path`'s suffix: every given solution with its
    numbered steps and no label yet (`questions`: record key -> question text). The number of
    solutions written."""
    fmt = file_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS)) if fmt == "csv" else None
        if writer is not None:
            writer.writeheader()
        for sol in solutions:
            count += 1
            if writer is None:
                fh.write(json.dumps({
                    "key": sol.record.key, "question_id": sol.record.question_id,
                    "question": questions.get(sol.record.key, ""), "reference": sol.reference,
                    "predicted": sol.predicted,
                    "numbered_steps": [f"{i}. {text}" for i, text in enumerate(sol.steps, start=1)],
                    "erroneous_steps": [], "annotator": "", "note": ""}, ensure_ascii=False) + "\n")
                continue
            for i, text in enumerate(sol.steps, start=1):
                writer.writerow({"key": sol.record.key, "step": i, "labels": "", "annotator": "", "note": "",
                                 "question_id": sol.record.question_id, "step_text": text})
    return count
