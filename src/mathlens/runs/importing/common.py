"""What every import reader shares: the limits, the row a reader yields, and located errors.

A reader turns one source file into a `SourceLog`: its rows (`SourceRow`, one model answer each,
in file order) and what the file says about all of them (model, task, decoding settings). Readers
know nothing about items or runs; `matching` and `importer` do the rest.

Limits (`mathlens.items.limits`; each breach is a `SourceError` naming the file, the row and the
field, the limit and the variable that raises it):

* the source file holds at most `SOURCE_BYTES`; one JSONL/CSV line at most `SOURCE_LINE_BYTES`;
* at most `SOURCE_ROWS` rows (samples, lines, records);
* JSON values nest at most `SOURCE_NESTING` levels (measured on the bytes before any parser,
  ours or Inspect's, sees them);
* a question, response or reasoning text at most `SOURCE_TEXT_CHARS` characters; a message list
  at most `SOURCE_MESSAGES` messages; an error text is cut to `MAX_ERROR_CHARS` (it is only shown);
* an Inspect `.eval` archive holds at most `ARCHIVE_MEMBERS` members; a member unpacks to at most
  `MEMBER_BYTES`, all members together to at most `UNPACKED_BYTES` (checked while unpacking,
  whatever the archive claims).

Besides the answer, a row may carry what the source knows about its question (`ItemFacts`: the
gold answers, choices, images, level, subject and other metadata; used when the questions come
from the source rather than an items file) and the source's own verdicts (`SourceScore`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mathlens.errors import UserError
from mathlens.items.limits import SOURCE_BYTES, SOURCE_MESSAGES, SOURCE_ROWS, SOURCE_TEXT_CHARS
from mathlens.items.readers import open_checked
from mathlens.models.base import FinishReason, GenerateConfig, Message, Usage
from mathlens.runs.importing.provenance import SourceScore

MAX_ERROR_CHARS = 2000
#: the longest model name or id kept (they become parts of record keys)
MAX_NAME_CHARS = 512
#: metadata a question keeps from a source: at most this many keys, text values cut to this length
MAX_METADATA_KEYS = 64
MAX_METADATA_CHARS = 2000
Scalar = str | int | float | bool | None


class SourceError(UserError):
    """A source file that cannot be imported, located: file, row (line or sample) and field."""

    def __init__(self, path: Path | str, where: str | None, field_name: str | None, problem: str) -> None:
        parts = [str(path)]
        if where:
            parts.append(where)
        if field_name:
            parts.append(f"field {field_name!r}")
        super().__init__(": ".join(parts) + f": {problem}")
        self.path, self.where, self.field_name, self.problem = str(path), where, field_name, problem


@dataclass(frozen=True)
class ItemFacts:
    """What a source says about a row's question besides its text (for items from the source)."""

    #: accepted gold answers, as the source gives them (GSM8K-style `#### 7` and `\\boxed{}` are
    #: read down to the answer when the question is built)
    target: tuple[str, ...] = ()
    #: multiple-choice options, (label, text) in order
    choices: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    level: int | None = None
    subject: str | None = None
    metadata: tuple[tuple[str, Scalar], ...] = ()


@dataclass(frozen=True)
class SourceRow:
    """One model answer read from a source, before it is matched to a question.

    `where` places it in the file for messages ("line 12", "sample q3 epoch 2"); `repeat` is set
    when the source numbers the samples of one item (Inspect epochs, lm-eval repeats), else the
    importer numbers them in file order.
    """

    where: str
    id: str | None = None
    question: str | None = None
    response: str | None = None
    reasoning: str | None = None
    error: str | None = None
    model: str | None = None
    exam: str | None = None
    configuration: str | None = None
    repeat: int | None = None
    messages: tuple[Message, ...] = ()
    finish_reason: FinishReason = "unknown"
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    created_at: datetime | None = None
    item: ItemFacts = field(default_factory=ItemFacts)
    scores: tuple[SourceScore, ...] = ()


@dataclass(frozen=True)
class SourceLog:
    """Everything a reader got from one file."""

    rows: list[SourceRow]
    #: the model the whole file was made with, when the file says so
    model: str | None = None
    task: str | None = None
    #: which code read it ("mathlens", or "inspect_ai" for Inspect's own reader)
    reader: str = "mathlens"
    config: GenerateConfig | None = None
    #: the evaluation stopped before it finished ("cancelled", "error"): the rows are a part
    partial: str | None = None
    #: samples the evaluation planned, when the source says
    planned: int | None = None
    #: settings of the evaluation the source records (lm-eval's model arguments, shots, seeds...)
    settings: dict[str, Scalar] = field(default_factory=dict)


def check_source(path: Path) -> tuple[int, str]:
    """(size, sha256) of a readable source file within `SOURCE_BYTES`, else `UserError`."""
    size = open_checked(path, SOURCE_BYTES, "log or output", SourceError)
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return size, h.hexdigest()


def count_row(path: Path, count: int, where: str) -> None:
    """Raise when the `count`-th row passes `SOURCE_ROWS`."""
    if count > SOURCE_ROWS.value:
        raise SourceError(path, where, None, SOURCE_ROWS.exceeded())


def text_field(path: Path, where: str, name: str, value: Any, *, required: bool = False,
               limit: int | None = None) -> str | None:
    """A text value of a row: a string (a number is taken as its text) within `limit` characters.

    None (or absent) is allowed unless `required`; any other type is an error naming the field.
    """
    if value is None:
        if required:
            raise SourceError(path, where, name, "is missing")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SourceError(path, where, name, f"expected text, found {type(value).__name__}")
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        raise SourceError(path, where, name, f"text of {len(text):,} characters is longer than the limit of "
                                             f"{limit:,}")
    if limit is None and len(text) > SOURCE_TEXT_CHARS.value:
        raise SourceError(path, where, name, "text of " + SOURCE_TEXT_CHARS.exceeded(f"{len(text):,} characters"))
    return text


def name_field(path: Path, where: str, name: str, value: Any) -> str | None:
    """An id or model name: text within `MAX_NAME_CHARS`, stripped; empty counts as absent."""
    text = text_field(path, where, name, value, limit=MAX_NAME_CHARS)
    return text.strip() or None if text is not None else None


def int_field(path: Path, where: str, name: str, value: Any, *, low: int = 0) -> int | None:
    """A whole number >= `low` (a numeric string is accepted, as CSV holds only text)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise SourceError(path, where, name, "expected a whole number, found a boolean")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value.strip()) < 12:
        value = int(value.strip())
    if not isinstance(value, int):
        raise SourceError(path, where, name, f"expected a whole number, found {value!r:.40}")
    if value < low:
        raise SourceError(path, where, name, f"must be at least {low} (not {value})")
    return value


def error_text(value: Any) -> str:
    """An error value (text, or an object with a message) as one bounded line of text."""
    if isinstance(value, dict):
        msg = value.get("message") or value.get("msg") or value.get("error")
        code = value.get("code") or value.get("type")
        text = f"{code}: {msg}" if code and msg else str(msg or code or value)
    else:
        text = str(value)
    return text[:MAX_ERROR_CHARS]


def messages_field(path: Path, where: str, name: str, value: Any) -> tuple[Message, ...]:
    """A list of chat messages (`{"role", "content"}`; content as text or a list of text parts)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SourceError(path, where, name, f"expected a list of messages, found {type(value).__name__}")
    if len(value) > SOURCE_MESSAGES.value:
        raise SourceError(path, where, name, SOURCE_MESSAGES.exceeded(f"{len(value)} messages"))
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise SourceError(path, where, f"{name}[{i}]", "expected a message object")
        role = m.get("role")
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            continue  # tool messages and the like are not part of what mathlens analyses
        content = flatten_content(path, where, f"{name}[{i}].content", m.get("content"))
        out.append(Message(role=role, content=content))
    return tuple(out)


def flatten_content(path: Path, where: str, name: str, value: Any) -> str:
    """Message content as text: a string, or the text parts of a list of content parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return text_field(path, where, name, value) or ""
    if isinstance(value, list):
        parts = []
        for i, part in enumerate(value):
            if isinstance(part, dict) and part.get("type") == "text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise SourceError(path, where, f"{name}[{i}].text", f"expected text, found {type(text).__name__}")
                parts.append(text)
        return text_field(path, where, name, "".join(parts)) or ""
    raise SourceError(path, where, name, f"expected text or a list of content parts, found {type(value).__name__}")


def finish_reason(value: Any) -> FinishReason:
    """A source's stop reason in mathlens's words ("length" when a token cap cut the answer)."""
    text = str(value or "").lower()
    if text in ("stop", "end_turn", "stop_sequence", "eos"):
        return "stop"
    if text in ("length", "max_tokens", "model_length"):
        return "length"
    return "unknown"


def usage(prompt: Any, completion: Any) -> Usage:
    """Token counts, with anything that is not a sane whole number taken as 0."""
    def ok(v: Any) -> int:
        return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**12 else 0
    return Usage(prompt_tokens=ok(prompt), completion_tokens=ok(completion))


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for optional nested parts)."""
    return value if isinstance(value, dict) else {}


# -- the source's verdicts and question facts ---------------------------------------------------------
_RIGHT = {"c", "correct", "true", "yes", "y", "pass", "passed", "1", "1.0"}
_WRONG = {"i", "incorrect", "false", "no", "n", "fail", "failed", "0", "0.0", "wrong"}


def read_correct(value: Any) -> bool | None:
    """A score read as right (True) or wrong (False); None when it is neither.

    Inspect's "C" is right, "I" wrong and "N" (no answer) wrong; "P" (partial) is neither, as is
    any number other than 0 and 1, text that is none of the usual words, and no value at all.

    >>> [read_correct(v) for v in ("C", "I", "N", "P", 1.0, 0, 0.5, True, "false", None)]
    [True, False, False, None, True, False, None, True, False, None]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _RIGHT else False if word in _WRONG else None
    return None


def source_score(scorer: str, value: Any, answer: Any = None) -> SourceScore:
    """A `SourceScore` from a raw value (an object or list value is kept as its JSON text, unread)."""
    import json

    kept: str | float | bool | None
    if value is None or isinstance(value, str | bool):
        kept = value if not isinstance(value, str) else value[:200]
    elif isinstance(value, int | float):
        kept = float(value) if math.isfinite(value) else None
    else:
        kept = json.dumps(value, default=str)[:200]
    text = answer if isinstance(answer, str) else None if answer is None else str(answer)
    # every field is checked above: no validation needed (this runs once per imported row)
    return SourceScore.model_construct(scorer=scorer[:200], value=kept, correct=read_correct(value),
                                       answer=text[:MAX_METADATA_CHARS] if text is not None else None)


def scalar_metadata(value: Any, skip: frozenset[str] = frozenset()) -> tuple[tuple[str, Scalar], ...]:
    """The scalar entries of a metadata object (text cut, nested values and `skip` keys left out)."""
    if not isinstance(value, dict):
        return ()
    out: list[tuple[str, Scalar]] = []
    for key, v in value.items():
        if len(out) >= MAX_METADATA_KEYS:
            break
        if not isinstance(key, str) or key in skip:
            continue
        if isinstance(v, str):
            out.append((key[:200], v[:MAX_METADATA_CHARS]))
        elif v is None or isinstance(v, bool | int) or (isinstance(v, float) and math.isfinite(v)):
            out.append((key[:200], v))
    return tuple(out)


def level_of(value: Any) -> int | None:
    """A difficulty level: a whole number, or the first one in a text such as "Level 5"."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 <= value < 1000:
        return value
    if isinstance(value, str):
        digits = "".join(ch for ch in value.split()[-1] if ch.isdigit()) if value.split() else ""
        return int(digits) if digits and len(digits) < 4 else None
    return None


def choice_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """Multiple-choice options as (label, text): a list is labelled A, B, C...; an object keeps its keys."""
    if isinstance(value, dict):
        return tuple((str(k)[:20], str(v)[:MAX_METADATA_CHARS]) for k, v in list(value.items())[:26]
                     if isinstance(v, str | int | float))
    if isinstance(value, list):
        return tuple((chr(ord("A") + i), str(v)[:MAX_METADATA_CHARS]) for i, v in enumerate(value[:26])
                     if isinstance(v, str | int | float) and not isinstance(v, bool))
    return ()


def target_texts(value: Any) -> tuple[str, ...]:
    """Gold answers: a text, a number, or a list of them."""
    values = value if isinstance(value, list) else [value]
    return tuple(str(v)[:MAX_METADATA_CHARS] for v in values[:16]
                 if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v).strip())


def item_facts(*, target: Any = None, choices: Any = None, level: Any = None, subject: Any = None,
               metadata: Any = None, skip: frozenset[str] = frozenset(), images: tuple[str, ...] = ()) -> ItemFacts:
    """A row's question facts from the values its source gives: the gold answers (`target_texts`),
    the choices (`choice_pairs`), the level (`level_of`), the subject when it is a text (cut to 200
    characters) and the scalar entries of `metadata` but the `skip` keys (`scalar_metadata`)."""
    return ItemFacts(target=target_texts(target), choices=choice_pairs(choices), images=images,
                     level=level_of(level), subject=str(subject)[:200] if isinstance(subject, str) else None,
                     metadata=scalar_metadata(metadata, skip))
