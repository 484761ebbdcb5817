"""Load exams and datasets: YAML/JSONL exams, MATH-style, GSM8K-style and mapped generic JSONL.

Every loader returns an `Exam`; `load_items` picks the loader from the file's content.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mathlens.errors import UnknownNameError, UserError
from mathlens.items.errors import ItemFileError, from_validation
from mathlens.items.formats import Format
from mathlens.items.limits import ITEM_YAML_BYTES
from mathlens.items.readers import iter_jsonl_records, load_yaml, read_text
from mathlens.items.schema import Exam, Question

GSM8K_ANSWER = re.compile(r"####\s*(.+?)\s*$", re.S)


def builtin_exam_dir() -> Path:
    return Path(str(resources.files("mathlens.items") / "builtin" / "exams"))


def builtin_exams() -> dict[str, Path]:
    """Built-in exam name -> file."""
    return {p.stem: p for p in sorted(builtin_exam_dir().glob("*.yaml"))}


def load_exam_yaml(path: Path) -> Exam:
    """Load one exam from YAML, reporting the line of any bad field (limits: items/readers.py)."""
    data, node = load_yaml(path, read_text(path, ITEM_YAML_BYTES))
    if not isinstance(data, dict):
        raise ItemFileError(path, 1, None, "expected a mapping with the exam's fields at the top level")
    data.setdefault("id", path.stem)
    try:
        return Exam.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc, node=node) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line, streamed; a bad line raises `ItemFileError`."""
    for n, obj in iter_jsonl_records(path):
        if not isinstance(obj, dict):
            raise ItemFileError(path, n, None, "expected a JSON object")
        yield n, obj


def _get(obj: dict[str, Any], key: str) -> Any:
    """Dotted lookup: `"meta.level"` reads obj["meta"]["level"]."""
    cur: Any = obj
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _question(path: Path, line: int, data: dict[str, Any]) -> Question:
    try:
        return Question.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc, line=line) from None


def math_record(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """A MATH-style record (`problem`, `answer`, `solution`, `level`, `subject`) as question fields."""
    level = obj.get("level")
    if isinstance(level, str):
        m = re.search(r"\d+", level)
        level = int(m.group()) if m else None
    return {
        "id": str(obj.get("unique_id") or obj.get("id") or f"q{n}"),
        "text": obj.get("problem"),
        "answers": [str(obj["answer"])] if obj.get("answer") is not None else [],
        "answer_format": "latex",
        "solution": obj.get("solution"),
        "level": level,
        "subject": obj.get("subject") or obj.get("type"),
    }


def gsm8k_record(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """A GSM8K record: the final answer is what follows `####` in `answer`."""
    raw = str(obj.get("answer", ""))
    m = GSM8K_ANSWER.search(raw)
    final = m.group(1).replace(",", "").strip() if m else None
    return {
        "id": str(obj.get("id") or f"q{n}"),
        "text": obj.get("question"),
        "answers": [final] if final else [],
        "answer_format": "plain",
        "solution": raw[: m.start()].strip() if m else raw or None,
    }


def mapped_record(obj: dict[str, Any], n: int, mapping: dict[str, str]) -> dict[str, Any]:
    """Generic JSONL: `mapping` names the source key for each question field (dotted keys allowed)."""
    out: dict[str, Any] = {"id": f"q{n}"}
    for field, key in mapping.items():
        value = _get(obj, key)
        if value is None:
            continue
        if field in ("answers", "topics", "images") and not isinstance(value, list):
            value = [str(value)]
        if field == "answer":
            field, value = "answers", [str(value)]
        out[field] = value if field not in ("id",) else str(value)
    return out


def detect_format(path: Path) -> Format:
    if path.suffix in (".yaml", ".yml"):
        return "exam"
    for _, obj in iter_jsonl(path):
        if "problem" in obj:
            return "math"
        if "question" in obj and "####" in str(obj.get("answer", "")):
            return "gsm8k"
        return "jsonl"
    raise ItemFileError(path, None, None, "the file has no records")


def load_items(
    source: str | Path,
    fmt: Format = "auto",
    mapping: dict[str, str] | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> Exam:
    """Load a built-in exam name or a file; `sample` draws that many questions with `seed`, `limit`
    keeps the first K (after sampling).

    >>> load_items("calc3-exam1").course
    'Calculus III'
    """
    exams = builtin_exams()
    if isinstance(source, str) and source in exams:
        path = exams[source]
    else:
        path = Path(source)
        if path.is_dir():
            raise ItemFileError(path, None, None, "is a directory; name an item file (.yaml or .jsonl)")
        if not path.exists():
            raise UnknownNameError("exam or dataset", str(source), exams) if "/" not in str(source) and \
                not path.suffix else UserError(f"{path}: no such file")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "exam":
        exam = load_exam_yaml(path) if path.suffix in (".yaml", ".yml") else _exam_from_jsonl(path, None)
    else:
        exam = _exam_from_jsonl(path, fmt, mapping)
    questions = exam.questions
    if sample is not None and sample < len(questions):
        rng = random.Random(seed)
        picked = sorted(rng.sample(range(len(questions)), sample))
        questions = [questions[i] for i in picked]
    if limit is not None:
        questions = questions[:limit]
    if not questions:
        raise UserError(f"{path}: no questions left after --limit/--sample")
    return exam.model_copy(update={"questions": questions})


def _exam_from_jsonl(path: Path, fmt: Format | None, mapping: dict[str, str] | None = None) -> Exam:
    questions: list[Question] = []
    for n, obj in iter_jsonl(path):
        if fmt == "math":
            data = math_record(obj, n)
        elif fmt == "gsm8k":
            data = gsm8k_record(obj, n)
        elif mapping:
            data = mapped_record(obj, n, mapping)
        else:
            data = obj
        questions.append(_question(path, n, data))
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for n, q in enumerate(questions, start=1):
            if q.id in seen:
                raise ItemFileError(path, n, "id", f"question id {q.id!r} appears twice")
            seen.add(q.id)
    if not questions:
        raise ItemFileError(path, None, None, "the file has no records")
    return Exam(id=path.stem, name=path.stem, source=str(path), questions=questions)
