"""Plain JSONL, CSV and JSON-records outputs, read through a field mapping (`-F field=key`).

The fields a row may carry, and the keys looked for when `-F` does not name one:

| field | default keys | meaning |
|---|---|---|
| `id` | `id`, `question_id`, `idx`, `pid`, `unique_id` | the question's id |
| `question` | `question`, `prompt`, `input`, `problem` | the question text (used for matching by text) |
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
| `target` | `target`, `gt`, `gold`, `reference`, `answer` | the gold answer(s) (questions from the source) |
| `score` | `score`, `correct`, `is_correct`, `true_false` | the source's own verdict on the answer |
| `pred` | `pred`, `extraction`, `extracted_answer`, `prediction` | the answer the source extracted |
| `level`, `subject` | `level`; `subject`, `type`, `category` | question metadata |
| `choices`, `images` | `choices`, `options`; `images`, `image` | multiple-choice options; image paths |
| `metadata` | `metadata` | an object whose scalar values the question keeps |

A key may be a path: dotted (`meta.model` reads `{"meta": {"model": ...}}`), with a list index
(`code[0]`, `samples[2].text`), or with `[*]` (`code[*]`), which takes every element of the list
as a repeat of the row's question; several `[*]` fields (`-F response=code[*] -F score=score[*]`)
are read in step and must have the same length. A key named with `-F` must be present in every
row (else an error naming the line and field); default keys are optional. A row needs a response
or an error. The JSONL export of a mathlens run (`records.jsonl`) reads back with the defaults.

Two named layouts are mappings given in advance (`PRESETS`): `math-eval`, the output of the
math-evaluation harness used by ToRA and Qwen2.5-Math (`idx`, `question`, `gt`, and the lists
`code` (the model's outputs), `pred` and `score`, one element per sample), and `records-json`, one
JSON object keyed by problem id whose values are records (MathVista's `question`, `response`,
`answer`, `extraction`, `true_false`, `choices`, `image`), or a JSON list of records.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from mathlens.items.limits import SOURCE_ROWS
from mathlens.runs.importing.common import (
    SourceError,
    SourceLog,
    SourceRow,
    error_text,
    finish_reason,
    int_field,
    item_facts,
    messages_field,
    name_field,
    source_score,
    text_field,
)
from mathlens.runs.importing.lines import iter_csv_rows, iter_json_lines, read_json_file

DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "idx", "pid", "unique_id"),
    "question": ("question", "prompt", "input", "problem"),
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
    "target": ("target", "gt", "gold", "reference", "answer"),
    "score": ("score", "correct", "is_correct", "true_false"),
    "pred": ("pred", "extraction", "extracted_answer", "prediction"),
    "level": ("level",),
    "subject": ("subject", "type", "category"),
    "choices": ("choices", "options"),
    "images": ("images", "image"),
    "metadata": ("metadata",),
}
#: the fields `-F` may name
FIELDS: tuple[str, ...] = tuple(DEFAULT_KEYS)
#: the key that names a record's own key in a JSON object of records (`-F id=@key`)
RECORD_KEY = "@key"

#: named layouts: a mapping given in advance (keys in `required` must be in every row)
PRESETS: dict[str, dict[str, str]] = {
    "math-eval": {"id": "idx", "question": "question", "target": "gt", "response": "code[*]", "pred": "pred[*]",
                  "score": "score[*]", "level": "level", "subject": "type"},
    "records-json": {"id": RECORD_KEY, "question": "question", "response": "response", "target": "answer",
                     "pred": "extraction", "score": "true_false", "choices": "choices", "images": "image"},
}
_PRESET_REQUIRED: dict[str, frozenset[str]] = {"math-eval": frozenset({"question", "response"}),
                                               "records-json": frozenset({"response"})}

_PART = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]|\.")
Path_ = tuple[str | int | None, ...]  # None stands for [*]


def check_mapping(mapping: dict[str, str]) -> None:
    """Refuse a `-F` field that does not exist (with the list of those that do), or a bad path."""
    from mathlens.errors import UnknownNameError, UserError

    for name, key in mapping.items():
        if name not in DEFAULT_KEYS:
            raise UnknownNameError("import field (-F)", name, FIELDS)
        parsed = key_path(key)
        if parsed is None:
            raise UserError(f"-F {name}={key}: not a key path (use KEY, a.b, KEY[0] or KEY[*])")
        if parsed.count(None) > 1:
            raise UserError(f"-F {name}={key}: at most one [*] in a path")


@lru_cache(maxsize=256)
def key_path(key: str) -> Path_ | None:
    """`"a.b[0][*]"` -> `("a", "b", 0, None)`; None when `key` is not a path."""
    if key == RECORD_KEY:
        return (RECORD_KEY,)
    parts: list[str | int | None] = []
    pos = 0
    while pos < len(key):
        m = _PART.match(key, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            parts.append(m.group(1))
        elif m.group(2) is not None:
            parts.append(None if m.group(2) == "*" else int(m.group(2)))
        pos = m.end()
    return tuple(parts) or None


_MISSING = object()


def _lookup(obj: dict[str, Any], key: str) -> Any:
    """The value at a key path (a list for a path with [*]); `_MISSING` when absent. A key that
    exists as it is, dots and brackets included, wins."""
    if key in obj:
        return obj[key]
    if "." not in key and "[" not in key:  # a plain key that is not there (most default keys)
        return _MISSING
    parsed = key_path(key)
    if parsed is None:
        return _MISSING
    cur: Any = obj
    for i, part in enumerate(parsed):
        if part is None:
            if not isinstance(cur, list):
                return _MISSING
            rest = parsed[i + 1:]
            return [_walk(item, rest) for item in cur]
        if isinstance(part, int):
            if not isinstance(cur, list) or part >= len(cur):
                return _MISSING
            cur = cur[part]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return _MISSING
    return cur


def _walk(cur: Any, rest: Path_) -> Any:
    for part in rest:
        at_index = isinstance(part, int) and isinstance(cur, list) and part < len(cur)
        at_key = isinstance(part, str) and isinstance(cur, dict) and part in cur
        if not (at_index or at_key):
            return None
        cur = cur[part]
    return cur


class _Mapping:
    """Which key each field is read from: `-F` keys strictly, a layout's keys (`PRESETS`) where the
    row has them, else the default keys."""

    def __init__(self, mapping: dict[str, str], preset: str | None = None) -> None:
        check_mapping(mapping)
        self.given = dict(mapping)
        self.preset = {k: v for k, v in (PRESETS[preset] if preset else {}).items() if k not in mapping}
        self.required = set(_PRESET_REQUIRED.get(preset or "", ())) - set(mapping)
        keys = {**self.preset, **self.given}
        self.star = [f for f, k in keys.items() if None in (key_path(k) or ())]
        self.mapped = frozenset(keys)

    def key(self, name: str) -> str:
        return self.given.get(name) or self.preset.get(name) or name

    def value(self, path: Path, where: str, obj: dict[str, Any], name: str, record_key: str | None) -> Any:
        for source in (self.given, self.preset):
            if name not in source:
                continue
            key = source[name]
            value = record_key if key == RECORD_KEY else _lookup(obj, key)
            if value is not _MISSING and value is not None:
                return value
            if source is self.given or name in self.required:
                if value is None and key != RECORD_KEY:  # present, and null: no value
                    return None
                how = f"mapped with -F {name}={key}" if source is self.given else f"the layout reads {name} from it"
                raise SourceError(path, where, key, f"is missing ({how})")
        return self._default(obj, name)

    @staticmethod
    def _default(obj: dict[str, Any], name: str) -> Any:
        for key in DEFAULT_KEYS[name]:
            value = obj.get(key)
            if value is None and ("." in key or "[" in key):
                value = _lookup(obj, key)
            if value is not _MISSING and value is not None:
                return value
        return None

    def values(self, path: Path, where: str, obj: dict[str, Any], record_key: str | None) -> dict[str, Any]:
        """Every field's value in one row (a field neither mapped nor laid out: its default keys)."""
        mapped = self.mapped
        return {name: self.value(path, where, obj, name, record_key) if name in mapped else self._default(obj, name)
                for name in FIELDS}


def _expand(path: Path, where: str, obj: dict[str, Any], m: _Mapping, record_key: str | None,
            csv: bool) -> Iterator[tuple[str, dict[str, Any], int | None]]:
    """(where, field values, element index) per row, one per element when fields use [*]."""
    values = m.values(path, where, obj, record_key)
    if csv:
        values = {k: None if v == "" else v for k, v in values.items()}
    if not m.star:
        yield where, values, None
        return
    lengths = {f: len(values[f]) if isinstance(values[f], list) else None for f in m.star}
    sized = {f: n for f, n in lengths.items() if n is not None}
    if len(set(sized.values())) > 1:
        shown = ", ".join(f"{m.key(f)}: {n}" for f, n in sized.items())
        raise SourceError(path, where, None, f"the [*] fields have different lengths ({shown})")
    for f, n in lengths.items():
        if n is None and values[f] is not None:
            raise SourceError(path, where, m.key(f), f"expected a list for [*], found {type(values[f]).__name__}")
    count = next(iter(sized.values()), 0)
    for i in range(count):
        yield f"{where} [{i}]", {**values, **{f: values[f][i] for f in sized}}, i


def row_from(path: Path, where: str, values: dict[str, Any], m: _Mapping, element: int | None = None,
             *, csv: bool = False) -> SourceRow:
    """One mapped row from its field values; the field names in errors are the source's keys."""
    key = m.key
    get = values.get
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
        users = [msg for msg in messages if msg.role == "user"]
        question = users[-1].content if users else None
    repeat = int_field(path, where, key("repeat"), get("repeat"))
    images = get("images")
    facts = item_facts(target=get("target"), choices=get("choices"), level=get("level"), subject=get("subject"),
                       metadata=get("metadata"),
                       images=tuple(str(i)[:2000] for i in (images if isinstance(images, list) else [images])
                                    if isinstance(i, str) and i)[:16])
    score = get("score")
    scores = (source_score(key("score"), score, get("pred")),) if score is not None else ()
    return SourceRow(
        where=where, id=name_field(path, where, key("id"), get("id")), question=question,
        response=response if error is None else response or None,
        reasoning=text_field(path, where, key("reasoning"), get("reasoning")), error=error,
        model=name_field(path, where, key("model"), get("model")),
        exam=name_field(path, where, key("exam"), get("exam")),
        configuration=name_field(path, where, key("configuration"), get("configuration")),
        repeat=repeat if repeat is not None else element, messages=messages,
        finish_reason="error" if error else finish_reason(get("finish_reason")), item=facts, scores=scores,
    )


def _rows(path: Path, items: Iterator[tuple[str, dict[str, Any], str | None]], m: _Mapping,
          csv: bool = False) -> list[SourceRow]:
    out: list[SourceRow] = []
    limit = SOURCE_ROWS.value
    for where, obj, record_key in items:
        for at, values, element in _expand(path, where, obj, m, record_key, csv):
            if len(out) >= limit:
                raise SourceError(path, at, None, SOURCE_ROWS.exceeded())
            out.append(row_from(path, at, values, m, element, csv=csv))
    return out


def read_jsonl(path: Path, mapping: dict[str, str], preset: str | None = None) -> SourceLog:
    """The rows of a plain JSONL file (or one in a named layout, `preset`)."""
    m = _Mapping(mapping, preset)
    return SourceLog(rows=_rows(path, ((f"line {n}", obj, None) for n, obj in iter_json_lines(path)), m))


def read_csv(path: Path, mapping: dict[str, str]) -> SourceLog:
    """The rows of a CSV file with a header row."""
    m = _Mapping(mapping)
    if "messages" in mapping:
        raise SourceError(path, None, mapping["messages"], "a CSV file cannot carry a message list (-F messages is "
                                                           "for JSONL)")
    return SourceLog(rows=_rows(path, ((f"line {n}", obj, None) for n, obj in iter_csv_rows(path)), m, csv=True))


def looks_like_records(doc: Any) -> bool:
    """A JSON object of records (every value an object) or a list of objects."""
    if isinstance(doc, dict):
        return bool(doc) and all(isinstance(v, dict) for v in doc.values())
    return isinstance(doc, list) and bool(doc) and all(isinstance(v, dict) for v in doc)


def looks_like_math_eval(first: dict[str, Any]) -> bool:
    """Whether a JSONL line is in the math-evaluation-harness layout (`code`, `pred`/`score` lists)."""
    return isinstance(first.get("code"), list) and ("gt" in first or isinstance(first.get("pred"), list))


def read_records_json(path: Path, mapping: dict[str, str]) -> SourceLog:
    """The rows of a JSON object keyed by id (MathVista-style) or of a JSON list of records."""
    doc = read_json_file(path)
    if not looks_like_records(doc):
        raise SourceError(path, None, None, "expected a JSON object whose values are records, or a list of "
                                            "records")
    items = ((f"record {k!r}"[:220], v, str(k)) for k, v in doc.items()) if isinstance(doc, dict) else \
        ((f"record {i}", v, None) for i, v in enumerate(doc))
    m = _Mapping(mapping, "records-json")
    if len(doc) > SOURCE_ROWS.value:
        raise SourceError(path, None, None, SOURCE_ROWS.exceeded(f"{len(doc):,} records"))
    return SourceLog(rows=_rows(path, items, m))
