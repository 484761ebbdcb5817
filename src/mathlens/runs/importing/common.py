"""What every import reader shares: the limits, the row a reader yields, and located errors.

A reader turns one source file into a `SourceLog`: its rows (`SourceRow`, one model answer each,
in file order) and what the file says about all of them (model, task, decoding settings). Readers
know nothing about items or runs; `matching` and `importer` do the rest.

Limits (each breach is a `SourceError` naming the file, the row and the field):

* the source file holds at most `MAX_SOURCE_BYTES`; one JSONL/CSV line at most `MAX_LINE_BYTES`;
* at most `MAX_ROWS` rows (samples, lines);
* a question, response or reasoning text at most `MAX_TEXT_CHARS` characters; a message list at
  most `MAX_MESSAGES` messages; an error text is cut to `MAX_ERROR_CHARS` (it is only shown);
* an Inspect `.eval` member unpacks to at most `MAX_MEMBER_BYTES`, all members together to at most
  `MAX_UNPACKED_BYTES` (checked while unpacking, whatever the archive claims).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mathlens.errors import UserError
from mathlens.models.base import FinishReason, GenerateConfig, Message, Usage

MAX_SOURCE_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_ROWS = 500_000
MAX_TEXT_CHARS = 200_000
MAX_MESSAGES = 256
MAX_ERROR_CHARS = 2000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024
#: the longest model name or id kept (they become parts of record keys)
MAX_NAME_CHARS = 512


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


def check_source(path: Path) -> tuple[int, str]:
    """(size, sha256) of a readable source file within `MAX_SOURCE_BYTES`, else `UserError`."""
    try:
        if path.is_dir():
            raise SourceError(path, None, None, "is a directory; name the log or output file")
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if size > MAX_SOURCE_BYTES:
        raise SourceError(path, None, None, f"the file is {size:,} bytes, more than the limit of "
                                            f"{MAX_SOURCE_BYTES:,}")
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return size, h.hexdigest()


def count_row(path: Path, count: int, where: str) -> None:
    """Raise when the `count`-th row passes `MAX_ROWS`."""
    if count > MAX_ROWS:
        raise SourceError(path, where, None, f"more than the limit of {MAX_ROWS:,} rows")


def text_field(path: Path, where: str, name: str, value: Any, *, required: bool = False,
               limit: int = MAX_TEXT_CHARS) -> str | None:
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
    if len(text) > limit:
        raise SourceError(path, where, name, f"text of {len(text):,} characters is longer than the limit "
                                             f"of {limit:,}")
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
    if len(value) > MAX_MESSAGES:
        raise SourceError(path, where, name, f"{len(value)} messages, more than the limit of {MAX_MESSAGES}")
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
