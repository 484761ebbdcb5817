"""Plain JSONL and CSV outputs, read through a field mapping (`-F field=key`).

The fields a row may carry, and the keys looked for when `-F` does not name one:

| field | default keys | meaning |
|---|---|---|
| `id` | `id`, `question_id` | the question's id in the items |
| `question` | `question`, `prompt`, `input` | the question text (used for matching by text) |
| `response` | `response`, `output`, `completion` | the model's answer |
| `reasoning` | `reasoning`, `reasoning_content` | its reasoning trace, when kept apart |
| `error` | `error` | an error text: the row is imported as an error record |
| `status` | `status` | `error` marks an error record |
| `model` | `model` | the model's name |
| `exam` | `exam_id`, `exam` | the item set, when ITEMS has several |
| `configuration` | `configuration` | mathlens configuration (default `baseline`) |
| `repeat` | `repeat` | the repeat number (0 first); else numbered in file order |
| `messages` | `messages` | the chat messages sent (JSONL only: a list of `{role, content}`) |
| `finish_reason` | `finish_reason` | `length` when a token cap cut the answer |

A key may be dotted (`meta.model` reads `{"meta": {"model": ...}}` in JSONL). A key named with
`-F` must be present in every row (else an error naming the line and field); default keys are
optional. A row needs a response or an error. The JSONL export of a mathlens run
(`records.jsonl`) reads back with the defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mathlens.runs.importing.common import (
    SourceError,
    SourceLog,
    SourceRow,
    error_text,
    finish_reason,
    int_field,
    messages_field,
    name_field,
    text_field,
)
from mathlens.runs.importing.lines import iter_csv_rows, iter_json_lines

DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id"),
    "question": ("question", "prompt", "input"),
    "response": ("response", "output", "completion"),
    "reasoning": ("reasoning", "reasoning_content"),
    "error": ("error",),
    "status": ("status",),
    "model": ("model",),
    "exam": ("exam_id", "exam"),
    "configuration": ("configuration",),
    "repeat": ("repeat",),
    "messages": ("messages",),
    "finish_reason": ("finish_reason",),
}
#: the fields `-F` may name
FIELDS: tuple[str, ...] = tuple(DEFAULT_KEYS)


def check_mapping(mapping: dict[str, str]) -> None:
    """Refuse a `-F` field that does not exist (with the list of those that do)."""
    from mathlens.errors import UnknownNameError

    for name in mapping:
        if name not in DEFAULT_KEYS:
            raise UnknownNameError("import field (-F)", name, FIELDS)


def _lookup(obj: dict[str, Any], key: str) -> tuple[bool, Any]:
    """(found, value) of a possibly dotted key; a key with a dot that exists as it is wins."""
    if key in obj:
        return True, obj[key]
    cur: Any = obj
    for part in key.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _value(path: Path, where: str, obj: dict[str, Any], name: str, mapping: dict[str, str]) -> Any:
    if name in mapping:
        found, value = _lookup(obj, mapping[name])
        if not found:
            raise SourceError(path, where, mapping[name], f"is missing (mapped with -F {name}={mapping[name]})")
        return value
    for key in DEFAULT_KEYS[name]:
        found, value = _lookup(obj, key)
        if found and value is not None:
            return value
    return None


def row_from(path: Path, where: str, obj: dict[str, Any], mapping: dict[str, str], *, csv: bool = False) -> SourceRow:
    """One mapped row; the field names in errors are the source's keys."""
    def key(name: str) -> str:
        return mapping.get(name, name)

    def get(name: str) -> Any:
        value = _value(path, where, obj, name, mapping)
        return None if csv and value == "" else value

    status = get("status")
    err = get("error")
    error = error_text(err) if err else None
    if error is None and isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
        error = f"the source marks this row {status!r}"
    response = text_field(path, where, key("response"), get("response"))
    if response is None and error is None:
        raise SourceError(path, where, key("response"), "is missing (a row needs a response or an error)")
    messages = () if csv else messages_field(path, where, key("messages"), get("messages"))
    question = text_field(path, where, key("question"), get("question"))
    if question is None and messages:
        users = [m for m in messages if m.role == "user"]
        question = users[-1].content if users else None
    return SourceRow(
        where=where, id=name_field(path, where, key("id"), get("id")), question=question,
        response=response if error is None else response or None,
        reasoning=text_field(path, where, key("reasoning"), get("reasoning")), error=error,
        model=name_field(path, where, key("model"), get("model")),
        exam=name_field(path, where, key("exam"), get("exam")),
        configuration=name_field(path, where, key("configuration"), get("configuration")),
        repeat=int_field(path, where, key("repeat"), get("repeat")), messages=messages,
        finish_reason="error" if error else finish_reason(get("finish_reason")),
    )


def read_jsonl(path: Path, mapping: dict[str, str]) -> SourceLog:
    """The rows of a plain JSONL file."""
    check_mapping(mapping)
    return SourceLog(rows=[row_from(path, f"line {n}", obj, mapping) for n, obj in iter_json_lines(path)])


def read_csv(path: Path, mapping: dict[str, str]) -> SourceLog:
    """The rows of a CSV file with a header row."""
    check_mapping(mapping)
    if "messages" in mapping:
        raise SourceError(path, None, mapping["messages"], "a CSV file cannot carry a message list (-F messages is "
                                                           "for JSONL)")
    rows = [row_from(path, f"line {n}", obj, mapping, csv=True) for n, obj in iter_csv_rows(path)]
    return SourceLog(rows=rows)
