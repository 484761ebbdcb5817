"""`mathlens import`: make a run from outputs another evaluation tool already wrote.

A thin layer over `mathlens.runs.importing.importer.import_run` (formats, matching and limits are
described there and in docs/importing.md); this module parses the options and prints what was
imported and which rows matched no question.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import typer

from mathlens.cli.common import JSON_OPTION, console, emit_json, escape, user_errors
from mathlens.errors import UserError
from mathlens.items.loaders import ITEM_FORMATS
from mathlens.runs.importing.provenance import ImportedFrom, ImportFormat

if TYPE_CHECKING:
    from mathlens.cli.summary import SourceAudit

IMPORT_FORMATS: tuple[str, ...] = get_args(ImportFormat)

#: unmatched rows printed one by one (all are in the manifest's list, up to its own cap)
SHOWN_UNMATCHED = 20


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        name, sep, key = value.partition("=")
        if not sep or not name.strip() or not key.strip():
            raise UserError(f"{option} takes FIELD=KEY (not {value!r})")
        if name.strip() in out:
            raise UserError(f"{option} names the field {name.strip()!r} twice")
        out[name.strip()] = key.strip()
    return out


@user_errors
def import_(
    source: Path = typer.Argument(..., help="The file to import: an Inspect log (.eval/.json), lm-eval samples "
                                  "(samples_*.jsonl, or JSON per task), JSONL, CSV or JSON records, the "
                                  "math-evaluation-harness layout, or OpenAI batch output."),
    items: list[str] = typer.Option(None, "--items", help="The questions: a built-in exam name or an item file "
                                    "(as `mathlens run` takes them); repeatable. Without it the questions, gold "
                                    "answers and ids are read from the source."),
    out: Path = typer.Option(..., "--out", help="The run directory to create (must not exist, or be empty)."),
    fmt: str = typer.Option("auto", "--format", help="auto|" + "|".join(IMPORT_FORMATS)),
    field_map: list[str] = typer.Option(None, "--map", "-F", help="Source key of a field: -F question=prompt "
                                        "-F response=output -F id=qid -F response=code[*] (JSONL/CSV/JSON records; "
                                        "lm-eval: question)."),
    items_format: str = typer.Option("auto", "--items-format", help="Format of the item files: "
                                     + "|".join(ITEM_FORMATS)),
    items_field: list[str] = typer.Option(None, "--items-field", help="Item file mapping field=key (as `run "
                                          "--field`)."),
    model: str = typer.Option(None, "--model", "-m", help="The model's name (else the source's)."),
    configuration: str = typer.Option(None, "--configuration", help="Configuration name for every record "
                                      "(else the source's, else baseline)."),
    match: str = typer.Option("auto", "--match", help="auto (id, else question text) | id | text"),
    reader: str = typer.Option("auto", "--reader", help="Inspect logs: auto | inspect_ai | mathlens "
                               "(the built-in reader)."),
    requests: Path = typer.Option(None, "--requests", help="OpenAI batch: the batch input file (the messages)."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
    as_json: bool = JSON_OPTION,
) -> None:
    """Import another tool's outputs (Inspect, lm-eval, JSONL/CSV/JSON, OpenAI batch) as a run; no model calls."""
    from mathlens.runs.importing.importer import ImportRequest, import_run
    from mathlens.runs.records import ItemSource

    if match not in ("auto", "id", "text"):
        raise UserError(f"--match must be auto, id or text (not {match!r})")
    if reader not in ("auto", "inspect_ai", "mathlens"):
        raise UserError(f"--reader must be auto, inspect_ai or mathlens (not {reader!r})")
    if items_format not in ITEM_FORMATS:
        raise UserError(f"--items-format must be one of {', '.join(ITEM_FORMATS)} (not {items_format!r})")
    if reader == "inspect_ai":
        from mathlens.runs.importing.inspect_log import inspect_available

        if not inspect_available():
            raise UserError("--reader inspect_ai needs the inspect-ai package (pip install 'mathlens[interop]')")
    item_map = _pairs(items_field, "--items-field") or None
    request = ImportRequest(
        source=source, items=[ItemSource(source=s, format=items_format, mapping=item_map) for s in items or []],
        out=out, fmt=fmt, mapping=_pairs(field_map, "-F"), model=model, configuration=configuration,
        match=match, reader=reader, requests=requests)  # type: ignore[arg-type]
    result = import_run(request)
    from mathlens.cli.summary import print_summary, run_summary
    from mathlens.runs.store import RunStore

    doc = run_summary(RunStore(result.root))
    if as_json:
        emit_json(doc)
        return
    if not quiet:
        print_summary(doc)
    print_imported(result.imported)


def print_imported(imp: ImportedFrom, shown: int = SHOWN_UNMATCHED) -> None:
    """What an import read and matched, and the rows it left out (to stderr)."""
    matched = (f"matched {imp.matched_by_id} by id and {imp.matched_by_text} by question text, {imp.unmatched} "
               "unmatched" if imp.items_from == "items" else "questions read from the source")
    console.print(f"[bold]imported[/] {escape(imp.source)} ({escape(imp.format)}, read by {escape(imp.reader)}): "
                  f"{imp.rows} rows, {imp.records} records ({imp.errors} errors, {imp.scored} with the source's own "
                  f"verdicts), {matched}", soft_wrap=True)
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
