"""`mathlens analyze RUN` (every registered analyzer) and `mathlens flow TEXT` (one solution)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, made, out_console, user_errors
from mathlens.errors import UserError

if TYPE_CHECKING:
    from mathlens.analyze.protocol import Line
    from mathlens.cli.consoles import SafeConsole

MAX_INPUT_BYTES = 5_000_000


def _read_text(value: str) -> str:
    """A path's contents when `value` names a file, `-` for stdin, else the value itself."""
    if value == "-":
        import sys

        return sys.stdin.read(MAX_INPUT_BYTES)
    candidate = Path(value)
    try:
        is_file = len(value) < 4096 and "\n" not in value and candidate.is_file()
    except OSError:
        is_file = False
    if is_file:
        if candidate.stat().st_size > MAX_INPUT_BYTES:
            raise UserError(f"{value}: larger than {MAX_INPUT_BYTES} bytes")
        return candidate.read_text(encoding="utf-8", errors="replace")
    return value


#: Options without an analyzer name go to every analyzer that takes them.
SHARED_OPTIONS = {"include_degenerate": ("sensitivity",)}


def analyzer_options(pairs: list[str], names: list[str]) -> dict[str, dict[str, Any]]:
    """`["sensitivity.seed=3", "include_degenerate=true"]` -> options by analyzer name.

    A key without an analyzer name must be one of `SHARED_OPTIONS`; values are JSON where they
    parse as JSON (`true`, `3`, `0.5`), else strings.
    """
    from mathlens.models.registry import parse_options

    out: dict[str, dict[str, Any]] = {}
    for key, value in parse_options(pairs).items():
        target, dot, name = key.rpartition(".")
        if dot:
            if target not in names:
                raise UserError(f"-O {key}: {target!r} is not among the analyzers run ({', '.join(names)})")
            out.setdefault(target, {})[name] = value
        elif key in SHARED_OPTIONS:
            for analyzer in SHARED_OPTIONS[key]:
                if analyzer in names:
                    out.setdefault(analyzer, {})[key] = value
        else:
            raise UserError(f"-O {key}: name the analyzer, as ANALYZER.{key}=VALUE")
    return out


def print_outcome(name: str, lines: Sequence[Line], status: str) -> None:
    """An analyzer's status line, then its lines indented."""
    out_console.print(f"[bold]{name}[/]: {escape(status)}", highlight=False)
    print_lines(out_console, lines, indent=2)


def print_lines(to: SafeConsole, lines: Sequence[Line], indent: int = 0) -> None:
    """An analyzer's printed lines: text as it is, a `Rows` as a table fitted to the terminal."""
    from rich import box
    from rich.padding import Padding
    from rich.table import Table

    from mathlens.cli.fit import fitted

    for line in lines:
        if isinstance(line, str):  # read by the console as its own strings are (control characters escaped)
            text = made(to).render_str(line, markup=False, highlight=False)
            to.print(Padding(text, (0, 0, 0, indent), expand=False))
            continue
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for header in line.headers:
            table.add_column(header, justify="right" if header in line.right else "left")
        for row in line.rows:
            table.add_row(*row)
        shown = fitted(made(to), table, width=made(to).width - indent)
        to.print(Padding(shown, (0, 0, 0, indent), expand=False))


def register(app: typer.Typer) -> None:
    """Add the `analyze` and `flow` commands."""

    @app.command("analyze")
    @user_errors
    def analyze_cmd(
        run: Path = typer.Argument(..., help="run directory (with manifest.json)"),
        only: str = typer.Option("", "--only", help="comma-separated analyzer names (default: every analyzer "
                                                    "that calls no model; `mathlens list analyzers` names them)"),
        option: list[str] = typer.Option(None, "--option", "-O",
                                         help="analyzer option [ANALYZER.]KEY=VALUE, e.g. include_degenerate=true"),
        step_judge: str = typer.Option(None, "--step-judge",
                                       help="judge model for the steps SymPy cannot decide (flow analysis; "
                                            "cached model calls)"),
        judge: str = typer.Option(None, "--judge", help="judge model of judge-based analyzers named in --only "
                                                        "(grades, maple, tutor_scores); default: the run's judge"),
        judge_option: list[str] = typer.Option(None, "--judge-option", "-J",
                                               help="option of the step judge or judge KEY=VALUE (repeatable)"),
        no_cache: bool = typer.Option(False, "--no-cache", help="do not reuse cached judge replies"),
        executor: str = typer.Option("local", "--executor",
                                     help="where per-record work runs: local (threads) or ray (Ray tasks)"),
        address: str = typer.Option(None, "--address",
                                    help="Ray cluster to join: ray://HOST:PORT, HOST:PORT or auto "
                                         "(default: start a local one)"),
        workers: int = typer.Option(None, "--workers", min=1, max=1024,
                                    help="threads (local) or CPUs of the local Ray cluster [2 threads for flow]"),
        batch: int = typer.Option(None, "--batch", min=1, max=100_000, help="records per task (default: per analyzer)"),
        quiet: bool = QUIET_OPTION,
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Run analyzers over a finished run.

        No model is called unless an analyzer needs a judge."""
        from mathlens.analyze.executor import ExecutorOptions
        from mathlens.analyze.protocol import OutcomesDocument
        from mathlens.analyze.registry import get_analyzer, plan, run_analyzers, select
        from mathlens.models.registry import parse_options
        from mathlens.runs.documents import document_states
        from mathlens.runs.store import RunStore

        if not run.is_dir():
            raise UserError(f"{run} is not a directory")
        names = [n for n in only.split(",") if n.strip()] or None
        selected = plan(select(names))
        options = analyzer_options(option or [], selected)
        judge_options = parse_options(judge_option or [])
        if step_judge:
            if "flow" not in selected:
                raise UserError("--step-judge needs the flow analyzer (add it to --only)")
            options.setdefault("flow", {}).update(step_judge=step_judge, step_judge_options=judge_options)
        if executor not in ("local", "ray"):
            raise UserError(f"--executor {executor!r}: choose local or ray")
        placement = ExecutorOptions(kind="ray" if executor == "ray" else "local", address=address or None,
                                    workers=workers, batch=batch)
        outcomes = run_analyzers(RunStore(run), names, options, judge=judge, judge_options=judge_options,
                                 no_cache=no_cache, executor=placement)
        stale = [s for s in document_states(run) if s.stale]  # what this call left out of date
        if json_out:
            emit_json(OutcomesDocument.of(run, outcomes, stale))
            return
        for name, outcome in outcomes.items():
            if quiet and outcome.status != "error":
                continue
            print_outcome(name, get_analyzer(name).lines(outcome), outcome.status)
        for state in stale:  # said even with --quiet: a figure from them describes fewer records
            label = "unreadable" if state.status == "unreadable" else "stale"
            console.print(f"[yellow]{label}[/] analysis/{escape(state.name)}.jsonl: {escape(state.note)}",
                          highlight=False, soft_wrap=True)

    @app.command("flow")
    @user_errors
    def flow_cmd(
        solution: str = typer.Argument(..., help="a file with the solution, '-' for stdin, or the text itself"),
        question: str = typer.Option("", "--question", help="question text or file (its definitions are used)"),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Print the reasoning-flow analysis of one solution."""
        from mathlens.analyze.verify.budget import prestart

        prestart()  # the step-check worker starts while the rest is imported and read
        from mathlens.analyze.flow.report import render_text
        from mathlens.api import flow

        text = _read_text(solution)
        if not text.strip():
            raise UserError("the solution is empty")
        q = _read_text(question) if question else None
        result = flow(text, q)
        if json_out:
            emit_json(result)
        else:
            out_console.print(render_text(result), highlight=False, markup=False)
