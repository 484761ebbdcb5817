"""`Model`: a provider plus the policies every call needs (retry, timeout, concurrency, cache)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mathlens.errors import PermanentModelError, TransientModelError
from mathlens.models.base import GenerateConfig, Message, ModelOutput, Provider
from mathlens.models.cache import ResponseCache, request_hash

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
    concurrency: int | None = None
    stats: Accounting = field(default_factory=Accounting)
    _sem: asyncio.Semaphore | None = field(default=None, init=False, repr=False)
    _rng: random.Random = field(default_factory=lambda: random.Random(0), init=False, repr=False)

    @property
    def accepts_images(self) -> bool:
        return self.provider.accepts_images

    def identity(self) -> dict[str, Any]:
        return self.provider.identity()

    def key(self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None) -> str:
        """The cache key of a request (also stored on run records)."""
        return request_hash(self.identity(), messages, config, schema)

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.concurrency or self.provider.default_concurrency)
        return self._sem

    async def generate(
        self, messages: list[Message], config: GenerateConfig, schema: dict[str, Any] | None = None
    ) -> ModelOutput:
        """Send one request, through the cache, with retries on transient failures."""
        key = self.key(messages, config, schema)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                async with self._semaphore():
                    self.stats.calls += 1
                    out = await asyncio.wait_for(
                        self.provider.generate(messages, config, schema), timeout=self.retry.timeout_s
                    )
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
            out = out.model_copy(update={"latency_s": out.latency_s or time.perf_counter() - start})
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


async def closing_all(work: Awaitable[T], models: Iterable[Model]) -> T:
    """Await `work`, then close every model in `models` (each once), whatever `work` did.

    Commands that build several models (a run's solvers, MAPLE's reflectors) wrap their work in
    this so that no connection outlives the command."""
    try:
        return await work
    finally:
        for model in {id(m): m for m in models}.values():
            await model.aclose()
