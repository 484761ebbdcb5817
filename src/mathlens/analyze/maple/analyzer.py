"""The `maple` analyzer: MAPLE error labels and scores for every solution of a run.

Writes the `MAPLE` document (`analysis/maple.jsonl`: one `SolutionMaple` per record, and the
tables and figure data per (model, configuration, variant) in its summary), the same tables as
CSV (`maple_by_level.csv`, `maple_by_subject.csv`), and, after a label discovery, the draft label
set `maple_labels_draft.yaml`. It calls a judge (role "labeller"), so a bare `mathlens analyze`
does not run it: `mathlens maple RUN`, or `mathlens analyze RUN --only maple`.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from mathlens.analyze.maple.aggregate import write_csv
from mathlens.analyze.maple.pipeline import MapleOptions, MapleResult, score_run
from mathlens.analyze.maple.results import MAPLE, MapleSummary
from mathlens.analyze.protocol import AnalysisJob, Analyzer, Outcome

#: files of the layout before analysis documents, removed when the analysis is re-run
_STALE = ("maple_figure3.json", "maple_figure5.json")


def write_outputs(job: AnalysisJob[MapleOptions], result: MapleResult) -> Path:
    """The MAPLE document, the CSV tables and the draft label set of a discovery; the document's path."""
    from mathlens.analyze.maple.labels import save_label_set

    store = job.store
    path = job.write(MAPLE, iter(result.solutions), result.summary)
    write_csv(result.summary.by_level, store.analysis_dir / "maple_by_level.csv")
    write_csv(result.summary.by_subject, store.analysis_dir / "maple_by_subject.csv")
    if result.draft is not None:
        save_label_set(result.draft, store.analysis_dir / "maple_labels_draft.yaml")
    for name in _STALE:
        with contextlib.suppress(OSError):
            (store.analysis_dir / name).unlink(missing_ok=True)
    return path


def describe(summary: MapleSummary) -> list[str]:
    """Judge, formula, label set, solutions scored and left out."""
    line = (f"judge {summary.judge}, formula {summary.formula}, v/r from {summary.vr_source}, labels "
            f"{summary.labels.id} v{summary.labels.version}: {sum(summary.statuses.values())} solutions")
    if summary.excluded_degenerate:
        line += f" ({summary.excluded_degenerate} degenerate left out)"
    return [line]


def run(job: AnalysisJob[MapleOptions]) -> Outcome[MapleSummary]:
    """Score every solution with the resolved judge, write the document; its summary."""
    result = asyncio.run(score_run(job.store, job.options, job.require_judge(), no_cache=job.no_cache))
    return Outcome.ok(result.summary, write_outputs(job, result))


ANALYZER = Analyzer(
    name="maple",
    title="MAPLE error labels and scores (judge-labelled steps), by level and subject",
    options=MapleOptions,
    summary=MapleSummary,
    run=run,
    describe=describe,
    writes=(MAPLE,),
    judge="labeller",
)
