"""The runner's window: every job run once, in order, never more than `window` at a time, and the
first failure stopping the rest."""

from __future__ import annotations

import asyncio

import pytest

from mathlens.runs.runner import _run_window


async def test_every_job_runs_once_in_order_and_at_most_window_at_a_time() -> None:
    started: list[int] = []
    running = {"now": 0, "most": 0}

    def make(i: int):  # type: ignore[no-untyped-def]
        async def job() -> None:
            started.append(i)
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
            await asyncio.sleep(0.001 * (i % 3))
            running["now"] -= 1
        return job

    await _run_window([make(i) for i in range(50)], 4)
    assert started == list(range(50))
    assert running == {"now": 0, "most": 4}


async def test_a_window_wider_than_the_jobs_runs_them_all_together() -> None:
    gate = asyncio.Event()
    seen: list[int] = []

    def make(i: int):  # type: ignore[no-untyped-def]
        async def job() -> None:
            seen.append(i)
            if len(seen) == 3:
                gate.set()
            await gate.wait()  # only ends if all three are in flight at once
        return job

    await asyncio.wait_for(_run_window([make(i) for i in range(3)], 100), 5)
    assert sorted(seen) == [0, 1, 2]


async def test_the_first_failure_stops_the_others_and_is_raised() -> None:
    started: list[int] = []
    cancelled: list[int] = []

    def make(i: int):  # type: ignore[no-untyped-def]
        async def job() -> None:
            started.append(i)
            if i == 2:
                raise OSError("disk full")
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(i)
                raise
        return job

    with pytest.raises(OSError, match="disk full"):
        await asyncio.wait_for(_run_window([make(i) for i in range(20)], 3), 5)
    assert started == [0, 1, 2]  # nothing after the failure was started
    assert sorted(cancelled) == [0, 1]
