"""The replica pool's parts one step at a time: routing, rests, taking out and back, admission
(the adaptive limit itself: test_adaptive_limit.py)."""

from __future__ import annotations

import asyncio

import pytest

from mathlens.models.providers.pool import Outcome, PoolSettings, ReplicaPool


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
    return ReplicaPool(urls, PoolSettings(start=start, **settings), probe=_never,  # type: ignore[arg-type]
                       clock=clock or Clock())


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

    pool = ReplicaPool(["http://a", "http://b"], PoolSettings(failure_threshold=1, probe_s=0.01, start=4),
                       probe=probe)
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
    assert pool.ceiling == 2 * 256  # the default adaptive ceiling per replica
    assert _pool(n=3, max_concurrency=5).ceiling == 15
    await pool.aclose()


async def test_a_fixed_limit_is_over_all_replicas_and_never_moves() -> None:
    """`--concurrency 3` with two replicas: three calls in flight in all, whatever the servers say."""
    clock = Clock()
    pool = _pool(n=2, start=16, clock=clock)
    gate = pool.configure(3)
    assert gate.ceiling == 3 and pool.capacity() == 3
    for _ in range(3):
        await gate.enter()
    fourth = asyncio.ensure_future(gate.enter())
    await asyncio.sleep(0)
    assert not fourth.done()
    r0 = await pool.acquire()
    assert r0 is not None
    pool.release(r0, "overloaded", epoch=r0.limiter.epoch)  # a 429 without Retry-After
    assert r0.limiter.current == 3 and pool.capacity() == 3
    gate.leave()
    await asyncio.wait_for(fourth, 5)
    await pool.aclose()


async def test_configure_fixes_the_limit_only_before_the_first_request() -> None:
    pool = _pool(n=2, start=8)
    pool.configure(3)
    assert [r.limiter.current for r in pool.replicas] == [3, 3] and pool.fixed == 3
    await pool.acquire()
    pool.configure("auto")
    assert pool.fixed == 3
    await pool.aclose()


# -- waiting for admission ----------------------------------------------------------------------------

async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_waiting_calls_are_let_in_in_the_order_they_came_one_per_freed_slot() -> None:
    pool = _pool(n=1)
    gate = pool.configure(2)
    await gate.enter()
    await gate.enter()
    order: list[int] = []

    async def call(i: int) -> None:
        await gate.enter()
        order.append(i)

    waiting = [asyncio.ensure_future(call(i)) for i in range(6)]
    await _settle()
    assert order == []
    gate.leave()
    assert pool._woken == 1 and len(pool._queue) == 5  # one waiter woken, not all six
    await _settle()
    assert order == [0]  # one slot freed: one call in, the other five still waiting
    assert pool._woken == 0 and not any(f.done() for f in pool._queue)
    gate.leave()
    gate.leave()
    await _settle()
    assert order == [0, 1, 2]
    for _ in range(3):  # each call let in ends, and frees its slot for the next
        gate.leave()
        await _settle()
    await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert order == [0, 1, 2, 3, 4, 5]
    await pool.aclose()


async def test_a_call_cancelled_after_it_was_handed_a_slot_passes_the_slot_on() -> None:
    pool = _pool(n=1)
    gate = pool.configure(1)
    await gate.enter()
    first = asyncio.ensure_future(gate.enter())
    second = asyncio.ensure_future(gate.enter())
    await _settle()
    gate.leave()  # hands the slot to `first` ...
    first.cancel()  # ... which is cancelled before it runs
    await asyncio.wait_for(second, 5)
    assert first.cancelled()
    third = asyncio.ensure_future(gate.enter())
    await _settle()
    assert not third.done()  # `second` holds the one slot: nothing was let in twice
    gate.leave()
    await asyncio.wait_for(third, 5)
    await pool.aclose()


async def test_calls_waiting_on_a_resting_pool_are_let_in_when_the_rest_ends() -> None:
    """The only replica rests after a 429 with Retry-After: no call is let in until the rest ends,
    with nothing else happening to wake the waiters."""
    clock = Clock()
    pool = _pool(n=1, start=4, clock=clock)
    r = await pool.acquire()
    assert r is not None
    await pool.admit()
    pool.release(r, "overloaded", epoch=r.limiter.epoch, retry_after=0.05)
    waiting = asyncio.ensure_future(pool.admit())
    await _settle()
    assert pool.capacity() == 0 and not waiting.done()
    clock.now += 0.05  # the pool's clock says the rest is over; the timer wakes the waiter
    await asyncio.wait_for(waiting, 5)
    await pool.aclose()
