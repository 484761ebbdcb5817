"""The live progress bar of `mathlens run` on a terminal, and the table of replica counters it
shows under it (the run summary prints the same table)."""

from __future__ import annotations

from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from mathlens.cli.common import console, escape, made
from mathlens.models.admission import ReplicaStats


def replica_table(replicas: dict[str, list[ReplicaStats]], title: str | None = None) -> Table:
    """Each replica's requests, errors (no answer, 5xx), 429s, current limit and in/out state."""
    table = Table(title=title, box=None, pad_edge=False)
    for col in ("model", "replica", "state", "requests", "ok", "errors", "429s", "in flight", "limit"):
        table.add_column(col, justify="left" if col in ("model", "replica", "state") else "right")
    for spec, stats in replicas.items():
        for r in stats:
            state = {"in": "[green]in[/]", "out": "[red]out[/]", "resting": "[yellow]resting[/]"}[r.state]
            table.add_row(escape(spec), escape(r.url), state, str(r.requests), str(r.ok), str(r.errors),
                          str(r.overloaded), str(r.in_flight), str(r.limit))
    return table


class ProgressWithReplicas(Progress):
    """A rich progress bar with a table of replica counters under it (models served by a pool)."""

    replicas: dict[str, list[ReplicaStats]] = {}  # noqa: RUF012 - replaced per instance by Bar.on_replicas

    def get_renderables(self) -> Any:
        yield from super().get_renderables()
        if self.replicas:
            yield replica_table(self.replicas)


def live_bar() -> ProgressWithReplicas:
    """Done/total, rate, tokens/s, errors, elapsed and remaining time, drawn on stderr."""
    return ProgressWithReplicas(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[tps]} tok/s"),
        TextColumn("[red]{task.fields[errors]} errors"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=made(console),
    )
