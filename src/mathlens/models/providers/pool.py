"""A pool of OpenAI-compatible replicas (vLLM, llama.cpp servers) serving one model.

The OpenAI backend sends every request through a `ReplicaPool`, whether it was given one server or
several. The pool decides three things:

- **Where a request goes.** To the replica in service with the fewest requests outstanding (ties:
  the one sent the fewest so far, then the order given), among those with room under their
  current limit and not resting.
- **How many requests a replica gets at once.** Each replica has an `AimdLimiter`: it starts at
  the run's `--concurrency` (per replica), grows by one request per window of successes while its
  limit is in use (additive increase, up to a ceiling), and halves (multiplicative decrease) when
  the replica answers 429 or its latency per generated token rises above `latency_factor` times
  the best it has shown; growing back to the limit that met the last 429 takes `PROBE_SLOWDOWN`
  times as many successes. Only one decrease per "window": an answer to a request sent before the
  last decrease does not cut again (the burst of 429s one overload causes counts once). A
  `Retry-After` makes the replica rest (no new requests) for that long, capped at `MAX_REST_S`.
- **Which replicas are in service.** A replica that fails `failure_threshold` times in a row
  (connection refused or dropped, HTTP 5xx, or a request the caller's timeout gave up on after
  `hang_s` seconds or more: a replica that accepts connections and never answers) is taken out,
  unless it is the last one in service (then its failures go back to the caller's retry policy,
  and the requests become error records if they keep failing). A replica that is out is probed
  with `GET {base}/models` (any OpenAI-compatible server answers it), after `probe_s`, then twice
  as long each time up to `PROBE_MAX_S`; when a probe succeeds it comes back at its starting limit.

The pool never sends one request twice on its own account: the backend asks for a replica, sends
the request, and reports the outcome with `release`; a request that failed on one replica may be
sent to another (the backend does that within one call), and the call returns one reply or one
error, so the run layer still writes one record per task.

Admission: the `Model` wrapper calls `admit()` before each call and `leave()` after it, outside the
request timeout: a call is let in while the pool has room under the sum of its replicas' current
limits, so a call queued behind a busy pool does not spend its timeout waiting, and the wrapper's
own concurrency never holds the pool below what its replicas take.

Everything here runs on one event loop; no locks are needed because no state changes across an
`await` between checking and taking a slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

#: Longest rest a `Retry-After` can impose on a replica (seconds).
MAX_REST_S = 60.0
#: Longest wait between two probes of a replica that is out (seconds).
PROBE_MAX_S = 30.0
#: Successes a limiter sees before its latency signal counts (its baseline needs a few).
LATENCY_WARMUP = 5
#: How many times more slowly a limiter grows back to the limit at which it last met a 429.
PROBE_SLOWDOWN = 8

Outcome = Literal["ok", "overloaded", "failed", "refused", "cancelled"]
ReplicaState = Literal["in", "out", "resting"]


@dataclass
class AimdLimiter:
    """Additive-increase / multiplicative-decrease limit on the requests one replica gets at once.

    Pure bookkeeping (no clock, no I/O), so it is tested step by step:

    >>> lim = AimdLimiter(start=4, ceiling=8)
    >>> lim.on_overload(epoch=lim.epoch)
    >>> lim.current
    2
    >>> lim.on_overload(epoch=0)  # sent before the cut: does not cut again
    >>> lim.current
    2
    """

    start: int
    ceiling: int
    floor: int = 1
    backoff: float = 0.5
    #: a latency per token above this multiple of the best seen counts as congestion (0: off)
    latency_factor: float = 2.0
    limit: float = field(init=False)
    #: how many decreases so far; a request remembers it when sent (`epoch`)
    epoch: int = field(default=0, init=False)
    _fast: float | None = field(default=None, init=False, repr=False)
    _best: float | None = field(default=None, init=False, repr=False)
    _samples: int = field(default=0, init=False, repr=False)
    _credit: int = field(default=0, init=False, repr=False)
    _overloaded_at: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 1 <= self.floor <= self.start <= self.ceiling:
            raise ValueError(f"need 1 <= floor <= start <= ceiling (got {self.floor}, {self.start}, {self.ceiling})")
        self.limit = float(self.start)

    @property
    def current(self) -> int:
        """The limit as a whole number of requests (at least `floor`)."""
        return max(self.floor, math.floor(self.limit + 1e-9))

    def reset(self) -> None:
        """Back to the starting limit, forgetting the latency history (a replica back in service)."""
        self.limit = float(self.start)
        self._fast = self._best = None
        self._samples = 0
        self._overloaded_at = None
        self.epoch += 1

    def _cut(self) -> None:
        self.limit = max(float(self.floor), self.limit * self.backoff)
        self._credit = 0
        self.epoch += 1

    def on_overload(self, epoch: int) -> None:
        """A 429 (or another sign of overload) to a request sent in `epoch`: cut once per epoch, and
        remember the limit that met it (growth back up to it is slower)."""
        if epoch == self.epoch:
            self._overloaded_at = self.current
            self._cut()

    def _congested(self, per_token_s: float | None) -> bool:
        if per_token_s is None or not self.latency_factor or not math.isfinite(per_token_s) or per_token_s <= 0:
            return False
        self._samples += 1
        self._fast = per_token_s if self._fast is None else 0.7 * self._fast + 0.3 * per_token_s
        # the best smoothed latency seen, drifting up slowly so that a lasting change is learnt
        self._best = self._fast if self._best is None else min(self._best * 1.01, self._fast)
        return self._samples > LATENCY_WARMUP and self._fast > self.latency_factor * self._best

    def on_success(self, epoch: int, in_flight: int, per_token_s: float | None = None) -> None:
        """A reply to a request sent in `epoch`, when `in_flight` requests (this one included) were out.

        Grows by one request after `current` successes (one window) that found the limit in use; cuts
        instead when the latency per token says the replica is congested."""
        if self._congested(per_token_s):
            if epoch == self.epoch:
                self._cut()
            return
        if in_flight >= self.current:
            self._credit += 1
            # above the limit that last met an overload, probe PROBE_SLOWDOWN times more slowly
            slow = self._overloaded_at is not None and self.current + 1 >= self._overloaded_at
            if self._credit >= self.current * (PROBE_SLOWDOWN if slow else 1):
                self._credit = 0
                self.limit = min(float(self.ceiling), self.limit + 1.0)


class ReplicaStats(BaseModel):
    """One replica's counters, as the progress display and the run summary show them."""

    model_config = ConfigDict(frozen=True)

    url: str
    state: ReplicaState
    in_flight: int
    limit: int
    requests: int
    ok: int
    errors: int
    overloaded: int


@dataclass(frozen=True)
class PoolSettings:
    """How a pool treats its replicas (from the backend's options)."""

    #: per-replica ceiling of the limit; None: four times the start
    max_concurrency: int | None = None
    latency_factor: float = 2.0
    failure_threshold: int = 3
    probe_s: float = 1.0
    max_rest_s: float = MAX_REST_S
    #: a request cancelled by the caller's timeout after this many seconds counts as a failure
    hang_s: float = 30.0

    def ceiling(self, start: int) -> int:
        return max(start, self.max_concurrency if self.max_concurrency is not None else 4 * start)


@dataclass
class Replica:
    """One server of the pool and its counters (mutated by the pool only)."""

    url: str
    index: int
    limiter: AimdLimiter
    in_flight: int = 0
    requests: int = 0
    ok: int = 0
    errors: int = 0
    overloaded: int = 0
    #: failures in a row (a reply of any kind resets it)
    failures: int = 0
    out: bool = False
    rest_until: float = 0.0

    def stats(self, now: float) -> ReplicaStats:
        state: ReplicaState = "out" if self.out else "resting" if self.rest_until > now else "in"
        return ReplicaStats(url=self.url, state=state, in_flight=self.in_flight, limit=self.limiter.current,
                            requests=self.requests, ok=self.ok, errors=self.errors, overloaded=self.overloaded)


Probe = Callable[[str], Awaitable[bool]]


class ReplicaPool:
    """Routing, limits, rests and health of a set of replicas (see the module docstring).

    `probe(url)` says whether a replica that is out answers again; `clock` is injectable so tests
    of rests need no sleeping.
    """

    def __init__(self, urls: Sequence[str], settings: PoolSettings, probe: Probe, start: int = 8,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not urls:
            raise ValueError("a replica pool needs at least one URL")
        self.settings = settings
        self._probe = probe
        self._clock = clock
        self._start = start
        self.replicas = [self._replica(url, i, start) for i, url in enumerate(urls)]
        self._admitted = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._probes: dict[str, asyncio.Task[None]] = {}

    def _replica(self, url: str, index: int, start: int) -> Replica:
        lim = AimdLimiter(start=start, ceiling=self.settings.ceiling(start),
                          latency_factor=self.settings.latency_factor)
        return Replica(url=url, index=index, limiter=lim)

    # -- sizing -------------------------------------------------------------------------------

    def configure(self, start: int) -> None:
        """Set the starting limit per replica (`--concurrency`); only before the first request."""
        if start != self._start and not any(r.requests for r in self.replicas):
            self._start = start
            self.replicas = [self._replica(r.url, r.index, start) for r in self.replicas]

    def ceiling_total(self, start: int) -> int:
        """The most requests the pool can have in flight when each replica starts at `start`."""
        return len(self.replicas) * self.settings.ceiling(start)

    def capacity(self) -> int:
        """Requests the pool takes right now: the sum of the limits of replicas in service, not resting."""
        now = self._clock()
        return sum(r.limiter.current for r in self.replicas if not r.out and r.rest_until <= now)

    def stats(self) -> list[ReplicaStats]:
        now = self._clock()
        return [r.stats(now) for r in self.replicas]

    # -- waiting ------------------------------------------------------------------------------

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def _next_rest_end(self) -> float | None:
        now = self._clock()
        ends = [r.rest_until - now for r in self.replicas if not r.out and r.rest_until > now]
        return min(ends) if ends else None

    async def _changed(self) -> None:
        """Wait until something that frees room happens, or the first rest ends."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        timeout = self._next_rest_end()
        try:
            await asyncio.wait({fut}, timeout=timeout + 0.001 if timeout is not None else None)
        finally:
            if not fut.done():
                fut.cancel()
            with contextlib.suppress(ValueError):
                self._waiters.remove(fut)

    async def admit(self) -> None:
        """Let a call in when the pool has room under its current capacity (pair with `leave`)."""
        while self._admitted >= self.capacity():
            await self._changed()
        self._admitted += 1

    def leave(self) -> None:
        """A call admitted with `admit` has ended."""
        self._admitted = max(0, self._admitted - 1)
        self._notify()

    # -- one request --------------------------------------------------------------------------

    def choose(self, exclude: frozenset[str] | set[str] = frozenset()) -> Replica | None:
        """The replica the next request should go to now, or None when none has room."""
        now = self._clock()
        free = [r for r in self.replicas if not r.out and r.url not in exclude and r.rest_until <= now
                and r.in_flight < r.limiter.current]
        return min(free, key=lambda r: (r.in_flight, r.requests, r.index)) if free else None

    async def acquire(self, exclude: frozenset[str] | set[str] = frozenset()) -> Replica | None:
        """Take a slot on the best replica not in `exclude`, waiting for room; None when every
        replica in service is excluded (the caller has tried them all)."""
        while True:
            if all(r.out or r.url in exclude for r in self.replicas):
                return None
            replica = self.choose(exclude)
            if replica is not None:
                replica.in_flight += 1
                replica.requests += 1
                return replica
            await self._changed()

    def release(self, replica: Replica, outcome: Outcome, *, epoch: int, latency_s: float | None = None,
                completion_tokens: int = 0, retry_after: float | None = None) -> None:
        """Give back the slot a request held, and learn from how it went.

        `ok`: an answer; `overloaded`: a 429; `failed`: no answer or a 5xx (counts towards taking
        the replica out); `refused`: a 4xx the request itself caused (the replica is fine);
        `cancelled`: the caller gave up. A cancellation after `hang_s` or more is the caller's
        timeout running out on this replica, and counts as a failure (a hung replica would
        otherwise keep taking requests); a quicker one (the run being stopped) teaches nothing."""
        if outcome == "cancelled" and latency_s is not None and latency_s >= self.settings.hang_s:
            outcome = "failed"
        in_flight = replica.in_flight
        replica.in_flight = max(0, in_flight - 1)
        if outcome == "ok":
            replica.ok += 1
            replica.failures = 0
            per_token = latency_s / completion_tokens if latency_s is not None and completion_tokens > 0 else None
            replica.limiter.on_success(epoch, in_flight, per_token)
        elif outcome == "overloaded":
            replica.overloaded += 1
            replica.failures = 0
            replica.limiter.on_overload(epoch)
        elif outcome == "failed":
            replica.errors += 1
            replica.failures += 1
            if replica.failures >= self.settings.failure_threshold:
                self._take_out(replica)
        elif outcome == "refused":
            replica.failures = 0
        if retry_after is not None and retry_after > 0:
            rest = min(retry_after, self.settings.max_rest_s)
            replica.rest_until = max(replica.rest_until, self._clock() + rest)
        self._notify()

    # -- health -------------------------------------------------------------------------------

    def _take_out(self, replica: Replica) -> None:
        if replica.out or not any(not r.out for r in self.replicas if r is not replica):
            return  # the last replica in service stays: its failures go back to the caller
        replica.out = True
        self._probes[replica.url] = asyncio.get_running_loop().create_task(self._probe_back(replica))

    async def _probe_back(self, replica: Replica) -> None:
        wait = self.settings.probe_s
        while True:
            await asyncio.sleep(wait)
            try:
                healthy = await self._probe(replica.url)
            except Exception:  # a probe that breaks is a failed probe
                healthy = False
            if healthy:
                replica.out = False
                replica.failures = 0
                replica.rest_until = 0.0
                replica.limiter.reset()
                self._probes.pop(replica.url, None)
                self._notify()
                return
            wait = min(wait * 2, PROBE_MAX_S)

    async def aclose(self) -> None:
        """Stop the probes of replicas that are out."""
        probes = list(self._probes.values())
        self._probes.clear()
        for task in probes:
            task.cancel()
        if probes:
            await asyncio.gather(*probes, return_exceptions=True)
