"""`mathlens import`: make a run from outputs another evaluation tool already wrote.

A thin layer over `mathlens.runs.importing.importer.import_run` (formats, matching and limits are
described there and in docs/importing.md); this module parses the options and prints what was
imported and which rows matched no question.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from mathlens.cli.common import JSON_OPTION, QUIET_OPTION, emit_json, user_errors
from mathlens.cli.options import NO_FLAGS, options_from, with_model_options
from mathlens.errors import UserError
from mathlens.flags import FlagValues
from mathlens.runs.importing.options import ImportOptions


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
    from mathlens.cli.summary import print_imported, print_summary, run_summary
    from mathlens.runs.store import RunStore

    doc = run_summary(RunStore(result.root))
    if as_json:
        emit_json(doc)
        return
    if not quiet:
        print_summary(doc)
    print_imported(result.imported, quiet=quiet)


def register(app: typer.Typer) -> None:
    app.command("import")(import_)


__all__: list[Any] = ["import_", "register"]
