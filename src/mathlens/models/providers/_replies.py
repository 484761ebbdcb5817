"""The replies of the HTTP backends as pydantic models, validated before anything uses them.

A reply that does not fit raises `MalformedReplyError` naming the field, the problem and (a short
form of) the value, which the run turns into an `error` record; a reply in a form the protocol
allows (OpenAI content parts, a null content, a missing usage block) is parsed.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from mathlens.errors import MalformedReplyError

#: The largest token count believed; more is a broken counter, not a long answer.
MAX_TOKEN_COUNT = 10**12

T = TypeVar("T", bound=BaseModel)


def _token_count(value: Any) -> int:
    """A non-negative whole number of tokens: an int, or a float with no fraction; null means 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a whole number of tokens")
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise ValueError("must be a finite whole number of tokens")
    if not 0 <= value <= MAX_TOKEN_COUNT:
        raise ValueError(f"must be between 0 and {MAX_TOKEN_COUNT}")
    return int(value)


TokenCount = Annotated[int, BeforeValidator(_token_count)]


def _text_content(value: Any) -> str:
    """Message content: a string, null (empty), or OpenAI content parts (their text joined)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for part in value:
            if not isinstance(part, dict):
                raise ValueError("content parts must be objects")
            if part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise ValueError("a text content part must carry a string 'text'")
                texts.append(part["text"])
        return "".join(texts)
    raise ValueError("must be a string, null or a list of content parts")


Content = Annotated[str, BeforeValidator(_text_content)]


def _optional_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError("must be a string")


OptStr = Annotated[str | None, BeforeValidator(_optional_str)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ChatMessage(_Reply):
    content: Content = ""
    #: a reasoning trace returned apart from the answer (vLLM's reasoning parsers, llama.cpp's
    #: --reasoning-format); `reasoning` is the newer name some servers use
    reasoning_content: OptStr = None
    reasoning: OptStr = None


class ChatChoice(_Reply):
    message: ChatMessage
    finish_reason: OptStr = None


class ChatUsage(_Reply):
    prompt_tokens: TokenCount = 0
    completion_tokens: TokenCount = 0


def _usage(value: Any) -> Any:
    return {} if value is None else value


class ChatCompletion(_Reply):
    """An OpenAI chat completion (only the fields mathlens reads)."""

    choices: list[ChatChoice]
    usage: Annotated[ChatUsage, BeforeValidator(_usage)] = ChatUsage()
    model: OptStr = None


class OllamaMessage(ChatMessage):
    """An Ollama chat message; `thinking` is the trace of a model asked to think (``think``)."""

    thinking: OptStr = None


class OllamaReply(_Reply):
    """An Ollama `/api/chat` or `/api/generate` reply (the trace: `message.thinking` for chat, the
    top-level `thinking` for generate)."""

    message: OllamaMessage | None = None
    response: Content | None = None
    thinking: OptStr = None
    done_reason: OptStr = None
    prompt_eval_count: TokenCount = 0
    eval_count: TokenCount = 0
    model: OptStr = None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_reply(cls: type[T], data: dict[str, Any], what: str) -> T:
    """`data` as `cls`, or `MalformedReplyError` naming the first bad field."""
    try:
        return cls.model_validate(data)
    except (ValidationError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            raise MalformedReplyError(f"malformed {what}: nested too deeply") from None
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        msg = first["msg"].removeprefix("Value error, ")
        raise MalformedReplyError(f"malformed {what}: {where} {msg} (got {_short(first.get('input'))})") from None
