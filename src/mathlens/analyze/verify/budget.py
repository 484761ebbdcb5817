"""Run untrusted symbolic work under a wall-clock budget in a worker process that can be killed.

SymPy can spend unbounded time (or memory) on model-written input such as ``9^9^9^9``; a thread
cannot be interrupted and ``signal.alarm`` only works in the main thread, so every bounded call is
shipped to a separate process. Workers are reused between calls (starting one costs far more than a
call) and a worker that runs over its budget is killed and replaced.

    >>> from operator import add
    >>> run_bounded(add, 2, 3).value
    5

Design choices:

* Each worker is a fresh interpreter started with ``subprocess`` (see ``_worker``), not a
  ``multiprocessing`` child: it inherits none of the caller's threads or locks (a plain ``fork``
  of a process running torch or an HTTP client is not safe) and never re-imports the caller's
  ``__main__``. It imports SymPy and the parsers once (about half a second) and then serves
  calls over a pipe for about 0.1 ms of overhead each. A killed worker's replacement is started
  at once, so its start-up overlaps the caller's next work; start-up time never counts against
  a call's budget.
* The pool remembers which process created it. After ``os.fork()`` the child drops the inherited
  workers without touching them (their pipes belong to the parent) and builds its own pool.
* Several threads may call ``run_bounded`` at once; each call holds one worker for its duration.
  The pool grows up to ``max_workers`` and then callers wait for a free worker.
* Each worker caps its own address space (``memory_mb``), so a runaway allocation fails inside the
  worker as ``MemoryError`` instead of exhausting the machine.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

BoundedStatus = Literal["ok", "timeout", "error"]

DEFAULT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Bounded:
    """The outcome of one bounded call. `value` is set only when `status == "ok"`."""

    status: BoundedStatus
    value: Any = None
    error: str = ""
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the call finished within its budget without raising."""
        return self.status == "ok"


@dataclass(frozen=True)
class PoolConfig:
    """How the worker pool is sized and limited."""

    max_workers: int = max(2, os.cpu_count() or 2)
    memory_mb: int | None = 2048


_STARTUP_TIMEOUT_S = 60.0

#: warm-ups a worker runs in the background once it is ready, as (module, function) names: the
#: modules whose work runs in the workers add their own (`warm_up_in_workers`), so this module
#: names none of them; a worker started before one is added does without it (a warm-up only saves time)
_WARM_UPS: list[tuple[str, str]] = []


def warm_up_in_workers(module: str, function: str) -> None:
    """Have every worker started from now on call `module.function()` once after it is ready."""
    if (module, function) not in _WARM_UPS:
        _WARM_UPS.append((module, function))


def _main_path() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None) or ""
    return os.path.abspath(path) if path and os.path.exists(path) else ""


class _Worker:
    """One worker process and the parent's ends of its two pipes.

    The process is a fresh interpreter (``subprocess``), not a ``multiprocessing`` child: it
    inherits no threads or locks and does not re-import the caller's ``__main__``.
    """

    def __init__(self, memory_mb: int | None) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        code = ("from mathlens.analyze.verify._worker import main; "
                f"main({to_child_r}, {from_child_w}, {int(memory_mb or 0)}, {_main_path()!r}, {tuple(_WARM_UPS)!r})")
        env = dict(os.environ)
        # The worker must import whatever module the work function lives in (tests, scripts).
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code], pass_fds=(to_child_r, from_child_w), env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, close_fds=True)
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.send_conn = Connection(to_child_w, readable=False)
        self.recv_conn = Connection(from_child_r, writable=False)
        self.ready = False

    def wait_ready(self, timeout_s: float = _STARTUP_TIMEOUT_S) -> bool:
        """Wait for the worker's first message (its imports are done)."""
        if self.ready:
            return True
        try:
            if self.recv_conn.poll(timeout_s):
                self.recv_conn.recv_bytes()
                self.ready = True
        except (EOFError, OSError):
            return False
        return self.ready

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.wait(timeout=2.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._close()

    def _close(self) -> None:
        for conn in (self.send_conn, self.recv_conn):
            with contextlib.suppress(OSError):
                conn.close()

    def stop(self) -> None:
        try:
            self.send_conn.send_bytes(b"stop")
            self.process.wait(timeout=0.5)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.kill()
            return
        self._close()


class WorkerPool:
    """A thread-safe pool of reusable, killable worker processes."""

    def __init__(self, config: PoolConfig | None = None) -> None:
        self.config = config or PoolConfig()
        self._idle: list[_Worker] = []
        self._count = 0
        self._cond = threading.Condition()
        self._pid = os.getpid()
        self.replaced = 0  # workers killed after a timeout or crash (for benches and tests)
        self.warmed = False  # some worker of this pool has been ready (start-up is over)

    def _acquire(self) -> _Worker:
        with self._cond:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        return worker
                    worker.kill()
                    self._count -= 1
                if self._count < self.config.max_workers:
                    self._count += 1
                    break
                self._cond.wait()
        try:
            return _Worker(self.config.memory_mb)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker | None) -> None:
        with self._cond:
            if worker is None:
                self._count -= 1
            else:
                self._idle.append(worker)
            self._cond.notify()

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float,
             ready_s: float | None = None) -> Bounded:
        """Run ``fn(*args)`` in a worker; kill the worker if it takes longer than ``timeout_s``.

        A worker still starting after one was replaced is waited for up to `ready_s` seconds when
        given (else up to the start-up limit); past that the call gives up as ``timeout`` and the
        worker is kept for later calls, so a caller with a deadline never waits past it. The
        pool's first worker is always waited for: that is the process's start-up.
        """
        start = time.perf_counter()
        try:
            worker = self._acquire()
        except Exception as exc:
            return Bounded("error", error=f"could not start worker: {exc}")
        try:
            data = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            self._release(worker)
            return Bounded("error", error=f"could not send work: {type(exc).__name__}: {exc}"[:500])
        # The pool's very first worker is start-up, paid once per process: only a replacement's
        # start is charged to the caller's deadline.
        if ready_s is not None and self.warmed and not worker.wait_ready(max(ready_s, 0.0)) and worker.alive():
            self._release(worker)  # still starting: a later call may use it
            return Bounded("timeout", error=f"no worker was ready within {ready_s:.2g} s",
                           elapsed_s=time.perf_counter() - start)
        if not worker.wait_ready():
            worker.kill()
            self._release(None)
            return Bounded("error", error="worker did not start")
        self.warmed = True
        start = time.perf_counter()  # the budget covers the work, not the worker's start-up
        try:
            worker.send_conn.send_bytes(data)
        except (OSError, ValueError) as exc:
            worker.kill()
            self._release(None)
            return Bounded("error", error=f"worker pipe closed: {exc}")
        if not worker.recv_conn.poll(max(timeout_s, 0.0)):
            worker.kill()
            self._release(None)
            self.replaced += 1
            self._spare()
            return Bounded("timeout", error=f"over the {timeout_s:g} s budget",
                           elapsed_s=time.perf_counter() - start)
        try:
            with warnings.catch_warnings():  # SymPy may warn while rebuilding odd products
                warnings.simplefilter("ignore", DeprecationWarning)
                status, payload = pickle.loads(worker.recv_conn.recv_bytes())
        except Exception as exc:
            worker.kill()
            self._release(None)
            self.replaced += 1
            return Bounded("error", error=f"worker died: {type(exc).__name__}",
                           elapsed_s=time.perf_counter() - start)
        self._release(worker)
        elapsed = time.perf_counter() - start
        if status == "ok":
            return Bounded("ok", value=payload, elapsed_s=elapsed)
        return Bounded("error", error=str(payload), elapsed_s=elapsed)

    def _spare(self) -> None:
        """Start a replacement right away, so its start-up overlaps the caller's next work."""
        with self._cond:
            if self._count >= self.config.max_workers:
                return
            self._count += 1
        try:
            worker = _Worker(self.config.memory_mb)
        except Exception:
            self._release(None)
            return
        self._release(worker)

    def prestart(self) -> bool:
        """Start one worker in the background when the pool has none, without waiting for it to
        be ready: its start-up overlaps whatever the caller does before the first call. False
        when the pool already had a worker (nothing was started)."""
        with self._cond:
            if self._count > 0:
                return False
            self._count += 1
        try:
            worker = _Worker(self.config.memory_mb)
        except Exception:
            self._release(None)
            return False
        self._release(worker)
        return True

    def warm(self, n: int = 1) -> None:
        """Start up to ``n`` workers ahead of time, so the first calls do not pay for it."""
        started = []
        for _ in range(min(n, self.config.max_workers)):
            started.append(self._acquire())
        for worker in started:
            worker.wait_ready()
            self._release(worker)

    def shutdown(self) -> None:
        """Stop every idle worker (busy ones are stopped when their call returns or times out)."""
        with self._cond:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        if os.getpid() != self._pid:
            return  # inherited across fork: the processes belong to the parent
        for worker in idle:
            worker.stop()

    def abandon(self) -> None:
        """Forget every worker without touching it (used in a forked child)."""
        self._idle = []
        self._count = 0
        self._cond = threading.Condition()
        self._pid = os.getpid()
        self.warmed = False


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> WorkerPool:
    """The process-wide pool, created on first use (and re-created in a forked child)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool._pid != os.getpid():
            if _pool is not None:
                _pool.abandon()
            _pool = WorkerPool()
        return _pool


def prestart() -> bool:
    """Start the process-wide pool's first worker in the background (once; see `WorkerPool.prestart`).

    Call it as early as a caller knows it will check steps or answers: ``mathlens flow`` does
    before it reads its input and imports the flow analysis, so the worker's SymPy import runs
    beside them instead of after them.
    """
    return get_pool().prestart()


def configure_pool(config: PoolConfig) -> WorkerPool:
    """Replace the process-wide pool with one built from ``config`` (stopping the old workers)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown()
        _pool = WorkerPool(config)
        return _pool


def run_bounded(fn: Callable[..., Any], *args: Any, timeout_s: float = DEFAULT_TIMEOUT_S,
                ready_s: float | None = None) -> Bounded:
    """Call ``fn(*args)`` in a reusable worker process, giving up after ``timeout_s`` seconds.

    ``fn`` and its arguments must be picklable (a module-level function); so must its result.
    Never raises for a failure of the work itself: a timeout gives ``status="timeout"`` (the worker
    is killed and replaced), an exception or a crashed worker gives ``status="error"``. With
    `ready_s`, waiting for a worker that is still starting is bounded too (``timeout`` past it).
    """
    return get_pool().call(fn, args, timeout_s, ready_s)


def _after_fork_in_child() -> None:
    global _pool, _pool_lock
    _pool_lock = threading.Lock()
    if _pool is not None:
        _pool.abandon()
        _pool = None


def _shutdown_at_exit() -> None:
    if _pool is not None:
        _pool.shutdown()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_shutdown_at_exit)
