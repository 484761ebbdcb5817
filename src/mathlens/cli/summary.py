"""What `mathlens run`, `show`, `import` and `tutor run` print about a run: its counts
(`mathlens.analyze.overview`, which never analyses every response again), each analysis with the
records it covers, its grading tables, and what this invocation did. Kept light: `show` loads
neither SymPy nor NumPy nor the grading code through it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from mathlens.analyze.grading.answer_records import ANSWERS, AccuracySummary, correct_lines
from mathlens.analyze.grading.tables import GradeTables
from mathlens.analyze.overview import RunOverview
from mathlens.analyze.quality import flags_raised
from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT, ScorerAgreement, SourceAgreementEntry
from mathlens.cli.common import console, escape
from mathlens.models.admission import ReplicaStats
from mathlens.rounding import percent
from mathlens.runs.records import ImportedFrom
from mathlens.runs.store import RunStore

if TYPE_CHECKING:
    from mathlens.runs.runner import RunResult


class Invocation(BaseModel):
    """What one `mathlens run` (or `--resume`) did: records written, skipped, calls, cache hits."""

    written: int
    skipped: int
    errors: int
    model_calls: int
    cache_hits: int
    replicas: dict[str, list[ReplicaStats]] = Field(default_factory=dict)


class SourceAudit(BaseModel):
    """The scorer audit of an imported run: a row per scorer, and every disagreement."""

    rows: list[ScorerAgreement]
    disagreements: list[SourceAgreementEntry]


class RunSummary(RunOverview):
    """The document `mathlens run`, `show`, `import` and `tutor run` print (`--json`): the run's
    counts (`mathlens.analyze.overview`), its Tables 6 and 7 when graded, and what this invocation did."""

    grade_tables: GradeTables | None = None
    #: the final answers the checker found correct, per model, configuration and variant, as the
    #: answers analysis stored them (empty before it has run)
    final_answers: list[AccuracySummary] = Field(default_factory=list)
    this_invocation: Invocation | None = None
    imported: ImportedFrom | None = None
    #: an imported run's scorer audit: the source's verdicts against mathlens's (`source-agreement`)
    source_agreement: SourceAudit | None = None


def run_summary(store: RunStore, result: RunResult | None = None) -> RunSummary:
    """The counts of the run in `store`, with what `result` (this invocation) did."""
    from mathlens.analyze.grading.tables import GRADE_TABLES
    from mathlens.analyze.overview import run_overview

    tables = GRADE_TABLES.read(store.root)
    answers = ANSWERS.read(store.root)
    invocation = None
    if result is not None:
        invocation = Invocation(written=result.written, skipped=result.skipped, errors=result.errors,
                                model_calls=result.model_calls, cache_hits=result.cache_hits,
                                replicas=dict(result.replicas or {}))
    imported = store.manifest().imported
    audit = None
    if imported is not None:
        found = SOURCE_AGREEMENT.read(store.root)
        if found is not None:
            audit = SourceAudit(rows=found.summary.rows, disagreements=[
                e for e in SOURCE_AGREEMENT.entries(store.root) if e.agree is False])
    return RunSummary(**dict(run_overview(store)), grade_tables=tables.summary if tables is not None else None,
                      final_answers=answers.summary.summary if answers is not None else [],
                      this_invocation=invocation, imported=imported, source_agreement=audit)


def print_summary(doc: RunSummary, *, footer: bool = True) -> None:
    """Print a run's summary as a table, then what is not up to date, ending with the
    degenerate-output warning if any. `footer` adds the run directory and the `show` command.
    (Rich is imported by the printing functions: the summary of `--json` never loads it.)"""
    from rich.table import Table

    table = Table(title=f"run {doc.run_id}")
    for col in ("model", "configuration", "records", "ok", "error", "truncated", "cached", "completion tokens",
                "degenerate", "quality flags"):
        table.add_column(col, justify="left" if col in ("model", "configuration", "quality flags") else "right")
    for g in doc.groups:
        share = g.degenerate_share
        known = g.degenerate is not None  # unknown per group when the flags come from a sample
        degenerate = f"{g.degenerate} ({percent(share)})" if known and share is not None else "–"
        table.add_row(g.model, g.configuration, str(g.records), str(g.ok), str(g.error), str(g.truncated),
                      str(g.cached), str(g.completion_tokens), degenerate,
                      (flags_raised(g.quality) or "none") if known else "–")
    console.print(table)
    for line in correct_lines(doc.final_answers):
        console.print(escape(line), highlight=False, soft_wrap=True)
    if doc.quality.note:
        console.print(f"quality flags: {escape(doc.quality.note)}", highlight=False, soft_wrap=True)
    print_replicas(doc)
    inv = doc.this_invocation
    if inv is not None:
        console.print(f"this invocation: {inv.written} new records, {inv.skipped} already done, "
                      f"{inv.model_calls} model calls, {inv.cache_hits} cache hits, {inv.errors} errors")
        if inv.replicas:
            from mathlens.cli.live import replica_table  # (with the progress bar's imports)

            console.print(replica_table(inv.replicas, title="replicas (this invocation)"))
    print_analysis_states(doc)
    if footer:
        console.print(f"[bold]run directory:[/] {escape(doc.run_dir)}\n[bold]summary:[/] mathlens show "
                      f"{escape(doc.run_dir)}")
    print_warning(doc)


def print_analysis_states(doc: RunOverview) -> None:
    """One line per analysis document that does not cover the run's records as they are now."""
    for state in doc.stale:
        label = "unreadable" if state.status == "unreadable" else "stale"
        console.print(f"[yellow]{label}[/] analysis/{escape(state.name)}.jsonl: {escape(state.note)}",
                      highlight=False, soft_wrap=True)


def print_replicas(doc: RunSummary) -> None:
    """The answered records of each replica (a run's records name the replica that answered; cache
    hits name none)."""
    if not doc.replicas:
        return
    from rich.table import Table

    table = Table(title="records by replica")
    for col in ("model", "replica", "records", "ok", "error", "share", "completion tokens"):
        table.add_column(col, justify="left" if col in ("model", "replica") else "right")
    for row in doc.replicas:
        table.add_row(escape(row.model), escape(row.replica), str(row.records), str(row.ok), str(row.error),
                      percent(row.share), str(row.completion_tokens))
    console.print(table)


def print_warning(doc: RunSummary) -> None:
    """Print the document's degenerate-output warning (to stderr), if it has one."""
    if doc.warning:
        console.print(f"[bold yellow]warning:[/] {escape(doc.warning)}", highlight=False, soft_wrap=True)


#: unmatched rows printed one by one (all are in the manifest's list, up to its own cap)
SHOWN_UNMATCHED = 20


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
