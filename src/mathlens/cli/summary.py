"""The summary of a run that `mathlens run`, `import`, `tutor run` and `show` print (and `--json`).

Built from what is already stored, never by analysing every response again:

- record counts per model and configuration, and per replica, come from `mathlens.runs.counts`
  (the record fields only, counted incrementally);
- output-quality flags come from the answers analysis's stored summary when the run has one (with
  a note when it covers fewer or other records than the run holds now); a run not analysed yet
  gets them from its records when it has at most `QUALITY_SAMPLE` responses, else from a spread
  sample of that many, said as such (`mathlens analyze RUN` flags every response);
- each analysis document is listed with its coverage (`mathlens.runs.coverage`): a document that
  covers fewer or other records than the run holds now is named with the command that updates it.

Nothing here imports SymPy or the answer checker; `show` stays fast at any run size.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from mathlens.analyze.grading.tables import GRADE_TABLES, GradeTables
from mathlens.runs.counts import GroupCounts, ReplicaCounts, RunCounts, count_records
from mathlens.runs.documents import DocumentError, DocumentState, document_states
from mathlens.runs.importing.provenance import ImportedFrom
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

#: At most this many responses are flagged when the run has no answers analysis yet.
QUALITY_SAMPLE = 100
#: the answers analysis (its document holds the quality flags)
ANSWERS_NAME = "answers"

QualitySource = Literal["analysis/answers.jsonl", "records", "sample of records", "none"]


class GroupSummary(GroupCounts):
    """One model and configuration: record counts and, when known for all of them, quality counts."""

    #: degenerate responses (None when the quality of every response is not known)
    degenerate: int | None = None
    #: degenerate share of the flagged (ok) responses
    degenerate_share: float | None = None
    #: the count of each quality flag (empty when not known)
    quality: dict[str, int] = Field(default_factory=dict)


class QualitySummary(BaseModel):
    """Where the run's quality counts come from, and the run-level totals."""

    source: QualitySource
    degenerate: int = 0
    #: responses flagged (the sample's size when `source` is a sample)
    responses: int = 0
    #: `flagged`, `degenerate` and the count of each flag over those responses
    counts: dict[str, int] = Field(default_factory=dict)
    warning_share: float
    #: with a sample: the ok responses the run holds
    sampled_from: int | None = None
    #: e.g. the answers analysis covers fewer records than the run holds
    note: str = ""


class Invocation(BaseModel):
    """What one `mathlens run` invocation did."""

    written: int
    skipped: int
    errors: int
    model_calls: int
    cache_hits: int
    replicas: dict[str, list[dict[str, Any]]] | None = None


class RunSummary(BaseModel):
    """Everything `mathlens run/import/show --json` print about a run."""

    run_dir: str
    run_id: str
    total_tasks: int
    finished: bool
    records: int
    groups: list[GroupSummary]
    #: names of the analysis documents present
    analyses: list[str]
    analysis_states: list[DocumentState] = Field(default_factory=list)
    quality: QualitySummary
    warning: str | None = None
    replicas: list[ReplicaCounts] = Field(default_factory=list)
    grade_tables: GradeTables | None = None
    this_invocation: Invocation | None = None
    imported: ImportedFrom | None = None
    #: the scorer audit of an imported run (`mathlens.cli.importing.source_agreement_doc`), for `show`
    source_agreement: dict[str, Any] | None = None

    @property
    def stale(self) -> list[DocumentState]:
        """The analysis documents that do not cover exactly the run's records now."""
        return [a for a in self.analysis_states if a.status != "current"]


def _answers_quality(store: RunStore, groups: dict[tuple[str, str], GroupSummary],
                     state: DocumentState) -> QualitySummary | None:
    """Quality counts from the answers analysis's stored summary (None when it cannot be read)."""
    from mathlens.analyze.grading.answer_records import ANSWERS
    from mathlens.analyze.quality import WARNING_SHARE

    try:
        doc = ANSWERS.read(store.root)
    except DocumentError:
        return None
    if doc is None:
        return None
    totals: dict[str, int] = {}
    for acc in doc.summary.summary:
        g = groups.get((acc.model, acc.configuration))
        if g is None:  # a group the run no longer holds (the records were rewritten)
            continue
        for k, v in acc.quality.items():
            g.quality[k] = g.quality.get(k, 0) + v
            totals[k] = totals.get(k, 0) + v
    for g in groups.values():
        if g.quality:
            g.degenerate = g.quality.get("degenerate", 0)
            flagged = g.quality.get("flagged", 0)
            g.degenerate_share = round(g.degenerate / flagged, 4) if flagged else None
            g.quality = {k: v for k, v in g.quality.items() if k not in ("flagged", "degenerate")}
    note = f"from the answers analysis, which {state.note}" if state.status != "current" else ""
    return QualitySummary(source="analysis/answers.jsonl", degenerate=totals.get("degenerate", 0),
                          responses=totals.get("flagged", 0), counts=totals, warning_share=WARNING_SHARE, note=note)


def _spread_ok_records(path: Path, ok: int, size: int) -> Iterator[RunRecord]:
    """Every ok record when there are at most `QUALITY_SAMPLE`, else that many spread evenly over
    the file by byte offset (each the first ok record at or after its offset)."""
    with path.open("rb") as fh:
        if ok <= QUALITY_SAMPLE:
            for line in fh:
                if line.endswith(b"\n"):
                    rec = RunRecord.model_validate_json(line)
                    if rec.status == "ok":
                        yield rec
            return
        seen: set[int] = set()
        for k in range(QUALITY_SAMPLE):
            fh.seek(k * size // QUALITY_SAMPLE)
            if k:
                fh.readline()  # to the start of the next record
            for _ in range(20):  # the first ok record from here (error records have no response)
                offset = fh.tell()
                line = fh.readline()
                if not line.endswith(b"\n") or offset >= size or offset in seen:
                    break
                seen.add(offset)
                rec = RunRecord.model_validate_json(line)
                if rec.status == "ok":
                    yield rec
                    break


def _records_quality(store: RunStore, groups: dict[tuple[str, str], GroupSummary],
                     counts: RunCounts) -> QualitySummary:
    """Quality flags of the records themselves (all of them, or a spread sample of a large run)."""
    from mathlens.analyze.quality import WARNING_SHARE, flag_counts, record_quality

    sampled = counts.ok > QUALITY_SAMPLE
    by_group: dict[tuple[str, str], list[Any]] = {}
    try:
        for rec in _spread_ok_records(store.records_path, counts.ok, counts.bytes):
            by_group.setdefault((rec.model, rec.configuration), []).append(record_quality(rec))
    except (OSError, ValidationError):
        return QualitySummary(source="none", warning_share=WARNING_SHARE,
                              note="the records could not be read for quality flags")
    total = flag_counts(f for flags in by_group.values() for f in flags)
    if not sampled:
        for key, g in groups.items():
            c = flag_counts(by_group.get(key, []))
            g.degenerate = c["degenerate"]
            g.degenerate_share = round(c["degenerate"] / c["flagged"], 4) if c["flagged"] else None
            g.quality = {k: v for k, v in c.items() if k not in ("flagged", "degenerate")}
    return QualitySummary(source="sample of records" if sampled else "records", degenerate=total["degenerate"],
                          responses=total["flagged"], counts=total, warning_share=WARNING_SHARE,
                          sampled_from=counts.ok if sampled else None,
                          note=(f"from a spread sample of {total['flagged']} of the {counts.ok} "
                                f"responses; `mathlens analyze {store.root}` flags every response")
                          if sampled else "")


def build_summary(store: RunStore, result: Any | None = None, imported: ImportedFrom | None = None) -> RunSummary:
    """The summary of the run in `store` (`result`: a `RunResult` of the invocation that just ran)."""
    from mathlens.analyze.quality import WARNING_SHARE, warning_of

    manifest = store.manifest()
    counts = count_records(store.root, cache=os.access(store.root, os.W_OK))
    groups = {(g.model, g.configuration): GroupSummary(**g.model_dump()) for g in counts.groups}
    states = document_states(store.root)
    answers = next((s for s in states if s.name == ANSWERS_NAME and s.status != "unreadable"), None)
    quality = _answers_quality(store, groups, answers) if answers is not None else None
    if quality is None:
        quality = _records_quality(store, groups, counts)
    warning = warning_of(quality.counts, WARNING_SHARE, sampled_from=quality.sampled_from)
    doc = RunSummary(run_dir=str(store.root), run_id=manifest.run_id, total_tasks=manifest.total_tasks,
                     finished=manifest.finished_at is not None, records=counts.records,
                     groups=list(groups.values()), analyses=[s.name for s in states], analysis_states=states,
                     quality=quality, warning=warning, replicas=counts.replicas,
                     imported=imported if imported is not None else manifest.imported)
    doc.grade_tables = _grade_tables(store)
    if result is not None:
        doc.this_invocation = Invocation(
            written=result.written, skipped=result.skipped, errors=result.errors, model_calls=result.model_calls,
            cache_hits=result.cache_hits,
            replicas={spec: [r.model_dump(mode="json") for r in stats] for spec, stats in result.replicas.items()}
            if result.replicas else None)
    return doc


def _grade_tables(store: RunStore) -> GradeTables | None:
    tables = GRADE_TABLES.read(store.root)
    return tables.summary if tables is not None else None


# -- printing ---------------------------------------------------------------------------------------
def _flag_breakdown(quality: dict[str, int]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in quality.items() if v) or "none"


def print_summary(doc: RunSummary, *, footer: bool = True) -> None:
    """Print the summary as a table (stderr), then its notes, ending with the degenerate-output
    warning if any. `footer` adds the run directory and the `show` command."""
    from rich.table import Table

    from mathlens.cli.common import console, escape

    table = Table(title=f"run {doc.run_id}")
    for col in ("model", "configuration", "records", "ok", "error", "truncated", "cached", "completion tokens",
                "degenerate", "quality flags"):
        table.add_column(col, justify="left" if col in ("model", "configuration", "quality flags") else "right")
    for g in doc.groups:
        share = g.degenerate_share
        degenerate = f"{g.degenerate} ({share:.0%})" if g.degenerate is not None and share is not None else "–"
        flags = _flag_breakdown(g.quality) if g.degenerate is not None else "–"
        table.add_row(g.model, g.configuration, str(g.records), str(g.ok), str(g.error), str(g.truncated),
                      str(g.cached), str(g.completion_tokens), degenerate, flags)
    console.print(table)
    if doc.quality.note:
        console.print(f"quality flags: {escape(doc.quality.note)}", highlight=False, soft_wrap=True)
    elif doc.quality.source == "none":
        console.print("quality flags: none computed", highlight=False)
    print_replicas(doc)
    inv = doc.this_invocation
    if inv is not None:
        console.print(f"this invocation: {inv.written} new records, {inv.skipped} already done, "
                      f"{inv.model_calls} model calls, {inv.cache_hits} cache hits, {inv.errors} errors")
        if inv.replicas:
            from mathlens.cli.run import replica_table
            from mathlens.models.providers.pool import ReplicaStats

            live = {spec: [ReplicaStats.model_validate(r) for r in rows] for spec, rows in inv.replicas.items()}
            console.print(replica_table(live, title="replicas (this invocation)"))
    print_analysis_states(doc)
    if footer:
        console.print(f"[bold]run directory:[/] {escape(doc.run_dir)}\n[bold]summary:[/] mathlens show "
                      f"{escape(doc.run_dir)}")
    print_warning(doc)


def print_analysis_states(doc: RunSummary) -> None:
    """One line per analysis document that does not cover the run's records as they are now."""
    from mathlens.cli.common import console, escape

    for state in doc.stale:
        label = "unreadable" if state.status == "unreadable" else "stale"
        console.print(f"[yellow]{label}[/] analysis/{escape(state.name)}.jsonl: {escape(state.note)}",
                      highlight=False, soft_wrap=True)


def print_replicas(doc: RunSummary) -> None:
    """The answered records of each replica (a run's records name the replica that answered; cache
    hits name none)."""
    from rich.table import Table

    from mathlens.cli.common import console, escape

    if not doc.replicas:
        return
    table = Table(title="records by replica")
    for col in ("model", "replica", "records", "ok", "error", "share", "completion tokens"):
        table.add_column(col, justify="left" if col in ("model", "replica") else "right")
    totals: dict[str, int] = {}
    for row in doc.replicas:
        totals[row.model] = totals.get(row.model, 0) + row.records
    for row in doc.replicas:
        share = row.records / totals[row.model] if totals[row.model] else 0.0
        table.add_row(escape(row.model), escape(row.replica), str(row.records), str(row.ok), str(row.error),
                      f"{share:.0%}", str(row.completion_tokens))
    console.print(table)


def print_warning(doc: RunSummary) -> None:
    """Print the summary's degenerate-output warning (to stderr), if it has one."""
    from mathlens.cli.common import console, escape

    if doc.warning:
        console.print(f"[bold yellow]warning:[/] {escape(doc.warning)}", highlight=False, soft_wrap=True)
