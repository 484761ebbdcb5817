"""Schema-validated JSON output for judges, with one repair retry.

The JSON Schema of a pydantic model is handed to the backend's own constraint (llama.cpp grammar,
Ollama `format`, OpenAI `response_format`); the reply is then validated by pydantic, because some
constraints (numeric bounds, for one) are not enforced by every backend. A reply that fails
validation gets one repair request that quotes the error; if that fails too the result is
`invalid` and carries both raw replies, so a caller records "ungraded" rather than a zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from mathlens.errors import ModelError
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Structured(Generic[T]):
    """The outcome of a structured request: `value` is set exactly when `status == "ok"`."""

    status: Literal["ok", "invalid", "error"]
    value: T | None = None
    raw: tuple[str, ...] = ()
    error: str = ""
    attempts: int = 0
    usage: dict[str, int] = field(default_factory=dict)


def json_schema_for(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema sent to backends (pydantic's, with titles kept for readability)."""
    return model_cls.model_json_schema()


def _first_json_object(text: str) -> str:
    """The first balanced `{...}` in `text` (a backend without constraints may wrap it in prose)."""
    start = text.find("{")
    if start < 0:
        return text
    depth = 0
    in_str = False
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def parse_reply(text: str, model_cls: type[T]) -> T:
    """Validate a reply against `model_cls`; raises `ValueError` with a readable reason."""
    candidate = _first_json_object(text.strip())
    try:
        # strict=False: some grammar-constrained backends let a raw newline or tab into a string.
        data = json.loads(candidate, strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at position {exc.pos})") from exc
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"does not match the schema: {problems}") from exc


async def generate_structured(
    model: Model,
    messages: list[Message],
    model_cls: type[T],
    config: GenerateConfig | None = None,
    repair: bool = True,
) -> Structured[T]:
    """Ask for a reply shaped like `model_cls`; one repair retry on invalid output.

    Model failures after the retry policy (timeouts, 5xx) give `status="error"`, never an exception.
    """
    config = config or GenerateConfig(max_tokens=768)
    schema = json_schema_for(model_cls)
    raws: list[str] = []
    convo = list(messages)
    attempts = 0
    last_error = ""
    for round_ in range(2 if repair else 1):
        attempts += 1
        try:
            out = await model.generate(convo, config, schema=schema)
        except ModelError as exc:
            return Structured(status="error", raw=tuple(raws), error=str(exc), attempts=attempts)
        raws.append(out.text)
        try:
            value = parse_reply(out.text, model_cls)
        except ValueError as exc:
            last_error = str(exc)
            if round_ == 0:
                convo = [
                    *messages,
                    Message(role="assistant", content=out.text[:4000]),
                    Message(
                        role="user",
                        content=(
                            f"That reply {last_error}. Reply again with only one JSON object that "
                            f"follows this JSON Schema exactly:\n{json.dumps(schema)}"
                        ),
                    ),
                ]
            continue
        return Structured(status="ok", value=value, raw=tuple(raws), attempts=attempts)
    return Structured(status="invalid", raw=tuple(raws), error=last_error, attempts=attempts)
