"""`Model`: a provider plus the policies every call needs (retry, timeout, admission, cache).

Admission is the provider's own (`Provider.admission`: a fixed limit, or an adaptive one that
follows the server); the wrapper enters it around each attempt, outside the attempt's timeout, so
a call queued behind a busy model does not spend its timeout waiting.

It also keeps a reasoning trace apart from the answer, for every backend alike: when a provider
reports no `reasoning` of its own (Ollama's ``thinking``, an OpenAI-compatible
``reasoning_content``) and the reply starts with an inline ``<think>…</think>`` trace,
`with_reasoning` moves the trace to `ModelOutput.reasoning` and leaves the visible answer in
`text`. A trace that was opened and never closed (the token cap or a stop sequence cut it) is
kept whole as the trace, with an empty visible answer; `finish_reason` stays what the backend
said, so a cap hit inside the trace reads as ``"length"`` with no answer
(`RunRecord.trace_truncated`). The split happens before the cache stores the output, and a cached
output from before the split is split when it is read, so a hit looks the same as a fresh call.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mathlens.errors import PermanentModelError, TransientModelError
from mathlens.models.admission import Admission, Concurrency
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider
from mathlens.models.cache import RequestText, ResponseCache
from mathlens.models.reasoning import split_reasoning

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter on transient failures; none on permanent ones.

    The delay before retry k (1-based) is min(max_delay, base_delay * 2**(k-1)) * U(0.5, 1). When
    the server named a wait (`Retry-After`), the delay is at least that wait, capped at
    `max_retry_after` seconds.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    timeout_s: float = 300.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not self.timeout_s > 0:
            raise ValueError("timeout_s must be greater than 0")

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1)) * rng.uniform(0.5, 1.0)
        if retry_after is None:
            return backoff
        return max(backoff, min(retry_after, self.max_retry_after))


@dataclass
class Accounting:
    """Running totals for one `Model`."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


@dataclass
class Model:
    """What the rest of mathlens talks to.

    `generate` returns a `ModelOutput` or raises `ModelError` after the retry policy gave up; the
    run layer turns that into an `error` record. Cached responses make no call.
    """

    provider: Provider
    spec: str
    cache: ResponseCache | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: `--concurrency`: an int (a fixed limit), "auto" (adaptive), None (the provider's default)
    concurrency: Concurrency = None
    stats: Accounting = field(default_factory=Accounting)
    _admission: Admission | None = field(default=None, init=False, repr=False)
    _rng: random.Random = field(default_factory=lambda: random.Random(0), init=False, repr=False)

    @property
    def accepts_images(self) -> bool:
        return self.provider.accepts_images

    def identity(self) -> dict[str, Any]:
        return self.provider.identity()

    def key(self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None) -> str:
        """The cache key of a request (also stored on run records)."""
        return self.key_of(RequestText.of(messages, config, schema))

    def key_of(self, text: RequestText) -> str:
        """The cache key of a request already serialised (`RequestText`)."""
        return text.hash(self.identity())

    @property
    def admission(self) -> Admission:
        """How this model's calls are let in (asked of the provider once)."""
        if self._admission is None:
            self._admission = self.provider.admission(self.concurrency)
        return self._admission

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None,
        *, key: str | None = None,
    ) -> ModelOutput:
        """Send one request, through the cache, with retries on transient failures. (`key`: the
        request's `key(...)` when the caller has computed it already.)"""
        key = key or self.key(messages, config, schema)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return with_reasoning(hit)
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                async with self.admission, asyncio.timeout(self.retry.timeout_s):
                    self.stats.calls += 1
                    out = await self.provider.generate(messages, config, schema)
            except (TimeoutError, TransientModelError) as exc:
                if attempt >= self.retry.max_attempts:
                    self.stats.errors += 1
                    reason = "timeout" if isinstance(exc, TimeoutError) else str(exc)
                    raise TransientModelError(f"gave up after {attempt} attempts: {reason}") from exc
                self.stats.retries += 1
                wait = getattr(exc, "retry_after", None)
                await asyncio.sleep(self.retry.delay(attempt, self._rng, wait))
                continue
            except PermanentModelError:
                self.stats.errors += 1
                raise
            out = with_reasoning(out.model_copy(update={"latency_s": out.latency_s or time.perf_counter() - start}))
            self.stats.prompt_tokens += out.usage.prompt_tokens
            self.stats.completion_tokens += out.usage.completion_tokens
            self.stats.latency_s += out.latency_s
            if self.cache is not None and out.finish_reason != "error":
                self.cache.put(key, out)
            return out

    async def aclose(self) -> None:
        """Release the backend's connections (HTTP clients); the model is not used afterwards."""
        await self.provider.aclose()

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def with_reasoning(out: ModelOutput) -> ModelOutput:
    """`out` with an inline trace at the start of its text moved to `reasoning`.

    A provider's own `reasoning` wins: the text is then left as it is. An empty trace
    (``<think></think>answer``) is dropped, leaving `reasoning` None.

    >>> o = with_reasoning(ModelOutput(text="<think>2+2=4</think>It is 4."))
    >>> (o.reasoning, o.text)
    ('2+2=4', 'It is 4.')
    >>> with_reasoning(ModelOutput(text="<think>cut off", finish_reason="length")).text
    ''
    """
    if out.reasoning is not None:
        return out
    split = split_reasoning(out.text)
    if split.reasoning is None:
        return out
    return out.model_copy(update={"text": split.visible, "reasoning": split.reasoning or None})


async def closing_all(work: Awaitable[T], models: Iterable[Model]) -> T:
    """Await `work`, then close every model in `models` (each once), whatever `work` did.

    Commands that build several models (a run's solvers, MAPLE's reflectors) wrap their work in
    this so that no connection outlives the command."""
    try:
        return await work
    finally:
        for model in {id(m): m for m in models}.values():
            await model.aclose()
