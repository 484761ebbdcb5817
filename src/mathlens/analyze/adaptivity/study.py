"""Run, score and analyse a tutoring study over the ordinary run store and runner.

    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["embedded"], ...))
    store = RunStore(out); store.write_manifest(manifest)
    await run_study(store, manifest, build_models(manifest, cache, RetryPolicy(), None))
    await score_run(store, judge_model)          # analysis/tutor_scores.json
    compute_stats(store)                         # analysis/tutor_stats.json
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mathlens.errors import UserError
from mathlens.models.base import GenerateConfig
from mathlens.models.model import Model
from mathlens.runs.records import ItemSource, Manifest, ModelEntry
from mathlens.runs.runner import Progress, RunResult, base_manifest, execute
from mathlens.runs.store import RunStore

from .agreement import AgreementRow, agreement_report
from .conditions import ImageMode, condition_label
from .design import Cell, TutorDesign, cells_of, design_of, plan_tutor_tasks, resolve_items, tutor_generate_config
from .judge import ItemScore, ScoreSet, job_of, judge_config, judge_jobs, new_score_set
from .profiles import load_profiles
from .rubric import Rubric, load_rubric
from .tables import TutorStats, tutor_stats
from .worksheet import load_human

SCORES_ANALYSIS = "tutor_scores"
STATS_ANALYSIS = "tutor_stats"
AGREEMENT_ANALYSIS = "tutor_agreement"


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


@dataclass(frozen=True)
class ScoreOptions:
    """What to score: rubric item ids/codes (all when empty), the first `limit` responses, judge length."""

    items: list[str] = field(default_factory=list)
    limit: int | None = None
    max_tokens: int = 160


async def score_run(store: RunStore, judge: Model, opts: ScoreOptions | None = None,
                    on_score: Any = None) -> ScoreSet:
    """Judge the run's responses item by item; writes `analysis/tutor_scores.json`."""
    opts = opts or ScoreOptions()
    rubric = rubric_of(store)
    cells = load_cells(store)
    if opts.limit is not None:
        cells = cells[: opts.limit]
    if not cells:
        raise UserError(f"{store.root}: the run has no responses to score")
    items = rubric.select(opts.items)
    config: GenerateConfig = judge_config(opts.max_tokens)
    scores: list[ItemScore] = await judge_jobs(judge, [job_of(c) for c in cells], items, config, on_score)
    result = new_score_set(judge, rubric, scores)
    store.write_analysis(SCORES_ANALYSIS, result)
    return result


def load_scores(store: RunStore, source: str = "judge") -> ScoreSet:
    """`judge` (analysis/tutor_scores.json) or `human:<annotator>` (imported worksheets)."""
    if source == "judge":
        data = store.read_analysis(SCORES_ANALYSIS)
        if data is None:
            raise UserError(f"{store.root}: no judge scores yet (run `mathlens tutor score`)")
        return ScoreSet.model_validate(data)
    if source.startswith("human:"):
        humans = load_human(store)
        name = source.split(":", 1)[1]
        if name not in humans:
            raise UserError(f"no worksheet imported for annotator {name!r} (known: {', '.join(humans) or 'none'})")
        return humans[name]
    raise UserError(f"score source {source!r}: use 'judge' or 'human:<annotator>'")


def compute_stats(store: RunStore, source: str = "judge", alpha: float = 0.05, seed: int = 0) -> TutorStats:
    """Tables 1 and 2 and the ANOVAs; writes `analysis/tutor_stats.json` (judge) or `tutor_stats_<name>`."""
    result = tutor_stats(load_cells(store), load_scores(store, source), rubric_of(store), alpha=alpha, seed=seed)
    name = STATS_ANALYSIS if source == "judge" else f"{STATS_ANALYSIS}_{source.split(':', 1)[1]}"
    store.write_analysis(name, result)
    return result


def compute_agreement(store: RunStore, seed: int = 0, n_resamples: int = 1000) -> list[AgreementRow]:
    """Judge vs each annotator and annotators pairwise; writes `analysis/tutor_agreement.json`."""
    sources = []
    if store.read_analysis(SCORES_ANALYSIS) is not None:
        sources.append(load_scores(store, "judge"))
    sources += list(load_human(store).values())
    if len(sources) < 2:
        raise UserError("agreement needs two score sources: judge scores and/or imported worksheets")
    rows = agreement_report(sources, rubric_of(store), seed=seed, n_resamples=n_resamples)
    store.write_analysis(AGREEMENT_ANALYSIS, {"rows": [r.model_dump(mode="json") for r in rows]})
    return rows
