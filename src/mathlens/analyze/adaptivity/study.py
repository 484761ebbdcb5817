"""Run, score and analyse a tutoring study over the ordinary run store and runner.

    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["embedded"], ...))
    store = RunStore(out); store.write_manifest(manifest)
    await run_study(store, manifest, build_models(manifest, cache, RetryPolicy(), None))
    run_one(store, "tutor_scores", judge="embedded")   # analysis/tutor_scores.jsonl (analyzer.py)
    compute_stats(store)                               # analysis/tutor_stats.jsonl
    compute_agreement(store)                           # analysis/tutor_agreement.jsonl

Scores, statistics and agreement are read and written only through their document specs
(`TUTOR_SCORES`, `TUTOR_STATS`, `TUTOR_AGREEMENT`, `TUTOR_HUMAN`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mathlens.errors import UserError
from mathlens.models.model import Model
from mathlens.runs.documents import DocumentVersionError, records_digest
from mathlens.runs.records import ItemSource, Manifest, ModelEntry
from mathlens.runs.runner import Progress, RunResult, base_manifest, execute
from mathlens.runs.store import RunStore

from .agreement import TUTOR_AGREEMENT, AgreementRow, AgreementSummary, agreement_report
from .conditions import ImageMode, condition_label
from .design import Cell, TutorDesign, cells_of, design_of, plan_tutor_tasks, resolve_items, tutor_generate_config
from .judge import TUTOR_SCORES, ScoreSet
from .profiles import load_profiles
from .rubric import Rubric, load_rubric
from .tables import TUTOR_STATS, DimensionScore, TutorStats, TutorStatsSummary, slot_of, tutor_stats
from .worksheet import load_human


@dataclass(frozen=True)
class StudyOptions:
    """Everything `mathlens tutor run` decides before the first request."""

    items: list[str]
    models: list[str]
    profiles: str = "default"
    conditions: list[int] = field(default_factory=lambda: [1, 2, 3, 4])
    model_options: dict[str, Any] = field(default_factory=dict)
    image_mode: ImageMode = "auto"
    max_tokens: int = 512
    limit: int | None = None
    match_grade: bool = True
    run_id: str | None = None


def new_manifest(opts: StudyOptions) -> Manifest:
    """A manifest whose `extra["tutor"]` holds the full design (profiles included)."""
    if not opts.models:
        raise UserError("name at least one model (--model)")
    if len(set(opts.models)) != len(opts.models):
        raise UserError("a model is listed twice")
    design = TutorDesign(profiles=load_profiles(opts.profiles), profile_source=opts.profiles,
                         conditions=opts.conditions, image_mode=opts.image_mode, match_grade=opts.match_grade)
    return base_manifest(
        run_id=opts.run_id,
        items=[ItemSource(source=str(resolve_items(s)), limit=opts.limit) for s in opts.items],
        models=[ModelEntry(spec=m, options=dict(opts.model_options)) for m in opts.models],
        configurations=[condition_label(c) for c in opts.conditions],
        generate=tutor_generate_config(opts.max_tokens), system_role="",
        extra={"tutor": design.model_dump(mode="json")},
    )


def image_support(models: dict[str, Model]) -> dict[str, bool]:
    """Which models read images (decides diagram handling in planning)."""
    return {spec: m.accepts_images for spec, m in models.items()}


async def run_study(store: RunStore, manifest: Manifest, models: dict[str, Model],
                    progress: Progress | None = None) -> RunResult:
    """Send every planned tutoring request not yet recorded (so it also resumes)."""
    tasks = plan_tutor_tasks(manifest, image_support(models))
    for spec, model in models.items():
        entry = next(e for e in manifest.models if e.spec == spec)
        entry.identity = model.identity()
    manifest.total_tasks = len(tasks)
    store.write_manifest(manifest)
    return await execute(store, manifest, models, progress=progress, tasks=tasks)


def load_cells(store: RunStore) -> list[Cell]:
    """The run's responses joined to their profile and item."""
    manifest = store.manifest()
    design_of(manifest)  # a clear error for a run that is not a tutoring run
    return cells_of(manifest, list(store.records()))


def rubric_of(store: RunStore) -> Rubric:
    return load_rubric(design_of(store.manifest()).rubric)


def load_scores(store: RunStore, source: str = "judge") -> ScoreSet:
    """`judge` (the `TUTOR_SCORES` document) or `human:<annotator>` (an imported worksheet)."""
    if source == "judge":
        doc = TUTOR_SCORES.read(store.root)
        if doc is None:
            raise UserError(f"{store.root}: no judge scores yet "
                            f"(run `mathlens tutor score {store.root} --judge MODEL`)")
        return ScoreSet.of(doc.summary, TUTOR_SCORES.entries(store.root))
    if source.startswith("human:"):
        humans = load_human(store)
        name = source.split(":", 1)[1]
        if name not in humans:
            raise UserError(f"no worksheet imported for annotator {name!r} (known: {', '.join(humans) or 'none'})")
        return humans[name]
    raise UserError(f"score source {source!r}: use 'judge' or 'human:<annotator>'")


def _stats_so_far(store: RunStore) -> tuple[list[TutorStats], list[DimensionScore]]:
    """The statistics already stored for other sources (none when the file is of an older layout:
    statistics are recomputed from scores, so an old file is simply replaced)."""
    try:
        doc = TUTOR_STATS.read(store.root)
        if doc is None:
            return [], []
        return list(doc.summary.sources), list(TUTOR_STATS.entries(store.root))
    except DocumentVersionError:
        return [], []


def compute_stats(store: RunStore, source: str = "judge", alpha: float = 0.05, seed: int = 0) -> TutorStats:
    """Tables 1 and 2 and the ANOVAs of one score source, stored in `TUTOR_STATS` beside those of
    the other sources (the judge's, whatever its model, or one annotator's are replaced)."""
    stats, rows = tutor_stats(load_cells(store), load_scores(store, source), rubric_of(store), alpha=alpha, seed=seed)
    slot = slot_of(stats.source)
    sources, entries = _stats_so_far(store)
    kept = [s for s in sources if slot_of(s.source) != slot]
    ordered = sorted([*kept, stats], key=lambda s: (not s.judged, s.source))
    TUTOR_STATS.write(store.root, run_id=store.manifest().run_id, records_sha256=records_digest(store.records_path),
                      entries=[e for e in entries if slot_of(e.source) != slot] + rows,
                      summary=TutorStatsSummary(sources=ordered))
    return stats


def compute_agreement(store: RunStore, seed: int = 0, n_resamples: int = 1000) -> list[AgreementRow]:
    """Judge vs each annotator and annotators pairwise; writes `TUTOR_AGREEMENT`."""
    sources = []
    if TUTOR_SCORES.read(store.root) is not None:
        sources.append(load_scores(store, "judge"))
    sources += list(load_human(store).values())
    if len(sources) < 2:
        raise UserError("agreement needs two score sources: judge scores and/or imported worksheets")
    rubric = rubric_of(store)
    rows = agreement_report(sources, rubric, seed=seed, n_resamples=n_resamples)
    TUTOR_AGREEMENT.write(store.root, run_id=store.manifest().run_id,
                          records_sha256=records_digest(store.records_path), entries=rows,
                          summary=AgreementSummary(sources=[s.source for s in sources], rubric=rubric.name, seed=seed,
                                                   n_resamples=n_resamples))
    return rows
