"""The replica pool's parts one step at a time: the AIMD limiter, routing, rests, taking out and back."""

from __future__ import annotations

import asyncio

import pytest

from mathlens.models.providers.pool import AimdLimiter, Outcome, PoolSettings, ReplicaPool


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _never(url: str) -> bool:
    return False


def _pool(n: int = 3, start: int = 2, clock: Clock | None = None, **settings: object) -> ReplicaPool:
    urls = [f"http://r{i}" for i in range(n)]
    return ReplicaPool(urls, PoolSettings(**settings), probe=_never, start=start,  # type: ignore[arg-type]
                       clock=clock or Clock())


# -- the limiter ----------------------------------------------------------------------------------

def test_limiter_grows_one_request_per_window_of_successes_while_in_use() -> None:
    lim = AimdLimiter(start=4, ceiling=6, latency_factor=0)
    for _ in range(3):
        lim.on_success(lim.epoch, in_flight=4)
    assert lim.current == 4  # 4 + 3/4-ish: not yet a whole request more
    lim.on_success(lim.epoch, in_flight=4)
    assert lim.current == 5
    for _ in range(50):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 6  # the ceiling holds


def test_limiter_does_not_grow_when_its_limit_is_not_used() -> None:
    lim = AimdLimiter(start=4, ceiling=8, latency_factor=0)
    for _ in range(40):
        lim.on_success(lim.epoch, in_flight=1)
    assert lim.current == 4


def test_overload_halves_once_per_window_down_to_the_floor() -> None:
    lim = AimdLimiter(start=16, ceiling=32)
    sent_before = lim.epoch
    lim.on_overload(sent_before)
    assert lim.current == 8
    for _ in range(5):  # the rest of the burst, sent before the cut, does not cut again
        lim.on_overload(sent_before)
    assert lim.current == 8
    for _ in range(10):  # requests sent after each cut do
        lim.on_overload(lim.epoch)
    assert lim.current == 1 and lim.limit >= 1


def test_growth_back_to_the_limit_that_met_a_429_is_slower() -> None:
    lim = AimdLimiter(start=4, ceiling=16, latency_factor=0)
    lim.on_overload(lim.epoch)  # met at 4: cut to 2
    for _ in range(2):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 3  # below the overload point: one window of 2 successes
    for _ in range(3 * 8 - 1):
        lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 3  # up to it: eight windows
    lim.on_success(lim.epoch, in_flight=lim.current)
    assert lim.current == 4


def test_rising_latency_per_token_cuts_the_limit() -> None:
    lim = AimdLimiter(start=8, ceiling=16, latency_factor=2.0)
    for _ in range(10):
        lim.on_success(lim.epoch, in_flight=1, per_token_s=0.01)
    assert lim.current == 8
    lim.on_success(lim.epoch, in_flight=8, per_token_s=0.2)
    assert lim.current == 4
    calm = AimdLimiter(start=8, ceiling=16, latency_factor=0)  # watching latency turned off
    for _ in range(10):
        calm.on_success(calm.epoch, in_flight=1, per_token_s=0.01)
    calm.on_success(calm.epoch, in_flight=1, per_token_s=0.2)
    assert calm.current == 8


def test_limiter_refuses_impossible_bounds_and_resets() -> None:
    with pytest.raises(ValueError, match="floor <= start <= ceiling"):
        AimdLimiter(start=8, ceiling=4)
    lim = AimdLimiter(start=4, ceiling=8)
    lim.on_overload(lim.epoch)
    lim.reset()
    assert lim.current == 4


# -- routing ----------------------------------------------------------------------------------------

async def test_requests_go_to_the_replica_with_fewest_outstanding() -> None:
    pool = _pool(n=3, start=2)
    first = [r for _ in range(3) if (r := await pool.acquire()) is not None]
    assert [r.url for r in first] == ["http://r0", "http://r1", "http://r2"]  # ties: fewest sent, then order
    pool.release(first[1], "ok", epoch=first[1].limiter.epoch)
    nxt = await pool.acquire()
    assert nxt is not None and nxt.url == "http://r1"  # the only one with nothing outstanding
    assert [r.in_flight for r in pool.replicas] == [1, 1, 1]


async def test_a_full_pool_makes_the_next_request_wait_until_a_slot_frees() -> None:
    pool = _pool(n=2, start=1, latency_factor=0)
    a, b = await pool.acquire(), await pool.acquire()
    assert a is not None and b is not None and pool.capacity() == 2
    waiting = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0)
    assert not waiting.done()
    pool.release(b, "ok", epoch=b.limiter.epoch)
    got = await asyncio.wait_for(waiting, 5)
    assert got is b


async def test_429_with_retry_after_rests_the_replica_and_lowers_its_limit() -> None:
    clock = Clock()
    pool = _pool(n=2, start=4, clock=clock)
    r0 = await pool.acquire()
    assert r0 is not None and r0.url == "http://r0"
    pool.release(r0, "overloaded", epoch=r0.limiter.epoch, retry_after=3.0)
    assert r0.limiter.current == 2 and r0.overloaded == 1
    assert pool.stats()[0].state == "resting"
    picks = [await pool.acquire() for _ in range(4)]
    assert {p.url for p in picks if p} == {"http://r1"}  # nothing goes to the resting replica
    clock.now += 3.5
    assert pool.choose() is not None and pool.choose().url == "http://r0"  # type: ignore[union-attr]
    assert pool.stats()[0].state == "in"


async def test_retry_after_is_capped() -> None:
    clock = Clock()
    pool = _pool(n=2, clock=clock, max_rest_s=5.0)
    r0 = await pool.acquire()
    assert r0 is not None
    pool.release(r0, "overloaded", epoch=r0.limiter.epoch, retry_after=3600)
    assert r0.rest_until == pytest.approx(clock.now + 5.0)


async def test_failures_in_a_row_take_a_replica_out_but_never_the_last() -> None:
    pool = _pool(n=2, start=4, failure_threshold=2)
    r0 = pool.replicas[0]
    for _ in range(2):
        got = await pool.acquire(exclude={"http://r1"})
        assert got is r0
        pool.release(r0, "failed", epoch=r0.limiter.epoch)
    assert r0.out and pool.stats()[0].state == "out"
    assert await pool.acquire(exclude={"http://r1"}) is None  # every replica in service excluded
    r1 = pool.replicas[1]
    for _ in range(5):
        got = await pool.acquire()
        assert got is r1
        pool.release(r1, "failed", epoch=r1.limiter.epoch)
    assert not r1.out  # the last one in service stays; its failures go to the caller
    await pool.aclose()


async def test_a_reply_of_any_kind_resets_the_failure_count() -> None:
    pool = _pool(n=2, failure_threshold=2)
    r0 = pool.replicas[0]
    outcomes: list[Outcome] = ["failed", "refused", "failed", "ok", "failed"]
    for outcome in outcomes:
        got = await pool.acquire(exclude={"http://r1"})
        assert got is r0
        pool.release(r0, outcome, epoch=r0.limiter.epoch)
    assert not r0.out and r0.errors == 3 and r0.ok == 1


async def test_a_request_the_caller_gave_up_on_late_counts_as_a_failure() -> None:
    """A replica that accepts connections and never answers only shows as the caller's timeouts."""
    pool = _pool(n=2, failure_threshold=2, hang_s=30.0)
    r0 = pool.replicas[0]
    for latency in (0.2, 1.0):  # cancelled quickly (the run was stopped): nothing learnt
        assert await pool.acquire(exclude={"http://r1"}) is r0
        pool.release(r0, "cancelled", epoch=r0.limiter.epoch, latency_s=latency)
    assert r0.failures == 0 and not r0.out
    for _ in range(2):  # the caller's timeout ran out on this replica twice in a row
        assert await pool.acquire(exclude={"http://r1"}) is r0
        pool.release(r0, "cancelled", epoch=r0.limiter.epoch, latency_s=31.0)
    assert r0.out and r0.errors == 2
    await pool.aclose()


async def test_a_replica_that_is_out_is_probed_back_in_at_its_starting_limit() -> None:
    answers = [False, True]
    probed: list[str] = []

    async def probe(url: str) -> bool:
        probed.append(url)
        return answers.pop(0)

    pool = ReplicaPool(["http://a", "http://b"], PoolSettings(failure_threshold=1, probe_s=0.01), probe=probe,
                       start=4)
    a = pool.replicas[0]
    a.limiter.on_overload(a.limiter.epoch)
    got = await pool.acquire(exclude={"http://b"})
    assert got is a
    pool.release(a, "failed", epoch=a.limiter.epoch)
    assert a.out
    for _ in range(500):
        if not a.out:
            break
        await asyncio.sleep(0.01)
    assert not a.out and probed == ["http://a", "http://a"] and a.limiter.current == 4
    await pool.aclose()


async def test_admission_follows_the_capacity_of_replicas_in_service() -> None:
    clock = Clock()
    pool = _pool(n=2, start=1, clock=clock)
    await pool.admit()
    await pool.admit()
    third = asyncio.ensure_future(pool.admit())
    await asyncio.sleep(0)
    assert not third.done()
    pool.leave()
    await asyncio.wait_for(third, 5)
    assert pool.ceiling_total(3) == 2 * 12  # 4 x the start per replica by default
    assert _pool(n=3, max_concurrency=5).ceiling_total(2) == 15


async def test_configure_sets_the_start_only_before_the_first_request() -> None:
    pool = _pool(n=2, start=8)
    pool.configure(3)
    assert [r.limiter.current for r in pool.replicas] == [3, 3]
    await pool.acquire()
    pool.configure(6)
    assert [r.limiter.current for r in pool.replicas] == [3, 3]
