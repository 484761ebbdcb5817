"""How far graders agree: every pair of graders on every unit and scope, and a judge with itself.

`ratings` turns judgements into grader -> (record key, unit) -> value (judge runs after the first
are graders of their own, `judge:x#run1`). For each pair of graders (judge run 0 and every
person, in the order they first appear) the units both scored are compared, per unit and per
scope, with statistics that follow the scale, each with a percentile bootstrap interval over
the compared units (`mathlens.stats.agreement`, `mathlens.stats.bootstrap`):

- an ordinal unit (a tutoring item): percent agreement, Cohen's kappa (unweighted for two levels,
  linearly weighted beyond, over the unit's values) and Krippendorff's alpha (ordinal);
- a points unit (a calculus criterion) and a `total` scope (the question total): quadratic-
  weighted kappa, Krippendorff's alpha (interval) and the mean absolute error;
- a `pool` scope of ordinal units (a tutoring dimension; one observation is a response x unit):
  percent agreement, unweighted kappa (the pooled units have different scales) and ordinal alpha.

A scope or unit that the two graders never both scored has no row. A judge asked more than once
(`judge_run` 1, 2, ...) also gets its self-agreement: alpha across its runs (rows = runs,
columns = the units), with the share of units every run scored alike.

Agreement describes the graders, not the graded: every record both scored is one observation,
whatever its configuration or variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.protocol import AnalyzerOptions
from mathlens.stats.agreement import cohen_kappa, krippendorff_alpha, mean_absolute_error, percent_agreement
from mathlens.stats.bootstrap import CI, bootstrap_ci

from .entries import Judgement
from .units import Ordinal, Scope, Unit

Key = tuple[str, str]  # (record key, unit id)
Pair = tuple[float, float]
Weights = Literal["none", "linear", "quadratic"]
Level = Literal["ordinal", "interval"]
#: the unit id under which `ratings` keeps a judgement's total (for `total` scopes)
TOTAL = "#total"


class PairStats(BaseModel):
    """Agreement statistics of two graders over `n` paired observations. `percent` is given on
    ordinal scales and `mae` on points; `kappa_weights` and `alpha_level` say which kappa and
    alpha were computed."""

    n: int
    kappa_weights: Weights
    alpha_level: Level
    percent: CI | None = None
    kappa: CI
    alpha: CI
    mae: CI | None = None


class AgreementRow(PairStats):
    """Agreement of graders `a` and `b` on one unit or scope (`scope`); `unit` is what one
    observation is (`response`, or `response x item` in a pooled scope)."""

    a: str
    b: str
    scope: str
    unit: str


class SelfAgreement(BaseModel):
    """A judge against itself across its repeated runs, on one unit or scope."""

    grader: str
    runs: int
    scope: str
    units: int
    alpha_level: Level
    alpha: CI
    identical_share: float | None


class AgreementReport(BaseModel):
    """The summary of an agreement document (`agreement`, `tutor_agreement`)."""

    rubric: str = ""
    #: every grader, in the order first seen (judge runs after the first as `judge:x#run<k>`)
    graders: list[str] = Field(default_factory=list)
    pairs: list[AgreementRow] = Field(default_factory=list)
    self_agreement: list[SelfAgreement] = Field(default_factory=list)


class AgreementOptions(AnalyzerOptions):
    """How an agreement was computed (the `--resamples` and `--seed` flags)."""

    resamples: int = Field(2000, ge=0)
    seed: int = 0


@dataclass(frozen=True)
class Method:
    """Which statistics a unit or scope gets."""

    level: Level
    weights: Weights
    labels: tuple[float, ...] | None = None

    @classmethod
    def of_unit(cls, unit: Unit) -> Method:
        scale = unit.scale
        if isinstance(scale, Ordinal):
            return cls("ordinal", "linear" if len(scale.values) > 2 else "none", tuple(scale.values))
        return cls("interval", "quadratic")

    @classmethod
    def of_scope(cls, scope: Scope, units: Sequence[Unit]) -> Method:
        members = [u for u in units if u.id in scope.units]
        if scope.combine == "pool" and members and all(isinstance(u.scale, Ordinal) for u in members):
            return cls("ordinal", "none")
        return cls("interval", "quadratic")


def _split(fn: Callable[[list[float], list[float]], float | None]) -> Callable[[Sequence[Pair]], float | None]:
    def stat(pairs: Sequence[Pair]) -> float | None:
        return fn([p[0] for p in pairs], [p[1] for p in pairs])

    return stat


def pair_stats(pairs: Sequence[Pair], method: Method, n_resamples: int = 2000, seed: int = 0) -> PairStats:
    """The statistics `method` calls for, over paired ratings, with bootstrap CIs."""
    items = list(pairs)
    weights = None if method.weights == "none" else method.weights
    labels = list(method.labels) if method.labels is not None else None

    def kappa(a: list[float], b: list[float]) -> float | None:
        return cohen_kappa(a, b, weights=weights, labels=labels)

    def alpha(a: list[float], b: list[float]) -> float | None:
        return krippendorff_alpha([a, b], level=method.level)

    def ci(fn: Callable[[list[float], list[float]], float | None]) -> CI:
        return bootstrap_ci(items, _split(fn), n_resamples, seed=seed)

    ordinal = method.level == "ordinal"
    return PairStats(n=len(items), kappa_weights=method.weights, alpha_level=method.level,
                     percent=ci(percent_agreement) if ordinal else None, kappa=ci(kappa), alpha=ci(alpha),
                     mae=None if ordinal else ci(mean_absolute_error))


def ratings(judgements: Sequence[Judgement]) -> dict[str, dict[Key, float]]:
    """grader -> (record key, unit) -> value for every unit scored, plus (record key, `TOTAL`) for
    every graded judgement's total. A judge is rated on its own points: where a check replaced a
    unit's points (`Judgement.judge_total` set), the judge's own value and total are used."""
    out: dict[str, dict[Key, float]] = {}
    for j in judgements:
        table = out.setdefault(j.rater, {})
        for unit, value in j.own_values().items():
            table[(j.record.key, unit)] = value
        if j.status == "graded" and j.total is not None:
            table[(j.record.key, TOTAL)] = j.judge_total if j.judge_total is not None else j.total
    return out


def _members(scope: Scope | Unit) -> set[str]:
    if isinstance(scope, Unit):
        return {scope.id}
    return {TOTAL} if scope.combine == "total" else set(scope.units)


def pair_row(a: str, b: str, ra: dict[Key, float], rb: dict[Key, float], scope: Scope | Unit, method: Method,
             unit: str, n_resamples: int = 2000, seed: int = 0) -> AgreementRow | None:
    """Agreement of `a` and `b` on the observations of `scope` both scored (None when there are none)."""
    members = _members(scope)
    shared = sorted(k for k in ra.keys() & rb.keys() if k[1] in members)
    if not shared:
        return None
    stats = pair_stats([(ra[k], rb[k]) for k in shared], method, n_resamples, seed)
    return AgreementRow(a=a, b=b, scope=scope.id if isinstance(scope, Unit) else scope.name, unit=unit,
                        **dict(stats))


def self_agreement(base: str, runs: dict[str, dict[Key, float]], scope: Scope | Unit, method: Method,
                   n_resamples: int = 2000, seed: int = 0) -> SelfAgreement | None:
    """Alpha across a judge's runs (rows = runs, columns = observations), resampling observations."""
    names = sorted(runs)
    members = _members(scope)
    keys = sorted({k for r in runs.values() for k in r if k[1] in members})
    if not keys:
        return None
    columns = [tuple(runs[n].get(k) for n in names) for k in keys]

    def alpha(cols: Sequence[tuple[float | None, ...]]) -> float | None:
        return krippendorff_alpha([[c[i] for c in cols] for i in range(len(names))], level=method.level)

    full = [c for c in columns if None not in c]
    identical = sum(len(set(c)) == 1 for c in full) / len(full) if full else None
    return SelfAgreement(grader=base, runs=len(names), scope=scope.id if isinstance(scope, Unit) else scope.name,
                         units=len(keys), alpha_level=method.level,
                         alpha=bootstrap_ci(columns, alpha, n_resamples, seed=seed), identical_share=identical)


def agreement_report(judgements: Sequence[Judgement], units: Sequence[Unit], scopes: Sequence[Scope], *,
                     rubric: str = "", noun: str = "unit", n_resamples: int = 2000, seed: int = 0) -> AgreementReport:
    """Every pair of graders on every unit, then every scope; and each repeated judge with itself.
    `noun` names a unit in the observation of a pooled scope (`response x item`)."""
    table = ratings(judgements)
    primary = [g for g in table if "#run" not in g]
    checks: list[tuple[Scope | Unit, Method, str]] = [(u, Method.of_unit(u), "response") for u in units]
    checks += [(s, Method.of_scope(s, units), f"response x {noun}" if s.combine == "pool" else "response")
               for s in scopes]
    pairs = [row for a, b in combinations(primary, 2) for scope, method, unit in checks
             if (row := pair_row(a, b, table[a], table[b], scope, method, unit, n_resamples, seed)) is not None]
    selves = []
    for judge in (g for g in primary if g.startswith("judge:")):
        runs = {n: t for n, t in table.items() if n == judge or n.startswith(judge + "#run")}
        if len(runs) > 1:
            selves += [s for scope, method, _ in checks
                       if (s := self_agreement(judge, runs, scope, method, n_resamples, seed)) is not None]
    return AgreementReport(rubric=rubric, graders=list(table), pairs=pairs, self_agreement=selves)
