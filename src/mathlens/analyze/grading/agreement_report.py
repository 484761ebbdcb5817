"""How far graders agree: judge vs humans, humans among themselves, and the judge with itself.

For every pair of graders and every scope (each rubric criterion, and the question total) the
report gives the number of shared units, quadratic-weighted Cohen's kappa on points,
Krippendorff's alpha (interval) and the mean absolute error in points, each with a bootstrap
interval over units. A unit is a record (and criterion): only units both graders scored count.
Repeated judge runs (`--judge-runs N`) appear as graders `judge:...#run<k>`; the judge's
self-agreement is alpha across all its runs.

Agreement describes the graders, not the graded: every record both graders scored is one unit,
whatever its configuration or variant, and no score of a configuration is computed here (the
scores per configuration and variant are in `tables.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from pydantic import BaseModel, Field

from mathlens.analyze.grading.judge import Grade
from mathlens.analyze.protocol import AnalyzerOptions
from mathlens.runs.documents import DocumentSpec
from mathlens.stats.agreement import cohen_kappa, krippendorff_alpha, mean_absolute_error
from mathlens.stats.bootstrap import CI, bootstrap_ci

Unit = tuple[str, str]  # (record key, criterion or "total")
Pair = tuple[float, float]


class PairAgreement(BaseModel):
    """Agreement of two graders on one scope."""

    a: str
    b: str
    scope: str
    n: int
    kappa_quadratic: CI
    alpha_interval: CI
    mae: CI


class SelfAgreement(BaseModel):
    """The judge against itself across repeated runs, on one scope."""

    grader: str
    runs: int
    scope: str
    units: int
    alpha_interval: CI
    identical_share: float | None


class AgreementReport(BaseModel):
    """The summary of `analysis/agreement.jsonl`."""

    graders: list[str]
    pairs: list[PairAgreement]
    self_agreement: list[SelfAgreement]


class AgreementOptions(AnalyzerOptions):
    """How the agreement was computed (`mathlens agreement` flags)."""

    resamples: int = Field(2000, ge=0)
    seed: int = 0


#: `analysis/agreement.jsonl`: written by `mathlens agreement`; everything is in the summary (no
#: entries).
AGREEMENT = DocumentSpec("agreement", 1, PairAgreement, AgreementReport, rerun="mathlens agreement RUN")


def grader_name(g: Grade) -> str:
    """Judge runs after the first get their own grader name."""
    return g.grader if g.judge_run == 0 else f"{g.grader}#run{g.judge_run}"


def ratings(grades: Sequence[Grade]) -> dict[str, dict[Unit, float]]:
    """grader -> unit -> points, for every criterion scored and every complete total."""
    out: dict[str, dict[Unit, float]] = {}
    for g in grades:
        table = out.setdefault(grader_name(g), {})
        for c in g.criteria:
            table[(g.record.key, c.criterion)] = c.points
        if g.status == "graded" and g.total is not None:
            table[(g.record.key, "total")] = g.total
    return out


def _stat(fn: Callable[[list[float], list[float]], float | None]) -> Callable[[Sequence[Pair]], float | None]:
    def stat(pairs: Sequence[Pair]) -> float | None:
        return fn([p[0] for p in pairs], [p[1] for p in pairs])

    return stat


def _kappa(a: list[float], b: list[float]) -> float | None:
    return cohen_kappa(a, b, weights="quadratic")


def _alpha(a: list[float], b: list[float]) -> float | None:
    return krippendorff_alpha([a, b], level="interval")


def pair_agreement(a: str, b: str, scope: str, ra: dict[Unit, float], rb: dict[Unit, float],
                   n_resamples: int = 2000, seed: int = 0) -> PairAgreement:
    """Agreement of graders `a` and `b` on the units of `scope` they both scored."""
    units = sorted(u for u in ra.keys() & rb.keys() if (scope == "overall" and u[1] == "total") or u[1] == scope)
    pairs = [(ra[u], rb[u]) for u in units]
    return PairAgreement(
        a=a, b=b, scope=scope, n=len(pairs),
        kappa_quadratic=bootstrap_ci(pairs, _stat(_kappa), n_resamples, seed=seed),
        alpha_interval=bootstrap_ci(pairs, _stat(_alpha), n_resamples, seed=seed),
        mae=bootstrap_ci(pairs, _stat(mean_absolute_error), n_resamples, seed=seed),
    )


def self_agreement(base: str, runs: dict[str, dict[Unit, float]], scope: str, n_resamples: int = 2000,
                   seed: int = 0) -> SelfAgreement:
    """Alpha across the judge's runs (rows = runs, columns = units), resampling units."""
    names = sorted(runs)
    want = "total" if scope == "overall" else scope
    units = sorted({u for r in runs.values() for u in r if u[1] == want})
    columns = [tuple(runs[n].get(u) for n in names) for u in units]

    def alpha(cols: Sequence[tuple[float | None, ...]]) -> float | None:
        return krippendorff_alpha([[c[i] for c in cols] for i in range(len(names))], level="interval")

    full = [c for c in columns if None not in c]
    identical = sum(len(set(c)) == 1 for c in full) / len(full) if full else None
    return SelfAgreement(grader=base, runs=len(names), scope=scope, units=len(units),
                         alpha_interval=bootstrap_ci(columns, alpha, n_resamples, seed=seed),
                         identical_share=identical)


def agreement_report(grades: Sequence[Grade], scopes: list[str], n_resamples: int = 2000,
                     seed: int = 0) -> AgreementReport:
    """Every pair of graders (judge run 0 and humans), and judge self-agreement, on each scope."""
    table = ratings(grades)
    all_scopes = [*scopes, "overall"]
    primary = sorted(n for n in table if "#run" not in n)
    pairs = [pair_agreement(a, b, s, table[a], table[b], n_resamples, seed)
             for a, b in combinations(primary, 2) for s in all_scopes]
    selves = []
    for judge in (n for n in primary if n.startswith("judge:")):
        runs = {n: t for n, t in table.items() if n == judge or n.startswith(judge + "#run")}
        if len(runs) > 1:
            selves += [self_agreement(judge, runs, s, n_resamples, seed) for s in all_scopes]
    return AgreementReport(graders=sorted(table), pairs=pairs, self_agreement=selves)
