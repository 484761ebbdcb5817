"""The one interface every model backend implements, and the values that cross it."""

from __future__ import annotations

import abc
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from mathlens.models.admission import Admission, Concurrency, FixedAdmission, ReplicaStats
from mathlens.models.options import ProviderOptions, parse_provider_options

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message. `images` are file paths, sent only to backends that accept images."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str
    images: tuple[str, ...] = ()


class GenerateConfig(BaseModel):
    """Decoding settings. Defaults follow the calculus seed: greedy, fixed seed, bounded length.

    `extra` carries provider-specific options given on the command line as `-M key=value`.
    """

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    seed: int = 1234
    max_tokens: int = 512
    top_p: float = 1.0
    repeat_penalty: float = 1.15
    stop: tuple[str, ...] = ()
    extra: dict[str, Any] = Field(default_factory=dict)

    def with_(self, **changes: Any) -> GenerateConfig:
        """Return a copy with some fields replaced."""
        return self.model_copy(update=changes)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


FinishReason = Literal["stop", "length", "error", "unknown"]


class ModelOutput(BaseModel):
    """What a backend returned for one request.

    `finish_reason == "length"` means the token cap cut the answer short; analyses use it to flag
    truncated solutions.
    """

    text: str
    finish_reason: FinishReason = "unknown"
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model_id: str = ""
    cached: bool = False
    #: the reasoning trace, kept apart from `text` (the visible answer); None when there was none
    #: (`mathlens.models.reasoning`)
    reasoning: str | None = None
    #: which replica of a pool answered (its base URL); None for a single endpoint or a cache hit
    replica: str | None = None


class Provider(abc.ABC):
    """A model backend. Subclasses implement `generate` and say who they are in `identity`.

    Providers raise `TransientModelError` for failures worth retrying and `PermanentModelError`
    for the rest; the `Model` wrapper (models/model.py) adds retries, timeouts and the response
    cache, and lets calls in through the admission the provider declares (`admission`), so a
    provider stays a thin translation to one API plus what it knows about its own servers.
    """

    #: registry name, e.g. "ollama"
    name: str = ""
    #: how many requests this backend takes at once when `--concurrency` is not given
    default_concurrency: int = 4
    #: whether `Message.images` can be sent
    accepts_images: bool = False
    #: the options this backend takes (`-M key=value`), validated when it is built
    Options: ClassVar[type[ProviderOptions]] = ProviderOptions

    def __init__(self, model: str, **options: Any) -> None:
        self.model = model
        self.options = options
        self.settings = parse_provider_options(self.Options, options, self.name or type(self).__name__)

    @abc.abstractmethod
    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        """Return the model's reply. With `schema`, constrain the reply to that JSON Schema."""

    def identity(self) -> dict[str, Any]:
        """Everything that determines the responses: part of the cache key and the run manifest."""
        return {"provider": self.name, "model": self.model}

    def admission(self, concurrency: Concurrency) -> Admission:
        """How calls are let in: `concurrency` is `--concurrency` (an int: a fixed limit; "auto" or
        None: the backend's own choice). By default a fixed limit, `default_concurrency` unless
        given; HTTP backends adapt to their servers (`providers/pool.py`). Called once per model."""
        return FixedAdmission(concurrency if isinstance(concurrency, int) else self.default_concurrency)

    def recorded_options(self) -> dict[str, Any]:
        """The options as the run manifest keeps them (a backend may resolve indirections, such as
        a replica file, so that a resume does not depend on them)."""
        return dict(self.options)

    def replica_stats(self) -> list[ReplicaStats]:
        """Each server's counters when the backend spreads requests over several (else empty)."""
        return []

    def learned(self) -> dict[str, Any]:
        """Options found out while running (a server that asked for another request form), to be
        recorded in the run manifest so that later invocations start with them."""
        return {}

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or loaded weights."""
