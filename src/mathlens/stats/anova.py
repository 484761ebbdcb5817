"""Two-way ANOVA with assumption checks, Tukey HSD with compact letters, and a rank-based fallback.

`two_way_anova(rows, dv, a, b)` fits `dv ~ C(a) * C(b)` by ordinary least squares (statsmodels
`ols` + `anova_lm`, type II sums of squares by default, which equal type I in balanced designs) and
reports, per term, F, its degrees of freedom, p and partial eta squared
SS_effect / (SS_effect + SS_residual). It then checks the assumptions:

* equal variances across the a x b cells: Levene's test centred on the median (Brown-Forsythe);
* normal residuals: Shapiro-Wilk (D'Agostino-Pearson above 5000 residuals).

Post hoc: Tukey HSD on each main factor's groups (one-way, Tukey-Kramer), with a compact
letter display: groups sharing a letter do not differ significantly. When an assumption check
fails, the result also carries Kruskal-Wallis tests with Dunn's pairwise tests (Holm-adjusted) and
says so in `reported = "nonparametric"`; the ANOVA numbers are kept beside them.

Values that do not exist (F with no residual variance, a test on constant data) are `None` with a
note, never NaN.
"""

from __future__ import annotations

import math
import string
import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict
from scipy import stats as sps


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Effect(Frozen):
    """One ANOVA term."""

    term: str
    sum_sq: float | None
    df: float
    F: float | None
    p: float | None
    partial_eta_sq: float | None


class Check(Frozen):
    """An assumption test; `passed` is None when the test could not be run (see `note`)."""

    test: str
    statistic: float | None = None
    p: float | None = None
    passed: bool | None = None
    note: str = ""


class Pair(Frozen):
    """One pairwise comparison; `mean_diff` is mean(b) - mean(a)."""

    a: str
    b: str
    mean_diff: float
    p_adj: float | None
    low: float | None = None
    high: float | None = None
    reject: bool


class PostHoc(Frozen):
    """Pairwise comparisons of one factor's groups, with their compact letter display."""

    factor: str
    method: Literal["tukey-hsd", "dunn-holm"]
    means: dict[str, float]
    n: dict[str, int]
    pairs: list[Pair]
    letters: dict[str, str]
    note: str = ""


class RankTest(Frozen):
    """Kruskal-Wallis on one factor, with Dunn/Holm pairwise tests."""

    factor: str
    test: Literal["kruskal-wallis"] = "kruskal-wallis"
    H: float | None
    df: int
    p: float | None
    posthoc: PostHoc | None
    note: str = ""


class AnovaResult(Frozen):
    """Everything one two-way analysis reports."""

    status: Literal["ok", "not_estimable"]
    dv: str
    factors: tuple[str, str]
    n: int
    typ: int = 2
    effects: list[Effect] = []
    residual_df: float | None = None
    levene: Check | None = None
    normality: Check | None = None
    assumptions_met: bool | None = None
    posthoc: list[PostHoc] = []
    nonparametric: list[RankTest] = []
    reported: Literal["anova", "nonparametric"] = "anova"
    alpha: float = 0.05
    note: str = ""

    def effect(self, term: str) -> Effect:
        """The row of one term (`a`, `b` or `a:b`)."""
        for e in self.effects:
            if e.term == term:
                return e
        raise KeyError(term)

    def posthocs(self) -> list[PostHoc]:
        """Every post hoc test: the ANOVA's, then those of the rank-based tests."""
        return [*self.posthoc, *(t.posthoc for t in self.nonparametric if t.posthoc is not None)]


def _num(x: Any) -> float | None:
    """A finite float, else None (no NaN leaves this module)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _letter(i: int) -> str:
    alphabet = string.ascii_lowercase
    return alphabet[i] if i < len(alphabet) else f"{alphabet[i % 26]}{i // 26}"


def compact_letters(means: Mapping[str, float], significant: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Compact letter display by insert-and-absorb: groups that share a letter are not significantly
    different. Letters are given in order of decreasing mean ('a' marks the highest group).

    >>> compact_letters({"x": 3.0, "y": 2.0, "z": 1.0}, [("x", "z")])
    {'x': 'a', 'y': 'ab', 'z': 'b'}
    """
    order = sorted(means, key=lambda g: (-means[g], g))
    rank = {g: i for i, g in enumerate(order)}
    columns: list[frozenset[str]] = [frozenset(order)]
    ordered = (tuple(sorted(p, key=rank.__getitem__)) for p in significant)
    for i, j in sorted(ordered, key=lambda p: (rank[p[0]], rank[p[1]])):
        split: list[frozenset[str]] = []
        for col in columns:
            if i in col and j in col:
                split += [col - {i}, col - {j}]
            else:
                split.append(col)
        # absorb: drop empty columns, duplicates and columns contained in another
        kept: list[frozenset[str]] = []
        for k, col in enumerate(split):
            if not col or any(col < other for other in split) or col in split[:k]:
                continue
            kept.append(col)
        columns = kept
    columns.sort(key=lambda c: sorted(rank[g] for g in c))
    letters = {g: "" for g in order}
    for idx, col in enumerate(columns):
        for g in col:
            letters[g] += _letter(idx)
    return {g: "".join(sorted(letters[g])) for g in order}


def _group_stats(values: Sequence[float], groups: Sequence[str]) -> tuple[dict[str, float], dict[str, int]]:
    df = pd.DataFrame({"y": list(values), "g": [str(g) for g in groups]})
    agg = df.groupby("g")["y"].agg(["mean", "count"])
    return ({str(k): float(v) for k, v in agg["mean"].items()}, {str(k): int(v) for k, v in agg["count"].items()})


@lru_cache(maxsize=256)
def _q_critical(alpha: float, k: int, df: float) -> float:
    """Upper `alpha` point of the studentized range (slow to compute, and the same for many tests)."""
    return float(sps.studentized_range.ppf(1 - alpha, k, df))


def tukey_hsd(values: Sequence[float], groups: Sequence[str], alpha: float = 0.05, factor: str = "group") -> PostHoc:
    """Tukey's honestly significant difference test over all pairs of groups (Tukey-Kramer for
    unequal sizes): q = |mean_b - mean_a| / sqrt(MSE / 2 * (1/n_a + 1/n_b)) on N - k degrees of
    freedom, p from the studentized range distribution, and simultaneous intervals
    diff +/- q_crit * sqrt(MSE / 2 * (1/n_a + 1/n_b)).

    >>> r = tukey_hsd([1, 2, 3, 7, 8, 9], ["a", "a", "a", "b", "b", "b"])
    >>> r.pairs[0].reject, r.letters
    (True, {'b': 'a', 'a': 'b'})
    """
    means, counts = _group_stats(values, groups)
    labels = np.asarray([str(g) for g in groups])
    if len(means) < 2:
        return PostHoc(factor=factor, method="tukey-hsd", means=means, n=counts, pairs=[],
                       letters={g: "a" for g in means}, note="fewer than two groups")
    y = np.asarray(values, dtype=float)
    k, n_total = len(means), len(y)
    df = n_total - k
    within = sum(float(np.sum((y[labels == g] - m) ** 2)) for g, m in means.items())
    if within == 0.0 or df < 1:
        # no spread inside any group: the studentized range divides by zero, so there is no test
        pairs = [Pair(a=a, b=b, mean_diff=means[b] - means[a], p_adj=None, reject=False)
                 for a, b in combinations(sorted(means), 2)]
        return PostHoc(factor=factor, method="tukey-hsd", means=means, n=counts, pairs=pairs,
                       letters={g: "a" for g in means}, note="no variation within groups: no test")
    mse = within / df
    q_crit = _q_critical(alpha, k, float(df))
    pairs = []
    for a, b in combinations(sorted(means), 2):
        diff = means[b] - means[a]
        se = math.sqrt(mse / 2.0 * (1.0 / counts[a] + 1.0 / counts[b]))
        p = _num(sps.studentized_range.sf(abs(diff) / se, k, df))
        pairs.append(Pair(a=a, b=b, mean_diff=diff, p_adj=None if p is None else min(1.0, p),
                          low=diff - q_crit * se, high=diff + q_crit * se, reject=abs(diff) / se > q_crit))
    letters = compact_letters(means, [(p.a, p.b) for p in pairs if p.reject])
    return PostHoc(factor=factor, method="tukey-hsd", means=means, n=counts, pairs=pairs, letters=letters)


def _holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def dunn_holm(values: Sequence[float], groups: Sequence[str], alpha: float = 0.05, factor: str = "group") -> PostHoc:
    """Dunn's rank test for all pairs (normal approximation with the tie correction), Holm-adjusted."""
    means, counts = _group_stats(values, groups)
    y = np.asarray(values, dtype=float)
    g = np.asarray([str(x) for x in groups])
    n = len(y)
    ranks = sps.rankdata(y)
    _, tie_counts = np.unique(y, return_counts=True)
    tie_term = float(np.sum(tie_counts**3 - tie_counts)) / (12.0 * (n - 1)) if n > 1 else 0.0
    mean_rank = {k: float(ranks[g == k].mean()) for k in means}
    names = sorted(means)
    raw: list[float] = []
    diffs: list[tuple[str, str, float]] = []
    for a, b in combinations(names, 2):
        var = (n * (n + 1) / 12.0 - tie_term) * (1.0 / counts[a] + 1.0 / counts[b])
        z = (mean_rank[a] - mean_rank[b]) / math.sqrt(var) if var > 0 else 0.0
        raw.append(float(2 * sps.norm.sf(abs(z))))
        diffs.append((a, b, means[b] - means[a]))
    adjusted = _holm(raw) if raw else []
    pairs = [Pair(a=a, b=b, mean_diff=d, p_adj=p, reject=p < alpha)
             for (a, b, d), p in zip(diffs, adjusted, strict=True)]
    letters = compact_letters(means, [(p.a, p.b) for p in pairs if p.reject])
    return PostHoc(factor=factor, method="dunn-holm", means=means, n=counts, pairs=pairs, letters=letters)


def kruskal_dunn(values: Sequence[float], groups: Sequence[str], alpha: float = 0.05,
                 factor: str = "group") -> RankTest:
    """Kruskal-Wallis H test of one factor, followed by Dunn/Holm pairwise comparisons."""
    labels = [str(x) for x in groups]
    names = sorted(set(labels))
    samples = [[v for v, lab in zip(values, labels, strict=True) if lab == k] for k in names]
    if len(names) < 2:
        return RankTest(factor=factor, H=None, df=0, p=None, posthoc=None, note="fewer than two groups")
    if len(set(map(float, values))) < 2:
        return RankTest(factor=factor, H=None, df=len(names) - 1, p=None, posthoc=None,
                        note="all values are equal: no test")
    h, p = sps.kruskal(*samples)
    return RankTest(factor=factor, H=_num(h), df=len(names) - 1, p=_num(p),
                    posthoc=dunn_holm(values, labels, alpha, factor))


def _frame(rows: Sequence[Mapping[str, Any]] | pd.DataFrame, dv: str, a: str, b: str) -> pd.DataFrame:
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    for col in (dv, a, b):
        if col not in df.columns:
            raise ValueError(f"no column {col!r} in the data")
    out = pd.DataFrame({"y": pd.to_numeric(df[dv], errors="coerce"), "A": df[a].astype(str), "B": df[b].astype(str)})
    return out.dropna(subset=["y"]).reset_index(drop=True)


def _levene(df: pd.DataFrame, alpha: float) -> Check:
    cells = [grp["y"].to_numpy() for _, grp in df.groupby(["A", "B"]) if len(grp) >= 2]
    if len(cells) < 2:
        return Check(test="levene (median)", note="fewer than two cells with two or more values")
    if all(float(np.var(c)) == 0.0 for c in cells):
        return Check(test="levene (median)", note="every cell is constant")
    with np.errstate(divide="ignore", invalid="ignore"):
        stat, p = sps.levene(*cells, center="median")
    pv = _num(p)
    return Check(test="levene (median)", statistic=_num(stat), p=pv, passed=None if pv is None else pv >= alpha)


def _normality(resid: np.ndarray, alpha: float) -> Check:
    if len(resid) < 3 or float(np.std(resid)) < 1e-12:
        return Check(test="shapiro-wilk", note="too few or constant residuals")
    if len(resid) > 5000:
        stat, p = sps.normaltest(resid)
        name = "dagostino-pearson"
    else:
        stat, p = sps.shapiro(resid)
        name = "shapiro-wilk"
    pv = _num(p)
    return Check(test=name, statistic=_num(stat), p=pv, passed=None if pv is None else pv >= alpha)


def two_way_anova(rows: Sequence[Mapping[str, Any]] | pd.DataFrame, dv: str, a: str, b: str,
                  alpha: float = 0.05, typ: int = 2) -> AnovaResult:
    """Two-way ANOVA of `dv` on factors `a`, `b` and their interaction (see the module notes)."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = _frame(rows, dv, a, b)
    base = {"dv": dv, "factors": (a, b), "n": len(df), "typ": typ, "alpha": alpha}
    few = [f for f, col in ((a, "A"), (b, "B")) if df[col].nunique() < 2]
    if few:
        return AnovaResult(status="not_estimable", **base,
                           note=f"factor(s) {', '.join(few)} have fewer than two levels")
    fit = smf.ols("y ~ C(A) * C(B)", data=df).fit()
    if fit.df_resid < 1:
        return AnovaResult(status="not_estimable", **base, note="no residual degrees of freedom (one value per cell)")
    with warnings.catch_warnings():  # scores constant within every cell: statsmodels warns, F comes back NaN
        warnings.simplefilter("ignore")
        table = anova_lm(fit, typ=typ)
    ss_res = float(table.loc["Residual", "sum_sq"])
    # no variance within the cells (up to rounding): F would divide by zero, or by rounding noise
    flat = not ss_res > 1e-12 * max(1.0, float(np.sum((df["y"] - df["y"].mean()) ** 2)))
    constant = df["y"].nunique() < 2  # every sum of squares is rounding noise: none is reported
    names = {"C(A)": a, "C(B)": b, "C(A):C(B)": f"{a}:{b}"}
    effects = []
    for raw, term in names.items():
        if raw not in table.index:
            continue
        row = table.loc[raw]
        ss = None if constant else _num(row["sum_sq"])  # NaN for a term the design cannot estimate (an empty cell)
        denom = ss + ss_res if ss is not None and math.isfinite(ss_res) else None
        effects.append(Effect(term=term, sum_sq=ss, df=float(row["df"]), F=None if flat else _num(row["F"]),
                              p=None if flat else _num(row["PR(>F)"]),
                              partial_eta_sq=ss / denom if ss is not None and denom else None))
    levene = _levene(df, alpha)
    normality = _normality(np.asarray(fit.resid, dtype=float), alpha)
    checks = [c.passed for c in (levene, normality) if c.passed is not None]
    met = all(checks) if checks else None
    posthoc = [tukey_hsd(df["y"].tolist(), df[col].tolist(), alpha, factor) for factor, col in ((a, "A"), (b, "B"))]
    rank_tests: list[RankTest] = []
    if met is False:
        rank_tests = [kruskal_dunn(df["y"].tolist(), df[col].tolist(), alpha, factor)
                      for factor, col in ((a, "A"), (b, "B"))]
    failed = [c.test for c in (levene, normality) if c.passed is False]
    note = f"assumption check(s) failed ({', '.join(failed)}): Kruskal-Wallis with Dunn/Holm reported" if failed else ""
    if flat:
        flat_note = "the scores do not vary within the cells (residual sum of squares 0): F and p are undefined"
        note = f"{flat_note}; {note}" if note else flat_note
    return AnovaResult(status="ok", **base, effects=effects, residual_df=float(fit.df_resid), levene=levene,
                       normality=normality, assumptions_met=met, posthoc=posthoc, nonparametric=rank_tests,
                       reported="nonparametric" if failed else "anova", note=note)
