"""`mathlens report` (write one self-contained HTML report) and `mathlens view` (serve runs locally)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, user_errors
from mathlens.errors import UserError
from mathlens.report import write_report
from mathlens.report.context import ReportOptions


def _options(title: str | None, only: str | None, complexity: float | None, sensitivity: float) -> ReportOptions:
    sections = tuple(s.strip() for s in only.split(",") if s.strip()) if only else None
    return ReportOptions(title=title, sections=sections, complexity_threshold=complexity,
                         sensitivity_threshold=sensitivity)


def _export_tables(runs: list[Path], out: Path | None, formats_text: str, as_json: bool, quiet: bool) -> None:
    """`report RUN --tables FORMAT`: one file per publication table plus index.json in a folder."""
    from mathlens.report.export import export_tables, parse_formats
    from mathlens.report.loader import load_run

    formats = parse_formats(formats_text)
    if len(runs) != 1:
        raise UserError("--tables exports the tables of one run; name one run directory")
    folder = out or runs[0] / "tables"
    index = export_tables(load_run(runs[0]), folder, formats)
    if as_json:
        emit_json({"out": str(folder), **index.model_dump(mode="json")})
        return
    files = sum(len(t.files) for t in index.tables)
    if not quiet:
        console.print(f"[bold]tables:[/] {escape(folder)}  ({len(index.tables)} tables, {files} files, index.json)")
        by_reason: dict[str, list[str]] = {}
        for s in index.skipped:
            by_reason.setdefault(s.reason, []).append(s.id)
        for reason, ids in by_reason.items():
            console.print(f"not exported: {escape(', '.join(ids))} ({escape(reason)})", highlight=False)
    for note in index.notes:  # warnings: printed with --quiet too
        console.print(f"note: {escape(note)}", highlight=False)


@user_errors
def report(
    runs: list[Path] = typer.Argument(..., help="One or more run directories (several are compared)."),
    out: Path = typer.Option(None, "--out", "-o", help="HTML file [RUN/report.html, or ./report.html for several]; "
                             "with --tables, a folder [RUN/tables]."),
    title: str = typer.Option(None, "--title", help="Page title."),
    only: str = typer.Option(None, "--sections", help="Comma-separated section ids to include (default: all)."),
    complexity: float = typer.Option(None, "--complexity-threshold", min=0, max=1_000_000,
                                     help="Flag complexity above this (default: the "
                                     "threshold of the flow analysis' depth definition: 20 chars, 7.7 tokens, "
                                     "3.4 tree)."),
    sensitivity: float = typer.Option(0.5, "--sensitivity-threshold", min=0, max=1,
                                      help="Flag phrase sensitivity above this."),
    tables: str = typer.Option(None, "--tables", help="Instead of the HTML page, export every result table as "
                               "latex, markdown or csv (comma-separated for several): one file per table and "
                               "index.json in the --out folder."),
    as_json: bool = JSON_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Write one self-contained HTML report of runs.

    It holds everything the runs and their analyses found and opens offline."""
    if not runs:
        raise UserError("name at least one run directory")
    if tables is not None:
        _export_tables(runs, out, tables, as_json, quiet)
        return
    target = out or (runs[0] / "report.html" if len(runs) == 1 else Path("report.html"))
    rep = write_report(runs, target, _options(title, only, complexity, sensitivity))
    doc = {"out": str(target), **rep.summary()}
    if as_json:
        emit_json(doc)
        return
    if not quiet:
        console.print(f"[bold]report:[/] {escape(target)}  ({len(rep.sections)} sections, "
                      f"{len(rep.questions)} questions)")
        if rep.skipped:
            console.print("not shown: " + ", ".join(f"{i} ({why})" for i, why in rep.skipped), highlight=False)
    # warnings (e.g. an analysis file from an older version, named with the version expected): printed
    # with --quiet too
    for note in rep.notes:
        console.print(f"note: {escape(note)}", highlight=False)


@user_errors
def view(
    runs_dir: Path = typer.Argument(Path("runs"), help="A folder of run directories, or one run."),
    port: int = typer.Option(8765, "--port", "-p", help="Port on 127.0.0.1 (0: any free port)."),
    lifetime: float = typer.Option(None, "--lifetime", help="Stop after this many seconds (default: until Ctrl-C)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Serve the runs and their reports on 127.0.0.1.

    An index of runs and each run's report on http://127.0.0.1:PORT/ (local only)."""
    from pydantic import ValidationError

    from mathlens.flags import field_range
    from mathlens.report.server import ViewOptions, ViewServer, ViewState, find_runs, serve

    try:
        options = ViewOptions(port=port, lifetime=lifetime)
    except ValidationError as exc:
        err = exc.errors()[0]
        allowed = field_range(ViewOptions.model_fields[str(err["loc"][0])])
        raise UserError(f"--{err['loc'][0]} {err.get('input')}: out of range (allowed: {allowed})" if allowed
                        else f"--{err['loc'][0]} {err.get('input')!r}: {err['msg'].lower()}") from None
    if not runs_dir.is_dir():
        raise UserError(f"{runs_dir} is not a folder")
    try:
        server = ViewServer(ViewState(runs_dir), options=options)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
    names = sorted(find_runs(runs_dir))
    if as_json:
        emit_json({"url": server.url, "runs": names, "lifetime_s": lifetime})
    else:
        console.print(f"serving {len(names)} run(s) from {escape(runs_dir)} at [bold]{server.url}[/] (Ctrl-C stops)")
    with contextlib.suppress(KeyboardInterrupt):
        serve(server, lifetime)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("view")(view)
