"""`mathlens import`: make a run from outputs another evaluation tool already wrote.

A thin layer over `mathlens.runs.importing.importer.import_run` (formats, matching and limits are
described there and in docs/importing.md); this module parses the options and prints what was
imported and which rows matched no question.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, console, emit_json, escape, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.errors import UserError
from mathlens.flags import FlagValues
from mathlens.runs.importing.options import ImportOptions
from mathlens.runs.importing.provenance import ImportedFrom

if TYPE_CHECKING:
    from mathlens.cli.summary import SourceAudit

#: unmatched rows printed one by one (all are in the manifest's list, up to its own cap)
SHOWN_UNMATCHED = 20


@user_errors
@with_model_options(ImportOptions)
def import_(
    source: Path = typer.Argument(..., help="The file to import: an Inspect log (.eval/.json), lm-eval samples "
                                  "(samples_*.jsonl, or JSON per task), JSONL, CSV or JSON records, the "
                                  "math-evaluation-harness layout, or OpenAI batch output."),
    out: Path = typer.Option(..., "--out", help="The run directory to create (must not exist, or be empty)."),
    quiet: bool = QUIET_OPTION,
    as_json: bool = JSON_OPTION,
    flags: FlagValues = NO_FLAGS,
) -> None:
    """Import another tool's outputs as a run (no model calls).

    Reads Inspect and lm-eval logs, JSONL, CSV and JSON files, and OpenAI batch outputs."""
    from mathlens.runs.importing.importer import import_run

    options = options_from(ImportOptions, flags)
    if options.reader == "inspect_ai":
        from mathlens.runs.importing.inspect_log import inspect_available

        if not inspect_available():
            raise UserError("--reader inspect_ai needs the inspect-ai package (pip install 'mathlens[interop]')")
    result = import_run(options.request(source, out))
    from mathlens.cli.summary import print_summary, run_summary
    from mathlens.runs.store import RunStore

    doc = run_summary(RunStore(result.root))
    if as_json:
        emit_json(doc)
        return
    if not quiet:
        print_summary(doc)
    print_imported(result.imported, quiet=quiet)


def print_imported(imp: ImportedFrom, shown: int = SHOWN_UNMATCHED, *, quiet: bool = False) -> None:
    """What an import read and matched, and the rows it left out (to stderr); with `quiet` only the
    warnings (a partial log, unmatched rows)."""
    matched = (f"matched {imp.matched_by_id} by id and {imp.matched_by_text} by question text, {imp.unmatched} "
               "unmatched" if imp.items_from == "items" else "questions read from the source")
    if not quiet:
        console.print(f"[bold]imported[/] {escape(imp.source)} ({escape(imp.format)}, read by {escape(imp.reader)}): "
                      f"{imp.rows} rows, {imp.records} records ({imp.errors} errors, {imp.scored} with the source's "
                      f"own verdicts), {matched}", soft_wrap=True)
    if imp.partial is not None:
        planned = f" of the {imp.planned} samples it planned" if imp.planned is not None else ""
        console.print(f"  [yellow]partial[/]: the evaluation ended with status {escape(imp.partial)!r}; the log holds "
                      f"{imp.rows}{planned}", soft_wrap=True)
    for row in imp.unmatched_rows[:shown]:
        what = f" id {row.id!r}" if row.id is not None else ""
        console.print(f"  [yellow]unmatched[/] {escape(row.where)}{escape(what)}: {escape(row.reason)}",
                      soft_wrap=True)
    rest = imp.unmatched - min(shown, len(imp.unmatched_rows))
    if rest > 0:
        console.print(f"  … and {rest} more unmatched rows (listed in manifest.json → imported.unmatched_rows, "
                      "and in --json output)", soft_wrap=True)


#: disagreements `mathlens show` prints one by one (all are in --json and the report)
SHOWN_DISAGREEMENTS = 50


def print_source_agreement(audit: SourceAudit, shown: int = SHOWN_DISAGREEMENTS) -> None:
    """The scorer audit of an imported run: a line per scorer, then the disagreements."""
    for row in audit.rows:
        console.print(f"[bold]scorer audit[/] {escape(row.model)} · {escape(row.configuration)} · source scorer "
                      f"{escape(row.scorer)}: {row.compared} compared, agreement {row.agreement.format(3)}, "
                      f"kappa {row.kappa.format(3)}; {row.source_only} correct only for the source, "
                      f"{row.mathlens_only} only for mathlens; {row.left_out_total} left out", soft_wrap=True)
    listed = audit.disagreements
    for e in listed[:shown]:
        ref = e.record
        source = "correct" if e.source_correct else "incorrect"
        mine = "correct" if e.mathlens_correct else "incorrect"
        console.print(f"  [yellow]disagree[/] {escape(ref.exam_id)}/{escape(ref.question_id)} repeat {ref.repeat} "
                      f"({escape(e.scorer)}): source {source} ({escape(_short(e.source_answer))}), mathlens {mine} "
                      f"({escape(_short(e.mathlens_answer))}, {escape(e.mathlens_status)}), reference "
                      f"{escape(_short(e.reference))}", soft_wrap=True)
    if len(listed) > shown:
        console.print(f"  … and {len(listed) - shown} more disagreements (all in `mathlens show --json` and the "
                      "report)", soft_wrap=True)


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "none"
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def register(app: typer.Typer) -> None:
    app.command("import")(import_)


__all__: list[Any] = ["import_", "print_imported", "print_source_agreement", "register"]
