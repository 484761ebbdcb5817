"""The adaptive limit step by step, and against simulated servers: healthy, saturating, slowing down.

The simulations are discrete-event models of a server (slots, a FIFO queue, a service time) and a
client that keeps `limit.current` requests in flight; each reply is fed to the limit with the
epoch its request was sent in, as the pool does. They check where the limit settles, never time.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

import pytest

from mathlens.models.providers.limits import PROBE_SLOWDOWN, AdaptiveLimit, LoopLag

# -- single steps ---------------------------------------------------------------------------------


def test_probing_doubles_per_round_of_successes_while_the_limit_is_in_use() -> None:
    lim = AdaptiveLimit(start=4, ceiling=64, latency_factor=0)
    for _ in range(4):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 8
    for _ in range(8):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 16


def test_no_growth_when_the_limit_is_not_in_use() -> None:
    lim = AdaptiveLimit(start=4, ceiling=64, latency_factor=0)
    for _ in range(50):
        lim.on_success(lim.epoch, in_flight=2)
    assert lim.current == 4


def test_requests_waiting_for_room_count_as_the_limit_in_use() -> None:
    # a burst of replies: each comes back before the client refills the slots the others freed
    lim = AdaptiveLimit(start=4, ceiling=64, latency_factor=0)
    for out in (4, 3, 2, 1):
        lim.on_success(lim.epoch, in_flight=out, waiting=10)
    assert lim.current == 8
    for _ in range(20):
        lim.on_success(lim.epoch, in_flight=2, waiting=0)  # nothing held back: no growth
    assert lim.current == 8


def test_growth_stops_at_the_ceiling() -> None:
    lim = AdaptiveLimit(start=4, ceiling=6, latency_factor=0)
    for _ in range(100):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 6


def test_a_429_while_probing_halves_once_per_epoch_then_growth_is_additive() -> None:
    lim = AdaptiveLimit(start=16, ceiling=64, latency_factor=0)
    sent = lim.epoch
    lim.on_overload(sent)
    lim.on_overload(sent)  # the same burst: sent before the cut
    assert lim.current == 8 and not lim.probing
    for _ in range(7):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 8  # one window is 8 successes
    lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 9


def test_after_probing_a_429_cuts_by_a_tenth_and_growing_back_to_it_is_slower() -> None:
    lim = AdaptiveLimit(start=20, ceiling=64, latency_factor=0)
    lim.on_overload(lim.epoch)  # leaves probing: 10
    for _ in range(10):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 11
    lim.on_overload(lim.epoch)  # 11 * 0.9 = 9.9
    assert lim.current == 9
    successes = 0
    while lim.current < 11:
        lim.on_success(lim.epoch, in_flight=lim.current)
        successes += 1
    # 9 -> 10 takes one window (9); 10 -> 11 reaches the limit that met the 429: PROBE_SLOWDOWN windows
    assert successes == 9 + 10 * PROBE_SLOWDOWN


def test_a_timeout_halves() -> None:
    lim = AdaptiveLimit(start=16, ceiling=64)
    lim.on_timeout(lim.epoch)
    assert lim.current == 8
    lim.on_timeout(lim.epoch - 1)  # sent before the cut
    assert lim.current == 8


def test_a_fixed_limit_never_moves() -> None:
    lim = AdaptiveLimit(start=8, ceiling=8, fixed=True)
    lim.on_overload(lim.epoch)
    lim.on_timeout(lim.epoch)
    for latency in [0.1] * 10 + [5.0] * 20:
        lim.on_success(lim.epoch, in_flight=8, per_token_s=latency)
    assert lim.current == 8


def test_impossible_bounds_are_refused_and_reset_returns_to_the_start() -> None:
    with pytest.raises(ValueError):
        AdaptiveLimit(start=8, ceiling=4)
    lim = AdaptiveLimit(start=4, ceiling=8)
    lim.on_overload(lim.epoch)
    lim.reset()
    assert lim.current == 4 and lim.probing


def test_loop_lag_is_taken_off_a_reply_latency() -> None:
    lag = LoopLag()
    lag.value = 0.05
    assert lag.server_part(0.25) == pytest.approx(0.20)
    assert lag.server_part(0.01) == pytest.approx(0.001)  # never below a tenth


# -- simulated servers ----------------------------------------------------------------------------


@dataclass
class Server:
    """`slots` requests served at once (None: unlimited), FIFO queue, `service(t)` seconds each."""

    slots: int | None
    service: float
    slow_after: float | None = None  # from this time on, the service takes `slow_factor` times longer
    slow_factor: float = 1.0
    busy_until: list[float] = field(default_factory=list)

    def finish_time(self, now: float) -> float:
        service = self.service * (self.slow_factor if self.slow_after is not None and now >= self.slow_after else 1)
        if self.slots is None:
            return now + service
        if len(self.busy_until) < self.slots:
            end = now + service
        else:
            free = heapq.heappop(self.busy_until)
            end = max(now, free) + service
        heapq.heappush(self.busy_until, end)
        return end


def simulate(lim: AdaptiveLimit, server: Server, replies: int, noise: float = 0.0, seed: int = 0
             ) -> tuple[list[int], float]:
    """Run a closed loop of `replies` completions; the limit after each, and the completion rate."""
    rng = random.Random(seed)
    now = 0.0
    flights: list[tuple[float, float, int, int]] = []  # (end, sent, epoch, load when sent)
    limits = []
    done = 0
    while done < replies:
        while len(flights) < lim.current:
            heapq.heappush(flights, (server.finish_time(now), now, lim.epoch, len(flights) + 1))
        end, sent, epoch, load = heapq.heappop(flights)
        now = end
        latency = (end - sent) * (1 + rng.uniform(-noise, noise))
        lim.on_success(epoch, in_flight=len(flights) + 1, per_token_s=latency, load=load)
        limits.append(lim.current)
        done += 1
    return limits, done / now


def test_healthy_server_with_noisy_latency_takes_the_limit_to_its_ceiling_and_keeps_it() -> None:
    lim = AdaptiveLimit(start=16, ceiling=128)
    limits, _ = simulate(lim, Server(slots=None, service=0.2), replies=3000, noise=0.3)
    first_full = limits.index(128)
    assert first_full < 200  # reached within a few round trips
    assert min(limits[first_full:]) == 128  # and never cut: noise is not congestion


@pytest.mark.parametrize(("capacity", "start"), [(8, 16), (32, 16), (100, 16), (5, 1)])
def test_saturating_server_settles_at_or_above_its_capacity(capacity: int, start: int) -> None:
    """A queueing server serves `capacity` at once: any limit >= capacity gives full throughput,
    less does not. The limit must end up there, not far above it (the queue only adds latency)."""
    lim = AdaptiveLimit(start=start, ceiling=1024)
    service = 0.2
    limits, rate = simulate(lim, Server(slots=capacity, service=service), replies=40 * capacity + 2000)
    tail = limits[len(limits) // 2:]
    assert min(tail) >= capacity, (min(tail), capacity)
    assert max(tail) <= 3 * capacity + 2
    assert rate >= 0.95 * capacity / service


def test_a_server_that_slows_down_at_constant_load_is_backed_off_from() -> None:
    """Same load, the server becomes 4x slower (another tenant): the latency at the limit rises, so
    the limit comes down, though not to nothing."""
    lim = AdaptiveLimit(start=32, ceiling=32)
    limits, _ = simulate(lim, Server(slots=None, service=0.2, slow_after=20.0, slow_factor=4.0), replies=6000)
    assert min(limits[:3000]) == 32  # before the slowdown (160 replies/s for 20 s): untouched
    assert 1 <= limits[-1] < 32
