"""Where the per-record work of an analysis runs: a local thread pool, or tasks on a Ray cluster.

An analyzer hands its per-record (or per-group) function and a stream of items to
`Executor.map(fn, items)` and gets the results back *in input order*, one at a time, so it can
write them to its document as they come. Items are grouped into batches (one Ray task or one
thread job per batch, to amortise the round trip), and at most `in_flight` batches are submitted
and not yet consumed: reading stays ahead of the workers by a bounded amount, so memory does not
grow with the run whatever its size.

- `LocalExecutor` (`--executor local`, the default): a `ThreadPoolExecutor` of `workers` threads.
  SymPy work is bounded by `mathlens.analyze.verify.budget`, whose killable worker processes are
  shared by the threads (one per thread busy at a time), so threads give parallelism here.
- `RayExecutor` (`--executor ray`): each batch is one Ray task (`num_cpus=1`). With `address`
  (``ray://HOST:PORT``, ``HOST:PORT`` or ``auto``) it joins that cluster; without, it starts a
  private local one of `workers` CPUs with a small object store and shuts it down on `close`.
  The function and the items are pickled to the workers, so the function must be importable at
  module top level (a module-level function, or an instance of a module-level frozen dataclass)
  and each item must carry what the work needs (a record and its question text, never the store):
  the driver reads the run directory and ships the records, so workers need no access to it.
  The time and memory budget of the symbolic checks still holds: the budget's worker processes
  are started inside each Ray worker.

Results do not depend on the executor: the same function sees the same items and the results are
put back in input order. `ExecutorOptions` is the typed form of the command-line flags.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from mathlens.errors import UserError

T = TypeVar("T")
R = TypeVar("R")

ExecutorKind = Literal["local", "ray"]
#: items per batch when neither the analyzer nor the options say
DEFAULT_BATCH = 16
RAY_EXTRA_HINT = "install the optional extra: pip install 'mathlens[ray]' (scripts/setup.sh installs it)"


class ExecutorOptions(BaseModel):
    """How `mathlens analyze` spreads per-record work (`--executor`, `--address`, `--workers`, `--batch`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ExecutorKind = "local"
    #: Ray cluster to join (``ray://HOST:PORT``, ``HOST:PORT`` or ``auto``); None starts a local one
    address: str | None = Field(None, max_length=500)
    #: local: threads (None: the analyzer's own default); Ray without address: CPUs of the local cluster
    workers: int | None = Field(None, ge=1, le=1024)
    #: items per batch (one task each); None: the analyzer's choice
    batch: int | None = Field(None, ge=1, le=100_000)
    #: batches submitted and not yet consumed; None: twice the workers
    in_flight: int | None = Field(None, ge=1, le=10_000)
    #: object store of a local Ray cluster, MB (ignored when joining one)
    object_store_mb: int = Field(200, ge=80, le=1_000_000)


class Executor(Protocol):
    """Runs `fn` over items in batches and yields the results in input order."""

    kind: ExecutorKind
    #: how many batches run at once
    workers: int

    def map(self, fn: Callable[[T], R], items: Iterable[T], *, batch: int | None = None) -> Iterator[R]:
        """`fn(item)` for every item, in input order, with a bounded number of batches in flight."""
        ...

    def close(self) -> None:
        """Release the threads or the Ray connection (a local Ray cluster is shut down)."""
        ...


def run_batch(fn: Callable[[T], R], items: list[T]) -> list[R]:
    """`fn` over one batch (what a thread job or a Ray task runs)."""
    return [fn(item) for item in items]


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def _ordered(submit: Callable[[list[T]], Any], wait: Callable[[Any], list[R]], items: Iterable[T],
             size: int, in_flight: int) -> Iterator[R]:
    """Submit batches, keeping at most `in_flight` pending, and yield results in order."""
    pending: deque[Any] = deque()
    for batch in _batches(items, size):
        if len(pending) >= in_flight:
            yield from wait(pending.popleft())
        pending.append(submit(batch))
    while pending:
        yield from wait(pending.popleft())


class LocalExecutor:
    """Batches on a thread pool of `workers` threads (today's behaviour of the flow analysis)."""

    kind: ExecutorKind = "local"

    def __init__(self, workers: int = 2, *, batch: int | None = None, in_flight: int | None = None) -> None:
        self.workers = workers
        self.batch = batch
        self.in_flight = in_flight or 2 * workers
        self._pool: ThreadPoolExecutor | None = None

    def map(self, fn: Callable[[T], R], items: Iterable[T], *, batch: int | None = None) -> Iterator[R]:
        size = self.batch or batch or DEFAULT_BATCH
        if self.workers == 1:  # no thread at all: tracebacks and profiles stay simple
            for chunk in _batches(items, size):
                yield from run_batch(fn, chunk)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="mathlens-analyze")
        pool = self._pool

        def submit(chunk: list[T]) -> Future[list[R]]:
            return pool.submit(run_batch, fn, chunk)

        def wait(future: Future[list[R]]) -> list[R]:
            return future.result()

        yield from _ordered(submit, wait, items, size, self.in_flight)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def import_ray() -> Any:
    """The `ray` module, or a `UserError` naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise UserError(f"--executor ray needs Ray, which is not installed: {RAY_EXTRA_HINT}") from None
    return ray


def _check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """Fail fast, with a clear error, when nothing listens at a ``HOST:PORT`` or ``ray://HOST:PORT``
    address (Ray itself waits minutes for an absent cluster). ``auto`` is left to Ray."""
    import socket

    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise UserError(f"cannot join the Ray cluster at {address}: nothing answers there "
                        f"({exc.strerror or exc}); start it with `ray start --head --port={port}`") from None


def token_auth(address: str) -> None:
    """Let the connection to a cluster joined by address carry the cluster's token.

    Recent Ray releases (2.5x on) turn token authentication on by default, and a driver sends the
    token only when ``RAY_AUTH_MODE=token`` is set on its side. Without it, joining at the GCS
    address fails with "Failed to connect to Ray cluster at <the node's own IP>" (the server's
    refusal, an invalid token, shows only in Ray's log), and a Ray Client (``ray://``) connection
    times out after half a minute with no reason given. When the user has not chosen a mode and a
    token is at hand (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or Ray's default file
    ``~/.ray/auth_token``), token mode is set for this process. A cluster without authentication
    ignores the token, so this never breaks a connection that would have worked. (Ray itself sends
    a token unasked only to a cluster it finds on this machine; mathlens also sends it to the
    address the user names, the cluster they asked to join. `RAY_AUTH_MODE=disabled` opts out.)

    Ray reads its settings once, when it is imported; if it is loaded, they are read again, as Ray
    does when it turns token mode on for a cluster it starts.
    """
    if "RAY_AUTH_MODE" in os.environ:
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH") or \
            (Path.home() / ".ray" / "auth_token").is_file():
        os.environ["RAY_AUTH_MODE"] = "token"
        config = getattr(sys.modules.get("ray._raylet"), "Config", None)
        if config is not None and hasattr(config, "initialize"):
            config.initialize("")


CLIENT_ATTEMPTS = 3


def _join(ray: Any, address: str, kwargs: dict[str, Any]) -> None:
    """Join the cluster at `address`. A Ray Client connection is tried up to `CLIENT_ATTEMPTS` times
    when the server reports a failed initialisation: the cluster starts one server process per client
    connection, and on a loaded head node that process can die while starting, a failure of the one
    attempt rather than of the cluster. Every other error is raised at once."""
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            ray.init(address=address, **kwargs)
            return
        except ConnectionError as exc:
            transient = address.startswith("ray://") and "Initialization failure from server" in str(exc)
            if not transient or attempt == CLIENT_ATTEMPTS:
                raise
            time.sleep(2.0 * attempt)


class RayExecutor:
    """Batches as Ray tasks on a cluster (joined by address, or a private local one)."""

    kind: ExecutorKind = "ray"

    def __init__(self, options: ExecutorOptions) -> None:
        ray = import_ray()
        self._ray = ray
        self.batch = options.batch
        self._owns = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False}
            if options.address:
                _check_reachable(options.address)
                token_auth(options.address)
            try:
                if options.address:
                    _join(ray, options.address, kwargs)
                else:
                    ray.init(num_cpus=options.workers or os.cpu_count() or 1,
                             object_store_memory=options.object_store_mb * 1024 * 1024, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = options.address or "a local cluster"
                raise UserError(f"cannot start or join the Ray cluster ({where}): {exc}") from None
            self._owns = True
        cpus = int(ray.cluster_resources().get("CPU", 1) or 1)
        self.workers = max(1, min(cpus, options.workers or cpus))
        self.in_flight = options.in_flight or 2 * self.workers
        self._task = ray.remote(num_cpus=1, max_retries=1)(run_batch)

    def map(self, fn: Callable[[T], R], items: Iterable[T], *, batch: int | None = None) -> Iterator[R]:
        ray = self._ray
        size = self.batch or batch or DEFAULT_BATCH
        fn_ref = ray.put(fn)  # pickled once, not once per task

        def submit(chunk: list[T]) -> Any:
            return self._task.remote(fn_ref, chunk)

        def wait(ref: Any) -> list[R]:
            result: list[R] = ray.get(ref)
            return result

        yield from _ordered(submit, wait, items, size, self.in_flight)

    def close(self) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns = False


def open_executor(options: ExecutorOptions | None = None, *, default_workers: int = 2) -> Executor:
    """The executor `options` ask for (`LocalExecutor` with `default_workers` threads by default)."""
    options = options or ExecutorOptions()
    if options.kind == "ray":
        return RayExecutor(options)
    if options.address:
        raise UserError("--address names a Ray cluster: use it with --executor ray")
    return LocalExecutor(options.workers or default_workers, batch=options.batch, in_flight=options.in_flight)
