"""Run untrusted symbolic work under a wall-clock budget in a worker process that can be killed.

SymPy can spend unbounded time (or memory) on model-written input such as ``9^9^9^9``; a thread
cannot be interrupted and ``signal.alarm`` only works in the main thread, so every bounded call is
shipped to a separate process. Workers are reused between calls (starting one costs far more than a
call) and a worker that runs over its budget is killed and replaced.

    >>> from operator import add
    >>> run_bounded(add, 2, 3).value
    5

Design choices:

* Workers come from the ``forkserver`` start method where available. The server process preloads
  SymPy once (see ``_preload``), so a replacement worker is a cheap fork of an already-warm
  process, and the workers never inherit the caller's threads or locks (a plain ``fork`` of a
  process running torch or an HTTP client is not safe).
* The pool remembers which process created it. After ``os.fork()`` the child drops the inherited
  workers without touching them (their pipes belong to the parent) and builds its own pool.
* Several threads may call ``run_bounded`` at once; each call holds one worker for its duration.
  The pool grows up to ``max_workers`` and then callers wait for a free worker.
* Each worker caps its own address space (``memory_mb``), so a runaway allocation fails inside the
  worker as ``MemoryError`` instead of exhausting the machine.
"""

from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

BoundedStatus = Literal["ok", "timeout", "error"]

DEFAULT_TIMEOUT_S = 2.0
_PRELOAD = "mathlens.analyze.verify._preload"


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
    start_method: str | None = None  # None: forkserver where available, else spawn


def _serve(conn: Connection, memory_mb: int | None) -> None:
    """Worker loop: receive ``(fn, args)``, send back ``("ok", value)`` or ``("error", text)``."""
    if memory_mb:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass  # not every platform lets a process lower its own limit; the time budget still holds
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        fn, args = message
        try:
            reply: tuple[str, Any] = ("ok", fn(*args))
        except MemoryError:
            reply = ("error", "MemoryError: worker memory limit reached")
        except RecursionError:
            reply = ("error", "RecursionError: expression nested too deeply")
        except BaseException as exc:  # noqa: BLE001 - any failure of untrusted work is reported as data
            reply = ("error", f"{type(exc).__name__}: {exc}"[:500])
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
            try:
                conn.send(("error", f"result could not be returned: {type(exc).__name__}: {exc}"[:500]))
            except Exception:  # noqa: BLE001
                traceback.print_exc()
                return


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx: Any, memory_mb: int | None) -> None:
        parent, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_serve, args=(child, memory_mb), daemon=True,
                                   name="mathlens-bounded")
        self.process.start()
        child.close()
        self.conn: Connection = parent

    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        try:
            self.process.kill()
            self.process.join(timeout=1.0)
        except (OSError, ValueError, AssertionError):
            pass
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(timeout=0.5)
        if self.process.is_alive():
            self.kill()
        else:
            self.conn.close()


class WorkerPool:
    """A thread-safe pool of reusable, killable worker processes."""

    def __init__(self, config: PoolConfig | None = None) -> None:
        self.config = config or PoolConfig()
        self._ctx = self._context(self.config.start_method)
        self._idle: list[_Worker] = []
        self._count = 0
        self._cond = threading.Condition()
        self._pid = os.getpid()
        self.replaced = 0  # workers killed after a timeout or crash (for benches and tests)

    @staticmethod
    def _context(method: str | None) -> Any:
        methods = mp.get_all_start_methods()
        if method is None:
            method = "forkserver" if "forkserver" in methods else "spawn"
        ctx = mp.get_context(method)
        if method == "forkserver":
            # Preload SymPy in the server (and leave out __main__, which may be a script with side effects).
            ctx.set_forkserver_preload([_PRELOAD])
        return ctx

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
            return _Worker(self._ctx, self.config.memory_mb)
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

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> Bounded:
        """Run ``fn(*args)`` in a worker; kill the worker if it takes longer than ``timeout_s``."""
        start = time.perf_counter()
        try:
            worker = self._acquire()
        except Exception as exc:  # noqa: BLE001 - cannot start a process: report, do not raise
            return Bounded("error", error=f"could not start worker: {exc}")
        try:
            worker.conn.send((fn, args))
        except Exception as exc:  # noqa: BLE001 - pickling failed before anything was written
            self._release(worker)
            return Bounded("error", error=f"could not send work: {type(exc).__name__}: {exc}"[:500])
        if not worker.conn.poll(max(timeout_s, 0.0)):
            worker.kill()
            self._release(None)
            self.replaced += 1
            return Bounded("timeout", error=f"over the {timeout_s:g} s budget",
                           elapsed_s=time.perf_counter() - start)
        try:
            status, payload = worker.conn.recv()
        except Exception as exc:  # noqa: BLE001 - the worker died (segfault, kill) mid-call
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

    def warm(self, n: int = 1) -> None:
        """Start up to ``n`` workers ahead of time, so the first calls do not pay for it."""
        started = []
        for _ in range(min(n, self.config.max_workers)):
            started.append(self._acquire())
        for worker in started:
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


def configure_pool(config: PoolConfig) -> WorkerPool:
    """Replace the process-wide pool with one built from ``config`` (stopping the old workers)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown()
        _pool = WorkerPool(config)
        return _pool


def run_bounded(fn: Callable[..., Any], *args: Any, timeout_s: float = DEFAULT_TIMEOUT_S) -> Bounded:
    """Call ``fn(*args)`` in a reusable worker process, giving up after ``timeout_s`` seconds.

    ``fn`` and its arguments must be picklable (a module-level function); so must its result.
    Never raises for a failure of the work itself: a timeout gives ``status="timeout"`` (the worker
    is killed and replaced), an exception or a crashed worker gives ``status="error"``.
    """
    return get_pool().call(fn, args, timeout_s)


def _forget_inherited_forkserver() -> None:
    """Make the forked child start a fork server of its own instead of using the parent's.

    The standard library keeps the server's pid in module state; in a forked child that pid is
    not the child's own, and the next worker start fails with ECHILD. Resetting the state (the
    child's copy of the liveness pipe is closed; the parent's copy keeps the server running)
    makes ``ensure_running`` start a fresh server. Private attributes: guarded, best effort.
    """
    try:
        from multiprocessing import forkserver

        server = getattr(forkserver, "_forkserver", None)
        if server is None or getattr(server, "_forkserver_pid", None) is None:
            return
        fd = server._forkserver_alive_fd
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        server._forkserver_alive_fd = None
        server._forkserver_pid = None
        server._forkserver_address = None
        server._inherited_fds = None
        server._lock = threading.Lock()
    except Exception:  # noqa: BLE001 - the pool then reports "could not start worker" as data
        pass


def _after_fork_in_child() -> None:
    global _pool, _pool_lock
    _pool_lock = threading.Lock()
    _forget_inherited_forkserver()
    if _pool is not None:
        _pool.abandon()
        _pool = None


def _shutdown_at_exit() -> None:
    if _pool is not None:
        _pool.shutdown()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_shutdown_at_exit)
