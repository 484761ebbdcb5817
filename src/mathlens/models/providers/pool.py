"""The servers of one HTTP model and how requests are admitted to them (docs/replicas.md).

Every HTTP backend (`openai/`, `ollama/`) sends through a `ReplicaPool`, whether it has one
server or several. The pool decides four things:

- **How many calls are in flight** (its `Admission`, handed to the `Model` wrapper):
  `--concurrency N` is a fixed limit, at most N calls of the model at once over all its servers,
  and exactly N while work waits; `--concurrency auto` gives each server an `AdaptiveLimit`
  (`providers/limits.py`) that starts at `ADAPTIVE_START`, grows while the server answers well
  and backs off only on the server's own signals, up to `-M max_concurrency` per server.
- **Where a request goes.** To the server in service with the fewest requests outstanding (ties:
  the one sent the fewest so far, then the order given), among those with room under their
  current limit and not resting.
- **When a server rests.** A `Retry-After` (on a 429 or a 503) makes it rest for that long, capped
  at `MAX_REST_S`: no new request goes to it meanwhile.
- **Which servers are in service.** A server that fails `failure_threshold` times in a row
  (connection refused or dropped, HTTP 5xx, or a request the caller's timeout gave up on after
  `hang_s` seconds or more) is taken out, unless it is the last one in service (then its failures go
  back to the caller's retry policy). It is probed (`probe(url)`) after `probe_s`, then twice as
  long each time up to `PROBE_MAX_S`; when a probe succeeds it comes back at its starting limit.

`send(attempt)` runs one call: it takes a slot on the best server, runs `attempt(url)`, reports
the outcome, and moves a request that met a 429 or no answer to another server within the same
call; the call returns one reply or one error, so the run layer still writes one record per task.

Everything here runs on one event loop; no locks are needed because no state changes across an
`await` between checking and taking a slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import AfterValidator, BeforeValidator, Field

from mathlens.errors import MalformedReplyError, ModelError, TransientModelError
from mathlens.models.admission import MAX_CONCURRENCY, Admission, Concurrency, ReplicaStats
from mathlens.models.options import http_url
from mathlens.models.providers._http import (
    HttpOptions,
    RateLimitedError,
    RequestRefusedError,
    ServerTroubleError,
)
from mathlens.models.providers.limits import AdaptiveLimit, LoopLag
from mathlens.textfile import TextFileError, read_small_text

#: Longest rest a `Retry-After` can impose on a server (seconds).
MAX_REST_S = 60.0
#: Longest wait between two probes of a server that is out (seconds).
PROBE_MAX_S = 30.0
#: Where an adaptive limit starts, per server (it doubles per round trip from there).
ADAPTIVE_START = 32
#: The adaptive ceiling per server when `-M max_concurrency` is not given.
ADAPTIVE_CEILING = 256

Outcome = Literal["ok", "overloaded", "failed", "refused", "cancelled"]
T = TypeVar("T")


#: Most replicas one pool takes, and the largest replica file read.
MAX_REPLICAS = 256
MAX_REPLICA_FILE_BYTES = 64 * 1024


def replica_url(url: str, where: str) -> str:
    """`url` without a trailing slash, once `http_url` accepts it."""
    return http_url(url, where).rstrip("/")


def read_replica_file(path: Path) -> list[str]:
    """The URLs of a replica file: one per line; blank lines and `#` comments (whole lines, or
    after the URL) are skipped. Errors name the file and line."""
    try:
        text = read_small_text(path, MAX_REPLICA_FILE_BYTES)
    except TextFileError as exc:
        raise ValueError(f"replica file {path}: {exc}") from None
    urls = []
    for number, line in enumerate(text.splitlines(), start=1):
        url = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if url:
            urls.append(replica_url(url, f"{path} line {number}"))
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
    checked = [replica_url(u, "base_urls") for u in urls]
    seen: set[str] = set()
    for url in checked:
        if url in seen:
            raise ValueError(f"base_urls: {url} is listed twice")
        seen.add(url)
    if len(checked) > MAX_REPLICAS:
        raise ValueError(f"base_urls: {len(checked)} replicas is more than the limit of {MAX_REPLICAS}")
    return tuple(checked)


ReplicaList = Annotated[tuple[str, ...], BeforeValidator(_replica_list), AfterValidator(_check_replicas)]


class PoolOptions(HttpOptions):
    """The admission options of every pooled HTTP backend (`-M key=value`)."""

    max_concurrency: int | None = Field(None, ge=1, le=MAX_CONCURRENCY, description="ceiling of each server's "
                                        f"adaptive limit under --concurrency auto (default {ADAPTIVE_CEILING})")
    latency_factor: float = Field(2.0, ge=0, le=1000, description="adaptive limit: back off when the server's "
                                  "latency per token exceeds this multiple of its best (0: latency is not watched)")
    failure_threshold: int = Field(3, ge=1, le=1000, description="failures in a row that take a replica out")
    probe_s: float = Field(1.0, gt=0, le=300, description="first wait before probing a replica that is out "
                           "(doubles up to 30 s)")
    hang_s: float = Field(30.0, gt=0, le=3600, description="a request the run's timeout gave up on after this "
                          "many seconds counts as a failure of its server (and a timeout signal)")


@dataclass(frozen=True)
class PoolSettings:
    """How a pool treats its servers (from the backend's options)."""

    max_concurrency: int | None = None
    latency_factor: float = 2.0
    failure_threshold: int = 3
    probe_s: float = 1.0
    max_rest_s: float = MAX_REST_S
    hang_s: float = 30.0
    #: where each server's adaptive limit starts (capped by its ceiling)
    start: int = ADAPTIVE_START

    @classmethod
    def of(cls, options: PoolOptions) -> PoolSettings:
        return cls(max_concurrency=options.max_concurrency, latency_factor=options.latency_factor,
                   failure_threshold=options.failure_threshold, probe_s=options.probe_s, hang_s=options.hang_s)


@dataclass
class Replica:
    """One server of the pool and its counters (mutated by the pool only)."""

    url: str
    index: int
    limiter: AdaptiveLimit
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
        state = "out" if self.out else "resting" if self.rest_until > now else "in"
        return ReplicaStats(url=self.url, state=state, in_flight=self.in_flight, limit=self.limiter.current,
                            requests=self.requests, ok=self.ok, errors=self.errors, overloaded=self.overloaded)


Probe = Callable[[str], Awaitable[bool]]


class ReplicaPool:
    """Admission, routing, limits, rests and health of a set of servers (see the module notes).

    `probe(url)` says whether a server that is out answers again; `clock` is injectable so tests
    of rests need no sleeping. `configure` sets the concurrency before the first request (until
    then the pool is adaptive)."""

    def __init__(self, urls: Sequence[str], settings: PoolSettings, probe: Probe,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not urls:
            raise ValueError("a replica pool needs at least one URL")
        self.settings = settings
        self._probe = probe
        self._clock = clock
        self._urls = list(urls)
        self.fixed: int | None = None
        self.replicas = self._build()
        self._admitted = 0
        #: calls waiting in `admit` for room
        self._queued = 0
        #: the waiters of `admit`, oldest first; `_woken` of them were handed room and have not run yet
        self._queue: deque[asyncio.Future[None]] = deque()
        self._woken = 0
        #: the waiters of `acquire` (admitted calls waiting for a server with room; rare)
        self._acquirers: list[asyncio.Future[None]] = []
        #: wakes the waiters when the first rest ends (and when it is due, on the pool's clock)
        self._rest_timer: asyncio.TimerHandle | None = None
        self._rest_due = 0.0
        self._probes: dict[str, asyncio.Task[None]] = {}
        self.lag = LoopLag()

    def _build(self) -> list[Replica]:
        if self.fixed is not None:
            make = lambda: AdaptiveLimit(start=self.fixed, ceiling=self.fixed, fixed=True)  # noqa: E731
        else:
            ceiling = self.settings.max_concurrency or ADAPTIVE_CEILING
            make = lambda: AdaptiveLimit(start=min(self.settings.start, ceiling), ceiling=ceiling,  # noqa: E731
                                         latency_factor=self.settings.latency_factor)
        return [Replica(url=url, index=i, limiter=make()) for i, url in enumerate(self._urls)]

    # -- sizing -------------------------------------------------------------------------------

    def configure(self, concurrency: Concurrency) -> Admission:
        """Fix the limit (an int: at most that many calls over all servers) or leave it adaptive
        ("auto" or None); only before the first request. Returns the pool's admission."""
        fixed = concurrency if isinstance(concurrency, int) else None
        if fixed != self.fixed and not any(r.requests for r in self.replicas):
            self.fixed = fixed
            self.replicas = self._build()
        return PoolAdmission(self)

    @property
    def ceiling(self) -> int:
        """The most calls the pool ever lets in at once."""
        if self.fixed is not None:
            return self.fixed
        return sum(r.limiter.ceiling for r in self.replicas)

    def capacity(self) -> int:
        """Calls the pool takes right now: the limits of the servers in service and not resting
        (with a fixed limit: that limit while any server is in service and not resting)."""
        now = self._clock()
        ready = [r for r in self.replicas if not r.out and r.rest_until <= now]
        if self.fixed is not None:
            return self.fixed if ready else 0
        return sum(r.limiter.current for r in ready)

    def stats(self) -> list[ReplicaStats]:
        now = self._clock()
        return [r.stats(now) for r in self.replicas]

    # -- waiting ------------------------------------------------------------------------------

    def _notify(self) -> None:
        """Room may have been freed: wake every call waiting for a server, and as many calls
        waiting for admission as there is room for, oldest first. (Waking one waiter per free slot,
        not all of them, keeps a queue of hundreds from being woken on every reply.)"""
        acquirers, self._acquirers = self._acquirers, []
        for fut in acquirers:
            if not fut.done():
                fut.set_result(None)
        room = self.capacity() - self._admitted - self._woken
        while room > 0 and self._queue:
            fut = self._queue.popleft()
            if fut.done():  # its call was cancelled
                continue
            fut.set_result(None)
            self._woken += 1
            room -= 1
        if self._queue or self._acquirers:
            self._wake_at_rest_end()

    def _next_rest_end(self) -> float | None:
        now = self._clock()
        ends = [r.rest_until - now for r in self.replicas if not r.out and r.rest_until > now]
        return min(ends) if ends else None

    def _wake_at_rest_end(self) -> None:
        """Make sure the waiters are woken when the first rest ends (a rest frees room by itself)."""
        wait = self._next_rest_end()
        if wait is None:
            return
        due = self._clock() + wait
        if self._rest_timer is not None:
            if self._rest_due <= due:
                return
            self._rest_timer.cancel()
        self._rest_due = due
        self._rest_timer = asyncio.get_running_loop().call_later(wait + 0.001, self._rest_ended)

    def _rest_ended(self) -> None:
        self._rest_timer = None
        self._notify()

    async def admit(self) -> None:
        """Let a call in when the pool has room under its current capacity (pair with `leave`);
        calls that have to wait are let in in the order they came."""
        self.lag.start()
        if not self._queue and self._admitted + self._woken < self.capacity():
            self._admitted += 1
            return
        self._queued += 1
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._queue.append(fut)
        self._wake_at_rest_end()
        try:
            while True:
                try:
                    await fut
                except asyncio.CancelledError:
                    if fut.done() and not fut.cancelled():  # handed room, then cancelled: pass it on
                        self._woken -= 1
                        self._notify()
                    else:
                        with contextlib.suppress(ValueError):
                            self._queue.remove(fut)
                    raise
                self._woken -= 1
                if self._admitted < self.capacity():
                    break
                fut = loop.create_future()  # the room went (a limit cut): wait again, first in line
                self._queue.appendleft(fut)
                self._wake_at_rest_end()
        finally:
            self._queued -= 1
        self._admitted += 1

    def leave(self) -> None:
        """A call admitted with `admit` has ended."""
        self._admitted = max(0, self._admitted - 1)
        self._notify()

    # -- one request --------------------------------------------------------------------------

    def choose(self, exclude: frozenset[str] | set[str] = frozenset()) -> Replica | None:
        """The server the next request should go to now, or None when none has room."""
        now = self._clock()
        free = [r for r in self.replicas if not r.out and r.url not in exclude and r.rest_until <= now
                and r.in_flight < r.limiter.current]
        return min(free, key=lambda r: (r.in_flight, r.requests, r.index)) if free else None

    async def acquire(self, exclude: frozenset[str] | set[str] = frozenset()) -> Replica | None:
        """Take a slot on the best server not in `exclude`, waiting for room; None when every
        server in service is excluded (the caller has tried them all)."""
        while True:
            if all(r.out or r.url in exclude for r in self.replicas):
                return None
            replica = self.choose(exclude)
            if replica is not None:
                replica.in_flight += 1
                replica.requests += 1
                return replica
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._acquirers.append(fut)
            self._wake_at_rest_end()
            await fut

    def release(self, replica: Replica, outcome: Outcome, *, epoch: int, latency_s: float | None = None,
                completion_tokens: int = 0, retry_after: float | None = None, load: int | None = None) -> None:
        """Give back the slot a request held, and learn from how it went (`load`: the server's
        requests in flight when this one was sent).

        `ok`: an answer; `overloaded`: a 429 or 503; `failed`: no answer or a 5xx (counts towards
        taking the server out); `refused`: a 4xx the request itself caused (the server is fine);
        `cancelled`: the caller gave up. A cancellation after `hang_s` or more is the caller's
        timeout running out on this server: a failure and a timeout signal (a hung server would
        otherwise keep taking requests); a quicker one (the run being stopped) teaches nothing."""
        if outcome == "cancelled" and latency_s is not None and latency_s >= self.settings.hang_s:
            outcome = "failed"
            replica.limiter.on_timeout(epoch)
        in_flight = replica.in_flight
        replica.in_flight = max(0, in_flight - 1)
        if outcome == "ok":
            replica.ok += 1
            replica.failures = 0
            per_token = None
            if latency_s is not None:
                server_s = self.lag.server_part(latency_s)
                per_token = server_s / completion_tokens if completion_tokens > 0 else server_s
            replica.limiter.on_success(epoch, in_flight, per_token, load=load, waiting=self._queued)
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

    async def send(self, attempt: Callable[[str], Awaitable[tuple[T, int]]]) -> tuple[T, str]:
        """One call: `attempt(url)` on the best server, moved to another one on a 429 or no answer.

        `attempt` returns its result and the completion tokens it reports (for the latency signal),
        or raises the errors of `providers/_http.py`. Returns the result and the URL that answered;
        raises the last error when every server in service failed this call once (the caller's
        retry policy takes over)."""
        tried: set[str] = set()
        last: ModelError | None = None
        while True:
            replica = await self.acquire(tried)
            if replica is None:
                assert last is not None
                raise last
            tried.add(replica.url)
            epoch, outcome, retry_after, tokens = replica.limiter.epoch, cast(Outcome, "cancelled"), None, 0
            load = replica.in_flight
            start = time.perf_counter()
            try:
                result, tokens = await attempt(replica.url)
                outcome = "ok"
            except RateLimitedError as exc:
                outcome, retry_after, last = "overloaded", exc.retry_after, exc
                continue
            except ServerTroubleError as exc:
                retry_after, last = exc.retry_after, exc
                outcome = "failed"
                if exc.status == 503:  # busy, or down: a back-off signal and a failure both
                    replica.limiter.on_overload(epoch)
                elif isinstance(exc.__cause__, TimeoutError):  # the client's own timeout ran out
                    replica.limiter.on_timeout(epoch)
                continue
            except (RequestRefusedError, TransientModelError, MalformedReplyError):
                outcome = "refused"  # the request, not the server: the caller decides
                raise
            finally:
                self.release(replica, outcome, epoch=epoch, latency_s=time.perf_counter() - start,
                             completion_tokens=tokens, retry_after=retry_after, load=load)
            return result, replica.url

    # -- health -------------------------------------------------------------------------------

    def _take_out(self, replica: Replica) -> None:
        if replica.out or not any(not r.out for r in self.replicas if r is not replica):
            return  # the last server in service stays: its failures go back to the caller
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
        """Stop the probes of servers that are out, and the loop-lag watch."""
        probes = list(self._probes.values())
        self._probes.clear()
        for task in probes:
            task.cancel()
        if probes:
            await asyncio.gather(*probes, return_exceptions=True)
        if self._rest_timer is not None:
            self._rest_timer.cancel()
            self._rest_timer = None
        await self.lag.stop()


class PoolAdmission(Admission):
    """A pool's admission as the `Model` wrapper's gate."""

    def __init__(self, pool: ReplicaPool) -> None:
        self.pool = pool

    @property
    def ceiling(self) -> int:
        return self.pool.ceiling

    async def enter(self) -> None:
        await self.pool.admit()

    def leave(self) -> None:
        self.pool.leave()

    def describe(self) -> str:
        if self.pool.fixed is not None:
            return f"fixed: at most {self.pool.fixed} in flight"
        per = self.pool.replicas[0].limiter.ceiling
        return f"adaptive: from {self.pool.replicas[0].limiter.start} up to {per} in flight per server"
