"""The counts of a run's records: per model and configuration, per replica, and the failed requests.

One producer for what `mathlens run`, `mathlens show`, `mathlens import`, `mathlens tutor run`
and the report's overview print: records, ok/error, truncated, cached, variants, tokens, latency,
reasoning traces, and the output-quality flags of each group (degenerate and each flag). The
flags come from `analysis/answers.jsonl` where it has them and are computed from the records
otherwise (`quality.source` says which), so they are there before `mathlens analyze`. `warning`
is set when more than half of the ok records are degenerate.

Computed from the records on demand (no document): the records are the source, and a run being
written has no analysis yet. Counting is one pass with a fixed number of counters per group.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mathlens.analyze.grading.answer_records import ANSWERS, stored_quality
from mathlens.analyze.quality import COUNTED_FLAGS, WARNING_SHARE, QualityFlags, degenerate_warning, flag_counts
from mathlens.analyze.quality import run_flags as quality_of_records
from mathlens.runs.records import RunRecord
from mathlens.runs.store import RunStore

#: Failed requests listed one by one (the rest are counted).
MAX_ERRORS_LISTED = 50


class Counts(BaseModel):
    """A row of counts (unknown fields refused)."""

    model_config = ConfigDict(extra="forbid")


class GroupCounts(Counts):
    """The records of one model under one configuration."""

    model: str
    configuration: str
    records: int = 0
    #: records of ablation variants and paraphrases (the rest answer the original prompts)
    variants: int = 0
    ok: int = 0
    error: int = 0
    truncated: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    mean_latency_s: float | None = None
    with_trace: int = 0
    trace_truncated: int = 0
    #: ok records carrying a degenerate flag, and their share of the ok records (None: none ok)
    degenerate: int = 0
    degenerate_share: float | None = None
    #: ok records carrying each flag (`COUNTED_FLAGS` but `degenerate`)
    quality: dict[str, int] = Field(default_factory=dict)


class ReplicaCounts(Counts):
    """The records one replica of a pool answered (cache hits name no replica)."""

    model: str
    replica: str
    records: int = 0
    ok: int = 0
    error: int = 0
    completion_tokens: int = 0
    #: of the model's records answered by a replica
    share: float = 0.0


class QualityTotals(Counts):
    """Degenerate responses over the whole run, and where the flags came from."""

    source: str
    degenerate: int
    responses: int
    warning_share: float = WARNING_SHARE


class FailedRequest(Counts):
    """One record whose request failed."""

    key: str
    error: str


class RunOverview(BaseModel):
    """What a run holds, counted (see the module notes)."""

    run_dir: str
    run_id: str
    total_tasks: int
    finished: bool
    groups: list[GroupCounts]
    replicas: list[ReplicaCounts]
    quality: QualityTotals
    warning: str | None = None
    #: analysis documents present (`analysis/<name>.jsonl`)
    analyses: list[str] = Field(default_factory=list)
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


def run_overview(store: RunStore, records: Iterable[RunRecord] | None = None,
                 flags: dict[str, QualityFlags | None] | None = None) -> RunOverview:
    """Count the records of the run in `store` (or `records`, when the caller holds them already,
    with their quality `flags` when it has those too)."""
    manifest = store.manifest()
    recs = list(store.records()) if records is None else list(records)
    if flags is None:
        stored = stored_quality(store.root)
        flags = quality_of_records(recs, stored)
    from_answers = ANSWERS.path(store.root).exists()
    groups: dict[tuple[str, str], GroupCounts] = {}
    group_flags: dict[tuple[str, str], list[QualityFlags | None]] = {}
    replicas: dict[tuple[str, str], ReplicaCounts] = {}
    errors: list[FailedRequest] = []
    errors_total = 0
    for rec in recs:
        key = (rec.model, rec.configuration)
        g = groups.setdefault(key, GroupCounts(model=rec.model, configuration=rec.configuration))
        group_flags.setdefault(key, []).append(flags.get(rec.key))
        _count(g, rec)
        if rec.status == "error":
            errors_total += 1
            if len(errors) < MAX_ERRORS_LISTED:
                errors.append(FailedRequest(key=rec.key, error=rec.error or ""))
        if rec.replica is not None:
            r = replicas.setdefault((rec.model, rec.replica), ReplicaCounts(model=rec.model, replica=rec.replica))
            r.records += 1
            r.ok += rec.status == "ok"
            r.error += rec.status == "error"
            r.completion_tokens += rec.usage.completion_tokens
    for key, g in groups.items():
        counts = flag_counts(group_flags[key])
        g.degenerate = counts["degenerate"]
        g.degenerate_share = round(counts["degenerate"] / counts["flagged"], 4) if counts["flagged"] else None
        g.quality = {k: v for k, v in counts.items() if k not in ("flagged", "degenerate")}
        g.latency_s = round(g.latency_s, 3)
        g.mean_latency_s = round(g.latency_s / g.records, 3) if g.records else None
    answered: dict[str, int] = {}
    for r in replicas.values():
        answered[r.model] = answered.get(r.model, 0) + r.records
    for r in replicas.values():
        r.share = r.records / answered[r.model] if answered[r.model] else 0.0
    present = [f for f in flags.values() if f is not None]
    return RunOverview(
        run_dir=str(store.root), run_id=manifest.run_id, total_tasks=manifest.total_tasks,
        finished=manifest.finished_at is not None, groups=list(groups.values()), replicas=list(replicas.values()),
        quality=QualityTotals(source="analysis/answers.jsonl" if from_answers else "records",
                              degenerate=sum(f.degenerate for f in present), responses=len(present)),
        warning=degenerate_warning(present), analyses=_analyses(store.analysis_dir),
        errors_total=errors_total, errors=errors)


def _count(g: GroupCounts, rec: RunRecord) -> None:
    g.records += 1
    g.variants += rec.variant.kind != "original"
    g.ok += rec.status == "ok"
    g.error += rec.status == "error"
    g.truncated += rec.truncated
    g.cached += rec.cached
    g.with_trace += bool(rec.reasoning)  # reasoning traces, and those the token cap cut
    g.trace_truncated += rec.trace_truncated
    g.prompt_tokens += rec.usage.prompt_tokens
    g.completion_tokens += rec.usage.completion_tokens
    g.latency_s += rec.latency_s


def _analyses(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.exists() else []


__all__ = ["COUNTED_FLAGS", "FailedRequest", "GroupCounts", "QualityTotals", "ReplicaCounts", "RunOverview",
           "run_overview"]
