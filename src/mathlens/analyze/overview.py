"""The counts of a run's records: per model and configuration, per replica, and the failed requests.

One producer for what `mathlens run`, `mathlens show`, `mathlens import`, `mathlens tutor run`
and the report's overview print: records, ok/error, truncated, cached, variants, tokens, latency,
reasoning traces, the output-quality flags of each group (degenerate and each flag), and each
analysis document with the records it covers. `warning` is set when more than half of the ok
records are degenerate.

Nothing here analyses every response again, so `show` stays fast at any run size:

- the counts come from the record fields alone (`mathlens.runs.counts`, counted incrementally);
- quality flags come from the answers analysis's stored summary when the run has one (`quality.note`
  says so when it covers fewer or other records than the run holds now); a run not analysed yet
  gets them from its records when it has at most `QUALITY_SAMPLE` responses, else from a spread
  sample of that many (`quality.source` and `quality.sampled_from` say which; the per-group flag
  counts are then unknown, None);
- `analysis_states` lists every document with its coverage (`mathlens.runs.documents.document_states`).

A caller that holds the records and their flags already (the report) passes them and gets them
counted as they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from mathlens.analyze.quality import (
    COUNTED_FLAGS,
    WARNING_SHARE,
    QualityFlags,
    flag_counts,
    flags_raised,
    record_quality,
    warning_of,
)
from mathlens.rounding import percent
from mathlens.runs.counts import (
    Counts,
    FailedRequest,
    RecordCounts,
    ReplicaCounts,
    RunCounts,
    count_records,
)
from mathlens.runs.documents import DocumentError, DocumentState, document_states
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

#: At most this many responses are flagged when the run has no answers analysis yet.
QUALITY_SAMPLE = 100

QualitySource = Literal["analysis/answers.jsonl", "records", "sample of records", "none"]


class GroupCounts(RecordCounts):
    """The records of one model under one configuration, with their quality counts."""

    mean_latency_s: float | None = None
    #: ok records carrying a degenerate flag, and their share of the ok records (None: not known
    #: for every response of the group, or none ok)
    degenerate: int | None = 0
    degenerate_share: float | None = None
    #: ok records carrying each flag (`COUNTED_FLAGS` but `degenerate`; empty when not known)
    quality: dict[str, int] = Field(default_factory=dict)


class QualityTotals(Counts):
    """Degenerate responses over the whole run, and where the flags came from."""

    source: QualitySource
    degenerate: int
    #: responses flagged (the sample's size when `source` is a sample)
    responses: int
    warning_share: float = WARNING_SHARE
    #: `flagged`, `degenerate` and the count of each flag over those responses
    counts: dict[str, int] = Field(default_factory=dict)
    #: with a sample: the ok responses the run holds
    sampled_from: int | None = None
    #: e.g. "from the answers analysis, which covers 90 of the 250 records ..."
    note: str = ""


class RunOverview(BaseModel):
    """What a run holds, counted (see the module notes)."""

    run_dir: str
    run_id: str
    total_tasks: int
    finished: bool
    records: int = 0
    groups: list[GroupCounts]
    replicas: list[ReplicaCounts]
    quality: QualityTotals
    warning: str | None = None
    #: analysis documents present (`analysis/<name>.jsonl`)
    analyses: list[str] = Field(default_factory=list)
    #: each of them with the records it covers against the run's records now
    analysis_states: list[DocumentState] = Field(default_factory=list)
    errors_total: int = 0
    #: the first `MAX_ERRORS_LISTED` failed requests
    errors: list[FailedRequest] = Field(default_factory=list)

    @property
    def with_trace(self) -> int:
        """Records with a reasoning trace."""
        return sum(g.with_trace for g in self.groups)

    @property
    def trace_truncated(self) -> int:
        """Records whose trace the token cap cut before a visible answer."""
        return sum(g.trace_truncated for g in self.groups)

    @property
    def stale(self) -> list[DocumentState]:
        """The analysis documents that do not cover exactly the run's records now."""
        return [s for s in self.analysis_states if s.stale]


def run_overview(store: RunStore, records: Iterable[RunRecord] | None = None,
                 flags: dict[str, QualityFlags | None] | None = None) -> RunOverview:
    """Count the run in `store` (see the module notes), or the `records` a caller holds already,
    with their quality `flags` when it has those too."""
    manifest = store.manifest()
    # (the records' digest is taken only when there are documents to hold against it: a run that
    # has none is shown without reading the whole records file)
    states = document_states(store.root, store.snapshot() if store.is_frozen else None)
    if records is not None:
        counts, quality, groups = _count_held(list(records), flags)
    else:
        counts = count_records(store.root, until=store.snapshot().bytes if store.is_frozen else None,
                               cache=os.access(store.root, os.W_OK))
        groups = {(g.model, g.configuration): GroupCounts(**g.model_dump()) for g in counts.groups}
        answers = next((s for s in states if s.name == "answers" and s.status != "unreadable"), None)
        quality = (_stored_quality(store, groups, answers) if answers is not None else None) \
            or _records_quality(store, groups, counts)
    for g in groups.values():
        g.latency_s = round(g.latency_s, 3)
        g.mean_latency_s = round(g.latency_s / g.records, 3) if g.records else None
    answered: dict[str, int] = {}
    for r in counts.replicas:
        answered[r.model] = answered.get(r.model, 0) + r.records
    for r in counts.replicas:
        r.share = r.records / answered[r.model] if answered[r.model] else 0.0
    return RunOverview(
        run_dir=str(store.root), run_id=manifest.run_id, total_tasks=manifest.total_tasks,
        finished=manifest.finished_at is not None, records=counts.records, groups=list(groups.values()),
        replicas=counts.replicas, quality=quality,
        warning=warning_of(quality.counts, WARNING_SHARE, sampled_from=quality.sampled_from),
        analyses=[s.name for s in states], analysis_states=states,
        errors_total=counts.errors_total, errors=counts.errors)


def _count_held(records: list[RunRecord], flags: dict[str, QualityFlags | None] | None
                ) -> tuple[RunCounts, QualityTotals, dict[tuple[str, str], GroupCounts]]:
    """Counts of records a caller holds (their flags computed from them when not given)."""
    if flags is None:
        flags = {r.key: record_quality(r) for r in records}
    counts = RunCounts()
    groups: dict[tuple[str, str], GroupCounts] = {}
    group_flags: dict[tuple[str, str], list[QualityFlags | None]] = {}
    replicas: dict[tuple[str, str], ReplicaCounts] = {}
    for rec in records:
        key = (rec.model, rec.configuration)
        g = groups.setdefault(key, GroupCounts(model=rec.model, configuration=rec.configuration))
        group_flags.setdefault(key, []).append(flags.get(rec.key))
        g.add(rec)
        counts.add(rec, replicas)
    for key, g in groups.items():
        _set_quality(g, flag_counts(group_flags[key]))
    total = flag_counts(flags.get(r.key) for r in records)
    quality = QualityTotals(source="records", degenerate=total["degenerate"], responses=total["flagged"],
                            counts=total)
    return counts, quality, groups


def _set_quality(g: GroupCounts, counts: dict[str, int]) -> None:
    g.degenerate = counts.get("degenerate", 0)
    flagged = counts.get("flagged", 0)
    g.degenerate_share = round(g.degenerate / flagged, 4) if flagged else None
    g.quality = {k: counts.get(k, 0) for k in COUNTED_FLAGS if k != "degenerate"}


def _found(counts: dict[str, int]) -> str:
    """What flag counts found, in words: "3 degenerate (3%); echo 2, repetition loop 1" or "no flag raised"."""
    raised = flags_raised(counts)
    if not counts.get("flagged") or not raised:
        return "no flag raised"
    bad = counts.get("degenerate", 0)
    return f"{bad} degenerate ({percent(bad / counts['flagged'])}); {raised}"


def _stored_quality(store: RunStore, groups: dict[tuple[str, str], GroupCounts],
                    state: DocumentState) -> QualityTotals | None:
    """Quality counts from the answers analysis's stored summary (None when it cannot be read)."""
    from mathlens.analyze.grading.answer_records import ANSWERS

    try:
        doc = ANSWERS.read(store.root)
    except DocumentError:
        return None
    if doc is None:
        return None
    per_group: dict[tuple[str, str], dict[str, int]] = {}
    totals: dict[str, int] = {}
    for acc in doc.summary.summary:
        into = per_group.setdefault((acc.model, acc.configuration), {})
        for k, v in acc.quality.items():
            into[k] = into.get(k, 0) + v
            totals[k] = totals.get(k, 0) + v
    for key, g in groups.items():
        _set_quality(g, per_group.get(key, {}))
    note = f"from the answers analysis, which {state.note}" if state.stale else ""
    return QualityTotals(source="analysis/answers.jsonl", degenerate=totals.get("degenerate", 0),
                         responses=totals.get("flagged", 0), counts=totals, note=note)


def _spread_ok_records(path: Path, ok: int, size: int) -> Iterator[RunRecord]:
    """Every ok record when there are at most `QUALITY_SAMPLE`, else that many spread evenly over
    the file by byte offset (each the first ok record at or after its offset)."""
    with path.open("rb") as fh:
        if ok <= QUALITY_SAMPLE:
            for line in fh:
                if fh.tell() > size or not line.endswith(b"\n"):
                    break
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


def _records_quality(store: RunStore, groups: dict[tuple[str, str], GroupCounts],
                     counts: RunCounts) -> QualityTotals:
    """Quality flags of the records themselves: all of them, or a spread sample of a large run."""
    ok = sum(g.ok for g in counts.groups)
    sampled = ok > QUALITY_SAMPLE
    by_group: dict[tuple[str, str], list[QualityFlags | None]] = {}
    try:
        for rec in _spread_ok_records(store.records_path, ok, counts.bytes):
            by_group.setdefault((rec.model, rec.configuration), []).append(record_quality(rec))
    except (OSError, ValidationError):
        return QualityTotals(source="none", degenerate=0, responses=0,
                             note="the records could not be read for quality flags")
    total = flag_counts(f for flags in by_group.values() for f in flags)
    for key, g in groups.items():
        if sampled:
            g.degenerate, g.degenerate_share, g.quality = None, None, {}
        else:
            _set_quality(g, flag_counts(by_group.get(key, [])))
    note = (f"a spread sample of {total['flagged']} of the {ok} responses: {_found(total)}; `mathlens analyze "
            f"{store.root}` flags every response, per group") if sampled else ""
    return QualityTotals(source="sample of records" if sampled else "records", degenerate=total["degenerate"],
                         responses=total["flagged"], counts=total, sampled_from=ok if sampled else None, note=note)


__all__ = ["COUNTED_FLAGS", "QUALITY_SAMPLE", "FailedRequest", "GroupCounts", "QualityTotals", "ReplicaCounts",
           "RunOverview", "run_overview"]
