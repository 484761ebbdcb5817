"""Typed model options: what `-M key=value` may say to each backend.

Every provider declares its options as a `ProviderOptions` subclass (`Provider.Options`); the
values given on the command line or stored in a run manifest are validated against it when the
provider is built. An unknown key is an error that suggests the closest known key and lists the
valid ones; a value of the wrong type or out of range names the key and the value.

`split_options` hands each model of a run the options its backend declares, so that one `-M`
list can serve a run that mixes backends (`-M num_ctx=8192` reaches the Ollama model only); a key
that no backend of the run declares is an error.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mathlens.errors import UserError

T = TypeVar("T", bound=BaseModel)


class ProviderOptions(BaseModel):
    """Options shared by no backend; the base of every provider's options (unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True, allow_inf_nan=False)


class LlamaCppOptions(ProviderOptions):
    """`embedded/...` and `llamacpp/PATH.gguf`."""

    n_ctx: int = Field(4096, ge=64, le=1 << 20, description="context window in tokens")
    n_threads: int | None = Field(None, ge=1, le=1024, description="CPU threads (default: every core)")
    chat_format: str | None = Field(None, min_length=1, description="llama-cpp-python chat format; default: the "
                                    "template stored in the GGUF (embedded models: their known format)")


class HttpOptions(ProviderOptions):
    """Options of every backend reached over HTTP."""

    timeout_s: float = Field(600.0, gt=0, description="seconds before the HTTP client gives up on a reply")


class OllamaOptions(HttpOptions):
    """`ollama/MODEL`."""

    host: str | None = Field(None, description="server URL (default: $OLLAMA_HOST or http://127.0.0.1:11434)")
    api: Literal["chat", "generate"] = Field("chat", description="/api/chat or /api/generate")
    num_ctx: int | None = Field(None, ge=64, le=1 << 22, description="context window passed to Ollama")
    think: bool | Literal["low", "medium", "high"] | None = Field(
        None, description="Ollama's think switch for reasoning models (true/false, or a level for models that "
        "take one; default: the model's own); the trace is kept apart from the answer")


class OpenAIOptions(HttpOptions):
    """`openai/MODEL`."""

    base_url: str | None = Field(None, description="server URL (default: $OPENAI_BASE_URL or OpenAI's)")
    api_key_env: str = Field("OPENAI_API_KEY", min_length=1, description="environment variable holding the key")
    response_format: Literal["json_schema", "json_object"] = Field(
        "json_schema", description="structured-output form: OpenAI/vLLM json_schema or llama.cpp json_object")


class MockOptions(ProviderOptions):
    """`mock/NAME` (tests only): scripted replies."""

    responses: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    func: Callable[..., str] | None = None
    accepts_images: bool = False


def _describe(cls: type[BaseModel]) -> str:
    return ", ".join(sorted(cls.model_fields)) or "none"


def parse_provider_options(cls: type[T], options: Mapping[str, Any], provider: str, what: str = "model option") -> T:
    """`options` validated as `cls`, or a `UserError` naming the key (and the valid keys).

    `what` names the options in messages ("model option", "analyzer option")."""
    unknown = sorted(set(options) - set(cls.model_fields))
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, list(cls.model_fields), n=2, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UserError(f"{provider}: unknown {what} {key!r}.{hint} Valid options: {_describe(cls)}.")
    try:
        return cls.model_validate(dict(options))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise UserError(f"{provider}: {what} {key}={err.get('input')!r}: {err['msg']}") from None


def split_options(options_classes: Mapping[str, type[ProviderOptions]], options: Mapping[str, Any]
                  ) -> dict[str, dict[str, Any]]:
    """For each model (spec -> its options class), the given options its backend declares.

    A key that none of the models declares is a `UserError` listing what each accepts.
    """
    declared = {spec: set(cls.model_fields) for spec, cls in options_classes.items()}
    every = set().union(*declared.values()) if declared else set()
    for key in options:
        if key not in every:
            close = difflib.get_close_matches(key, sorted(every), n=2, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            valid = "; ".join(f"{spec}: {_describe(cls)}" for spec, cls in options_classes.items())
            raise UserError(f"unknown model option {key!r}.{hint} Valid options: {valid}.")
    return {spec: {k: v for k, v in options.items() if k in keys} for spec, keys in declared.items()}
