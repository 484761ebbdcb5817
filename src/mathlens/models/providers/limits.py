"""The adaptive limit on the requests one server gets at once, and the client's own delay.

`AdaptiveLimit` is pure bookkeeping (no clock, no I/O), fed by the replica pool with what each
request met. It reads only the **server's** signals:

- **429 or 503** (the server says it is busy): the limit is cut (halved while still probing
  upwards, by 10 % afterwards) and the limit that met it is remembered: growing back up to it is
  `PROBE_SLOWDOWN` times slower, so a server with a hard capacity is not probed every second.
- **a timeout** (the caller gave up on a request after the pool's `hang_s`): halved.
- **the server's latency rising at the limit** (a queueing server such as vLLM or Ollama past
  what it batches): when the smoothed latency per generated token of the requests sent at the
  current limit exceeds `latency_factor` times the best seen, the limit moves to what the server
  served at its best latency (current × best / now, times `GRADIENT_HEADROOM`), never below the
  largest load (requests in flight when a request was sent) at which the server showed no
  slowdown. That level is where a queueing server reaches full throughput, so the limit does not
  settle below its capacity. When the latency is high even there (the server became slower at the
  same load: another tenant, a failing node), that level decays by 10 % per cut, so the client
  does back off from a server that slowed down. The best latency is never forgotten except when
  a server comes back into service (`reset`).

The latency fed to it is the reply's latency less the event loop's own delay (`LoopLag`): a
client busy with its own work reads its replies late, and that must not look like a slow server.

Growth: one request per success while the limit is in use (doubling per round trip) until the
first cut, then one request per window of `current` successes (additive increase). The limit is
in use while the client has as many requests out or waiting for room as the limit. Only one cut
per "epoch": an answer to a request sent before the last cut does not cut again, and the latency
signal only reads requests sent at the current limit.

>>> lim = AdaptiveLimit(start=4, ceiling=8)
>>> lim.on_overload(epoch=lim.epoch)
>>> lim.current
2
>>> lim.on_overload(epoch=0)  # sent before the cut: does not cut again
>>> lim.current
2
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from dataclasses import dataclass, field

#: Samples at the current limit before the latency signal counts.
LATENCY_WARMUP = 5
#: How many times more slowly a limit grows back to the limit at which it last met a 429.
PROBE_SLOWDOWN = 8
#: A latency cut leaves this much room over what the server served at its best latency.
GRADIENT_HEADROOM = 1.5
#: Latency within this multiple of the best counts as "no slowdown" (the healthy level).
HEALTHY_RATIO = 1.25


@dataclass
class AdaptiveLimit:
    """The limit on one server's requests in flight (see the module notes). With `fixed`, the
    limit never moves (`--concurrency N`): the signals are counted and nothing else."""

    start: int
    ceiling: int
    floor: int = 1
    #: a latency per token above this multiple of the best seen is congestion (0: not watched)
    latency_factor: float = 2.0
    fixed: bool = False
    limit: float = field(init=False)
    #: how many cuts so far; a request remembers it when sent
    epoch: int = field(default=0, init=False)
    #: still doubling (no cut yet)
    probing: bool = field(default=True, init=False)
    #: the most in flight at which the server showed no slowdown
    healthy: int = field(default=0, init=False)
    _best: float | None = field(default=None, init=False, repr=False)
    _recent: float | None = field(default=None, init=False, repr=False)
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
        """Back to the starting limit, forgetting what was learnt (a replica back in service)."""
        self.limit = float(self.start)
        self._best = self._recent = None
        self._samples = self._credit = 0
        self._overloaded_at = None
        self.probing = True
        self.healthy = 0
        self.epoch += 1

    def _set(self, limit: float) -> None:
        self.limit = min(float(self.ceiling), max(float(self.floor), limit))
        self._credit = 0
        self._recent = None
        self._samples = 0
        self.probing = False
        self.epoch += 1

    def on_overload(self, epoch: int) -> None:
        """A 429/503 to a request sent in `epoch`: cut once per epoch, and remember the limit that met it."""
        if self.fixed or epoch != self.epoch:
            return
        self._overloaded_at = self.current
        self._set(self.limit * (0.5 if self.probing else 0.9))

    def on_timeout(self, epoch: int) -> None:
        """A request sent in `epoch` that the server never answered in time: halve once per epoch."""
        if not self.fixed and epoch == self.epoch:
            self._set(self.limit * 0.5)

    def _observe(self, per_token_s: float) -> float | None:
        """Take a latency sample from the current epoch; the ratio of recent to best once warm."""
        self._samples += 1
        self._recent = per_token_s if self._recent is None else 0.7 * self._recent + 0.3 * per_token_s
        self._best = self._recent if self._best is None else min(self._best, self._recent)
        if self._samples <= LATENCY_WARMUP or self._best <= 0:
            return None
        return self._recent / self._best

    def on_success(self, epoch: int, in_flight: int, per_token_s: float | None = None,
                   load: int | None = None, waiting: int = 0) -> None:
        """A reply to a request sent in `epoch`, when `in_flight` requests (this one included) were out;
        `per_token_s`: its server-side latency per generated token, if known; `load`: how many were in
        flight when it was sent (default `in_flight`); `waiting`: requests the client holds back for
        want of room (they count as in use: the replies of a burst come back one by one before the
        client refills the slots they free)."""
        if self.fixed:
            return
        usable = (epoch == self.epoch and self.latency_factor > 0 and per_token_s is not None
                  and math.isfinite(per_token_s) and per_token_s > 0)
        ratio = self._observe(per_token_s) if usable and per_token_s is not None else None
        if ratio is not None and ratio <= HEALTHY_RATIO:
            self.healthy = max(self.healthy, in_flight if load is None else load)
        if ratio is not None and ratio > self.latency_factor:
            self._latency_cut(ratio)
            return
        if in_flight + waiting < self.current:
            return  # the limit is not in use: success says nothing about more
        if self.probing:
            self.limit = min(float(self.ceiling), self.limit + 1.0)
            return
        self._credit += 1
        slow = self._overloaded_at is not None and self.current + 1 >= self._overloaded_at
        if self._credit >= self.current * (PROBE_SLOWDOWN if slow else 1):
            self._credit = 0
            self.limit = min(float(self.ceiling), self.limit + 1.0)

    def _latency_cut(self, ratio: float) -> None:
        target = self.current / ratio * GRADIENT_HEADROOM
        if target < self.healthy:
            # the server is slow even where it was fine before: it slowed down, so trust that level less
            target, self.healthy = float(self.healthy), int(self.healthy * 0.9)
        self._set(min(target, self.limit))


class LoopLag:
    """How late the event loop runs its callbacks right now (seconds, decaying maximum).

    A reply that arrives while the loop is busy with the client's own work is read late by about
    this much; subtracting it leaves the server's part of the latency. It watches only while
    `start`ed (the pool starts it on its first request and stops it when closed)."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.value = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.interval_s)
            late = max(0.0, time.perf_counter() - before - self.interval_s)
            # a decaying maximum: one slow turn of the loop is remembered for a few hundred ms
            self.value = max(late, self.value * 0.8)

    def server_part(self, latency_s: float) -> float:
        """`latency_s` less the loop's current delay (never below a tenth of it)."""
        return max(latency_s - self.value, latency_s * 0.1)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await task
