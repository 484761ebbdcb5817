"""The progress of `mathlens run`: a bar on a terminal, plain lines in a log, replica counters.

The bar itself (`mathlens.cli.live`) is Rich's and is imported only when one is shown: a run in a
log, or with `-q`, loads no Rich at all."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from mathlens.models.admission import ReplicaStats
from mathlens.runs.records import RunRecord

if TYPE_CHECKING:
    from mathlens.cli.live import ProgressWithReplicas


def replica_line(replicas: dict[str, list[ReplicaStats]]) -> str:
    return "; ".join(f"{r.url} {r.state} {r.requests} req {r.errors} err limit {r.limit}"
                     for stats in replicas.values() for r in stats)


class Bar:
    """Progress fed by the runner's callbacks: done/total, rate, ETA, tokens/s, errors.

    On a terminal it is a rich progress bar (with a table of replica counters under it when a
    model is served by a pool). When stderr is not a terminal (a log file, CI) and `lines` is set,
    it prints one plain line every `LINE_EVERY` records or `LINE_SECONDS` seconds, whichever comes
    first, so a log shows the run is alive, and a line of replica counters after it.
    """

    LINE_EVERY = 5
    LINE_SECONDS = 60.0

    def __init__(self, enabled: bool, lines: bool = False) -> None:
        self.enabled = enabled
        self.lines = lines and not enabled
        self.total = 0
        self.done = 0
        self.last_line = time.perf_counter()
        self.replicas: dict[str, list[ReplicaStats]] = {}
        self.bar: ProgressWithReplicas | None = None
        if enabled:
            from mathlens.cli.live import live_bar

            self.bar = live_bar()
        self.task: Any = None
        self.start = time.perf_counter()
        self.tokens = 0
        self.errors = 0
        self.count = 0

    def on_start(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        if self.bar is not None:
            self.bar.start()
            self.task = self.bar.add_task("requests", total=total, completed=done, rate="", tps="0", errors=0)
        if self.lines:
            print(f"[run] {done}/{total} requests done, {total - done} to send", file=sys.stderr, flush=True)

    def on_record(self, rec: RunRecord) -> None:
        self.count += 1
        self.tokens += rec.usage.completion_tokens if not rec.cached else 0
        self.errors += rec.status == "error"
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, rate=f"{self.count / elapsed:.2f} req/s",
                            tps=f"{self.tokens / elapsed:.1f}", errors=self.errors)
        self.done += 1
        now = time.perf_counter()
        if self.lines and (self.count % self.LINE_EVERY == 0 or self.done == self.total
                           or now - self.last_line >= self.LINE_SECONDS):
            self.last_line = now
            print(f"[run] {self.done}/{self.total} requests, {self.errors} errors, "
                  f"{self.tokens / elapsed:.1f} tok/s, {elapsed:.0f} s elapsed", file=sys.stderr, flush=True)
            if self.replicas:
                print(f"[run] replicas: {replica_line(self.replicas)}", file=sys.stderr, flush=True)

    def on_replicas(self, spec: str, stats: list[ReplicaStats]) -> None:
        self.replicas[spec] = stats
        if self.bar is not None:
            self.bar.replicas = self.replicas

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
