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

from pydantic import BaseModel

from mathlens.errors import UserError
from mathlens.items.schema import Exam
from mathlens.models.model import Model
from mathlens.runs.coverage import RecordsSnapshot
from mathlens.runs.documents import DocumentVersionError
from mathlens.runs.plan import plan_tasks
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, Task
from mathlens.runs.runner import Progress, RunResult, base_manifest, execute
from mathlens.runs.snapshot import source_sha256
from mathlens.runs.store import RunStore
from mathlens.solve.tutoring import CONDITIONS, ImageMode, TutorDesign, condition_label

from .agreement import TUTOR_AGREEMENT, AgreementOptions, AgreementReport, agreement_report
from .design import Cell, cells_of, design_of, load_tutor_exams, resolve_items, tutor_generate_config
from .judge import TUTOR_SCORES, ScoreSet
from .profiles import grade_objectives, load_profiles
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


def _objectives(grades: set[int]) -> dict[int, tuple[str, ...]]:
    """The shipped objectives of every grade that has them (a learner of another grade is refused
    when a request needs their objectives)."""
    out: dict[int, tuple[str, ...]] = {}
    for grade in sorted(grades):
        try:
            out[grade] = grade_objectives(grade)
        except UserError:
            continue
    return out


def design_for(profiles: str, conditions: list[int], image_mode: ImageMode = "auto", match_grade: bool = True,
               accepts_images: dict[str, bool] | None = None) -> TutorDesign:
    """The design of a tutoring run: the learners `profiles` names, the context conditions, the image
    mode, the objectives of the learners' grades (when a condition shows them) and, when known, which
    models read images."""
    learners = load_profiles(profiles)
    with_objectives = any(CONDITIONS[c].objectives_in_system for c in conditions)
    return TutorDesign(profiles=tuple(learners), profile_source=profiles, conditions=tuple(conditions),
                       image_mode=image_mode, match_grade=match_grade,
                       objectives=_objectives({p.grade for p in learners}) if with_objectives else {},
                       accepts_images=dict(accepts_images or {}))


def new_manifest(opts: StudyOptions) -> Manifest:
    """A manifest whose `tutor` field holds the design: learners, conditions (its configurations),
    image mode and the objectives of the learners' grades. Which models read images is added by
    `prepare`, once the models are built."""
    if not opts.models:
        raise UserError("name at least one model (--model)")
    if len(set(opts.models)) != len(opts.models):
        raise UserError("a model is listed twice")
    design = design_for(opts.profiles, opts.conditions, opts.image_mode, opts.match_grade)
    items = [ItemSource(source=str(resolve_items(s)), limit=opts.limit) for s in opts.items]
    return base_manifest(
        run_id=opts.run_id,
        items=[s.model_copy(update={"sha256": source_sha256(s)}) for s in items],
        models=[ModelEntry(spec=m, options=dict(opts.model_options)) for m in opts.models],
        configurations=[condition_label(c) for c in opts.conditions],
        generate=tutor_generate_config(opts.max_tokens), system_role="", tutor=design,
    )


def study_exams(store: RunStore, manifest: Manifest) -> list[Exam]:
    """The run's items: its own copy once it has one, else loaded from the manifest's item files."""
    return store.exams() if store.items_path.is_file() else load_tutor_exams(manifest.items)


def prepare(manifest: Manifest, models: dict[str, Model], exams: list[Exam]) -> tuple[Manifest, list[Task]]:
    """The manifest completed with what the models are (identity; whether each reads images, kept
    as first recorded so a resume plans the same requests) and the tasks the planner makes from it.

    Refuses a design that pairs no learner with any item, and (`--images send`) a text-only model."""
    design = design_of(manifest)
    reads = {spec: design.accepts_images.get(spec, model.accepts_images) for spec, model in models.items()}
    entries = [e.model_copy(update={"identity": models[e.spec].identity()}) if e.spec in models else e
               for e in manifest.models]
    ready = manifest.model_copy(update={"tutor": design.model_copy(update={"accepts_images": reads}),
                                        "models": entries})
    tasks = plan_tasks(ready, exams)
    if not tasks:
        raise UserError("the design pairs no learner with any item (check the grades of profiles and items)")
    return ready.model_copy(update={"total_tasks": len(tasks)}), tasks


async def run_study(store: RunStore, manifest: Manifest, models: dict[str, Model],
                    progress: Progress | None = None) -> RunResult:
    """Send every planned tutoring request not yet recorded (so it also resumes). The run keeps its
    items (`RUN/items.json`) and the completed manifest; `manifest` itself is left as it was."""
    took_lock = not store.locked
    store.acquire_lock()
    try:
        exams = study_exams(store, manifest)
        ready, tasks = prepare(manifest, models, exams)
        if not store.items_path.is_file():
            store.write_items(exams)
        store.write_manifest(ready)
        return await execute(store, ready, models, progress=progress, tasks=tasks)
    finally:
        if took_lock:
            store.release_lock()


def load_cells(store: RunStore) -> list[Cell]:
    """The run's responses joined to their profile and item."""
    manifest = store.manifest()
    design_of(manifest)  # a clear error for a run that is not a tutoring run
    return cells_of(manifest, list(store.records()), store.exams())


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


def compute_stats(store: RunStore, source: str = "judge", alpha: float = 0.05, seed: int = 0, *,
                  records: RecordsSnapshot | None = None, options: BaseModel | None = None) -> TutorStats:
    """Tables 1 and 2 (Table 2 also by learner profile, over applicable cases) and the ANOVAs of one
    score source, stored in `TUTOR_STATS` beside those of the other sources (the judge's, whatever its
    model, or one annotator's are replaced). A document of an older schema version is replaced with
    this source's statistics alone. `records` (the records read, frozen) and `options` (recorded in the
    document's envelope) are the analyzer's, `tutor_stats`; the records are read now without them."""
    stats, rows = tutor_stats(load_cells(store), load_scores(store, source), rubric_of(store), alpha=alpha, seed=seed)
    slot = slot_of(stats.source)
    sources, entries = _stats_so_far(store)
    kept = [s for s in sources if slot_of(s.source) != slot]
    ordered = sorted([*kept, stats], key=lambda s: (not s.judged, s.source))
    TUTOR_STATS.write(store.root, run_id=store.manifest().run_id, records=records or store.snapshot(),
                      entries=[e for e in entries if slot_of(e.source) != slot] + rows,
                      summary=TutorStatsSummary(sources=ordered), options=options)
    return stats


def compute_agreement(store: RunStore, seed: int = 0, n_resamples: int = 1000) -> AgreementReport:
    """Judge vs each annotator and annotators pairwise; writes `TUTOR_AGREEMENT`."""
    sources = []
    if TUTOR_SCORES.read(store.root) is not None:
        sources.append(load_scores(store, "judge"))
    sources += list(load_human(store).values())
    if len(sources) < 2:
        raise UserError("agreement needs two score sources: judge scores and/or imported worksheets")
    rubric = rubric_of(store)
    report = agreement_report(sources, rubric, seed=seed, n_resamples=n_resamples)
    TUTOR_AGREEMENT.write(store.root, run_id=store.manifest().run_id,
                          records=store.snapshot(), entries=(), summary=report,
                          options=AgreementOptions(resamples=n_resamples, seed=seed))
    return report
