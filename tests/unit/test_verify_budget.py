"""The bounded worker pool: results, timeouts, crashes, unpicklable work, fork, threads."""

from __future__ import annotations

import operator
import os
import threading
import time

import pytest

from mathlens.analyze.verify.budget import PoolConfig, WorkerPool, get_pool, run_bounded


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _boom() -> None:
    raise ValueError("bad input")


def _die() -> None:
    os._exit(7)


def _huge_power() -> int:
    return 9 ** (9**9)


def test_returns_value() -> None:
    result = run_bounded(operator.add, 2, 3)
    assert result.status == "ok"
    assert result.value == 5


def test_timeout_kills_and_next_call_works() -> None:
    start = time.perf_counter()
    result = run_bounded(_sleep, 30.0, timeout_s=0.3)
    assert result.status == "timeout"
    assert time.perf_counter() - start < 5
    assert run_bounded(operator.mul, 6, 7).value == 42


def test_runaway_integer_power_is_stopped() -> None:
    result = run_bounded(_huge_power, timeout_s=0.5)
    assert result.status == "timeout"


def test_exception_is_data() -> None:
    result = run_bounded(_boom)
    assert result.status == "error"
    assert "ValueError: bad input" in result.error


def test_crashed_worker_is_replaced() -> None:
    result = run_bounded(_die)
    assert result.status == "error"
    assert "died" in result.error
    assert run_bounded(operator.sub, 9, 4).value == 5


def test_unpicklable_work_is_an_error_not_an_exception() -> None:
    result = run_bounded(lambda: 1)  # a lambda cannot be pickled
    assert result.status == "error"
    assert "could not send" in result.error


def test_threads_share_the_pool() -> None:
    pool = WorkerPool(PoolConfig(max_workers=2))
    results: list[int] = []

    def work(i: int) -> None:
        results.append(pool.call(operator.mul, (i, 2), 5.0).value)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.shutdown()
    assert sorted(results) == [0, 2, 4, 6, 8, 10]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_gets_its_own_workers() -> None:
    get_pool().warm(1)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report the result through the pipe, never return into pytest
        try:
            value = run_bounded(operator.add, 20, 22, timeout_s=20).value
            os.write(write_fd, str(value).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    os.waitpid(pid, 0)
    reply = os.read(read_fd, 100).decode()
    os.close(read_fd)
    assert reply == "42"
    assert run_bounded(operator.add, 1, 1).value == 2
