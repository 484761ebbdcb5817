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
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

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


#: Most replicas one pool takes, and the largest replica file read.
MAX_REPLICAS = 256
MAX_REPLICA_FILE_BYTES = 64 * 1024


def _replica_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ValueError(f"{where}: {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{where}: {url!r} is not an http:// or https:// URL with a host")
    return url.rstrip("/")


def read_replica_file(path: Path) -> list[str]:
    """The URLs of a replica file: one per line; blank lines and `#` comments (whole lines, or
    after the URL) are skipped. Errors name the file and line."""
    try:
        if path.stat().st_size > MAX_REPLICA_FILE_BYTES:
            raise ValueError(f"replica file {path} is larger than {MAX_REPLICA_FILE_BYTES} bytes")
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"replica file {path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ValueError(f"cannot read replica file {path} ({exc.strerror or exc})") from None
    urls = []
    for number, line in enumerate(text.splitlines(), start=1):
        url = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if url:
            urls.append(_replica_url(url, f"{path} line {number}"))
    if not urls:
        raise ValueError(f"replica file {path} lists no URL")
    return urls


def _replica_list(value: Any) -> Any:
    """`base_urls` as given: a list, `URL1,URL2`, or `@FILE` (see `read_replica_file`)."""
    if isinstance(value, str):
        if value.startswith("@"):
            return read_replica_file(Path(value[1:]))
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def _check_replicas(urls: tuple[str, ...]) -> tuple[str, ...]:
    checked = [_replica_url(u, "base_urls") for u in urls]
    seen: set[str] = set()
    for url in checked:
        if url in seen:
            raise ValueError(f"base_urls: {url} is listed twice")
        seen.add(url)
    if len(checked) > MAX_REPLICAS:
        raise ValueError(f"base_urls: {len(checked)} replicas is more than the limit of {MAX_REPLICAS}")
    return tuple(checked)


ReplicaList = Annotated[tuple[str, ...], BeforeValidator(_replica_list), AfterValidator(_check_replicas)]


class OpenAIOptions(HttpOptions):
    """`openai/MODEL`: one server, or a pool of replicas (docs/replicas.md)."""

    base_url: str | None = Field(None, description="server URL (default: $OPENAI_BASE_URL or OpenAI's)")
    base_urls: ReplicaList = Field((), description="replicas of one model: URL1,URL2 or @FILE (one URL a line); "
                                   "requests go to the least-loaded one in service")
    deployment: str | None = Field(None, min_length=1, max_length=200,
                                   description="label of what the servers run, part of the cache key (for "
                                   "different weights served under one model name)")
    api_key_env: str = Field("OPENAI_API_KEY", min_length=1, description="environment variable holding the key")
    response_format: Literal["json_schema", "json_object", "guided_json"] = Field(
        "json_schema", description="structured-output form: OpenAI/vLLM json_schema, llama.cpp json_object, or "
        "older vLLM's guided_json")
    max_concurrency: int | None = Field(None, ge=1, le=4096, description="ceiling of each replica's adaptive "
                                        "limit (default: 4 x --concurrency)")
    latency_factor: float = Field(2.0, ge=0, description="cut a replica's limit when its latency per token "
                                  "exceeds this multiple of its best (0: latency is not watched)")
    failure_threshold: int = Field(3, ge=1, le=1000, description="failures in a row that take a replica out")
    probe_s: float = Field(1.0, gt=0, le=300, description="first wait before probing a replica that is out "
                           "(doubles up to 30 s)")
    hang_s: float = Field(30.0, gt=0, le=3600, description="a request the run's timeout gave up on after this "
                          "many seconds counts as a replica failure (a replica that never answers)")

    def replica_urls(self, default: str) -> tuple[str, ...]:
        """Every server of this model: `base_url` (or `default`) when no `base_urls` are given, else
        `base_url` (if given) followed by the `base_urls` not already named."""
        if not self.base_urls:
            return (_replica_url(self.base_url or default, "base_url"),)
        first = (_replica_url(self.base_url, "base_url"),) if self.base_url else ()
        return first + tuple(u for u in self.base_urls if u not in first)


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
