"""The `tutor_stats` analyzer: Tables 1 and 2, Table 2 by learner, and the two-way ANOVAs of one score source.

`mathlens tutor stats RUN`, `mathlens analyze RUN` (it calls no model, so a bare `analyze` runs it;
it skips a run that is not a tutoring run or has no scores yet) and a study's `analyses:
{tutor_stats: {...}}` all run it. It reads the judge's scores (`tutor_scores`, which runs first when
both are selected) or one annotator's imported worksheet (`source: human:NAME`), and stores its
statistics in `TUTOR_STATS` (`RUN/analysis/tutor_stats.jsonl`) beside those of the other sources.

Options (`-O tutor_stats.KEY=VALUE`, or the flags of `tutor stats`): `source` (`judge`, or
`human:<annotator>`), `alpha` (the level of the assumption checks and post hoc tests) and `seed`
(of the bootstrap intervals).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mathlens.analyze.protocol import AnalysisJob, Analyzer, AnalyzerOptions, Outcome
from mathlens.flags import MAX_SEED, Flag

from .judge import TUTOR_SCORES
from .study import compute_stats
from .tables import TUTOR_STATS, TutorStats


class StatsOptions(AnalyzerOptions):
    """Which scores the statistics are computed from, and their test level and bootstrap seed."""

    source: Annotated[str, Flag("--source")] = Field(
        "judge", pattern=r"^(judge|human:.+)$", description="the scores: judge | human:<annotator>")
    alpha: Annotated[float, Flag("--alpha")] = Field(
        0.05, ge=0.0001, le=0.5, description="level of the assumption checks and post hoc tests")
    seed: Annotated[int, Flag("--seed")] = Field(0, ge=0, le=MAX_SEED,
                                                  description="seed of the bootstrap intervals")


def run(job: AnalysisJob[StatsOptions]) -> Outcome[TutorStats]:
    """Compute and store the statistics of the chosen source; they are the outcome's summary. A run
    that is not a tutoring run, or has no judge scores yet when the judge's are asked for, is skipped
    (so a bare `mathlens analyze` passes over it)."""
    opts = job.options
    manifest = job.store.manifest()
    if manifest.tutor is None and "tutor" not in manifest.extra:  # an older tutoring run is refused by name below
        return Outcome.skipped("not a tutoring run (no tutoring design in its manifest)")
    if opts.source == "judge" and TUTOR_SCORES.read(job.store.root) is None:
        return Outcome.skipped(f"no judge scores yet (run `mathlens tutor score {job.store.root} --judge MODEL`)")
    stats = compute_stats(job.store, source=opts.source, alpha=opts.alpha, seed=opts.seed, records=job.records,
                          options=opts)
    return Outcome.ok(stats, TUTOR_STATS.path(job.store.root))


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def describe(stats: TutorStats) -> list[str]:
    """The source and its counts, then each dimension's ANOVA terms (F, p) or why none was estimable."""
    excluded = ", ".join(f"{k} {v}" for k, v in sorted(stats.excluded.items())) or "none"
    lines = [f"{stats.source}: {stats.responses} responses; left out as incomplete per dimension: {excluded}; "
             f"Table 1 {len(stats.table1)} rows, Table 2 {len(stats.table2)} rows, by learner "
             f"{len(stats.table2_profiles)} rows"]
    for dim, designs in stats.anova.items():
        for design, res in designs.items():
            if res.status != "ok":
                lines.append(f"{dim}, {design}: not estimable ({res.note})")
                continue
            terms = "; ".join(f"{e.term}: F({_number(e.df, 'g')},{_number(res.residual_df, 'g')})="
                              f"{_number(e.F, '.2f')}, p={_number(e.p, '.3g')}" for e in res.effects)
            lines.append(f"{dim}, {design} (n={res.n}, reported: {res.reported}): {terms}"
                         + (f" ({res.note})" if res.note else ""))
    return lines


ANALYZER = Analyzer(
    name="tutor_stats",
    title="Tutoring Tables 1 and 2, Table 2 by learner, two-way ANOVAs with Tukey HSD (one score source)",
    options=StatsOptions,
    summary=TutorStats,
    run=run,
    describe=describe,
    writes=(TUTOR_STATS,),
    reads=("tutor_scores",),
)
