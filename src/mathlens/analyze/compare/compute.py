"""Pair the items of two sides and test each metric's difference.

**Sides.** `plan_sides` turns the runs and `--by` into pairs of sides:

* two runs, no `--by`: run A against run B. A field that holds one value in each run and a
  different one in the other (the model of a run A and a run B that tried a new model, or
  their configuration) is the change being compared, so it is left out of the pairing key;
* two runs, `--by F`: run A's value of F against run B's (each run must hold one value of F);
* one run, `--by F`: each value of F against a reference value: `baseline` for configurations
  (else the first one met), `original` for variants (the unmodified prompt against each ablation
  variant), the first model met for models. Each non-reference group is compared with the
  reference only, not every pair with every other, so the number of tests grows linearly.

**Pairing key.** An item is a record's identity without the compared field: model,
configuration, exam, question, variant and repeat, less the `by` field (`KEY_FIELDS`). Variant
and repeat are always part of the identity (every record has them: `original` and 0 by default),
so repeat k on one side meets repeat k on the other, and a repeat or variant present on one side
only is unpaired. Unpaired items are counted and listed (`Pairing`), never dropped silently.

**Tests.** Accuracy: McNemar's exact test on the discordant pairs, with a paired bootstrap CI
of the accuracy difference. Scores: mean difference B - A with a percentile bootstrap CI and a
sign-flip permutation p-value (`mathlens.stats.paired`). The p-values of every metric of every
comparison form one family, adjusted with Holm (default), Benjamini-Hochberg or not at all.
Robustness is one value per question across its variants, so it is paired per question (model,
configuration, exam, question, less the `by` field) and is not defined for `--by variant`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mathlens.analyze.compare.models import (
    METRICS,
    By,
    ChangedItem,
    CompareOptions,
    CompareReport,
    Comparison,
    MetricName,
    MetricResult,
    Pairing,
    Side,
)
from mathlens.analyze.compare.sources import QuestionKey, RunValues
from mathlens.errors import UserError
from mathlens.runs.documents import RecordRef
from mathlens.stats.paired import adjust, mcnemar_exact, paired_bootstrap

KEY_FIELDS: tuple[str, ...] = ("model", "configuration", "exam_id", "question_id", "variant", "repeat")
REFERENCE = {"configuration": "baseline", "variant": "original"}


@dataclass(frozen=True)
class SideSpec:
    """A run, narrowed to the records whose `by` field equals `value` (all records when `by` is None)."""

    run: RunValues
    by: By | None = None
    value: str | None = None
    #: fields left out of the pairing key besides `by` (two runs that differ in them: module notes)
    unpaired: tuple[str, ...] = ()

    def refs(self) -> list[RecordRef]:
        if self.by is None:
            return self.run.refs
        return [r for r in self.run.refs if getattr(r, self.by) == self.value]

    def side(self) -> Side:
        return Side(run=str(self.run.root), run_id=self.run.run_id, field=self.by, value=self.value)


def _values(run: RunValues, by: By) -> list[str]:
    return list(dict.fromkeys(str(getattr(r, by)) for r in run.refs))


def plan_sides(runs: Sequence[RunValues], by: By | None) -> tuple[list[tuple[SideSpec, SideSpec]], str]:
    """The pairs of sides to compare, and the rule that chose them (module notes)."""
    if len(runs) == 2:
        a, b = runs
        if by is None:
            changed = tuple(f for f in ("model", "configuration")
                            if len(va := _values(a, f)) == 1 and len(vb := _values(b, f)) == 1 and va != vb)
            if not changed:
                return [(SideSpec(a), SideSpec(b))], "run A against run B, items paired on every record field"
            return ([(SideSpec(a, unpaired=changed), SideSpec(b, unpaired=changed))],
                    f"run A against run B, items paired on every record field but {' and '.join(changed)} "
                    "(one value per run, different in each)")
        va, vb = _values(a, by), _values(b, by)
        for run, vals in ((a, va), (b, vb)):
            if len(vals) != 1:
                raise UserError(f"{run.root}: holds {len(vals)} {by} values ({', '.join(vals) or 'none'}); comparing "
                                f"two runs --by {by} needs one {by} per run (or compare within one run: "
                                f"`mathlens compare {run.root} --by {by}`)")
        return ([(SideSpec(a, by, va[0]), SideSpec(b, by, vb[0]))],
                f"run A's {by} against run B's, items paired on every other record field")
    if len(runs) != 1:
        raise UserError(f"compare takes one run (with --by) or two runs, not {len(runs)}")
    if by is None:
        raise UserError("one run is compared with itself by a field: add --by configuration, variant or model")
    run = runs[0]
    vals = _values(run, by)
    if len(vals) < 2:
        raise UserError(f"{run.root}: has one {by} only ({', '.join(vals) or 'none'}): nothing to compare --by {by}")
    ref = REFERENCE.get(by, vals[0])
    if ref not in vals:
        ref = vals[0]
    pairs = [(SideSpec(run, by, ref), SideSpec(run, by, v)) for v in vals if v != ref]
    return pairs, f"each {by} against {by} {ref!r} of the same run, items paired on every other record field"


def _key(ref: RecordRef, fields: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(getattr(ref, f)) for f in fields)


def _item_ids(keys: Iterable[tuple[str, ...]], fields: tuple[str, ...]) -> dict[tuple[str, ...], str]:
    """Readable ids: exam/question, then the other key fields that vary (variant, r<repeat>, model, configuration)."""
    keys = list(keys)
    varying = {f for i, f in enumerate(fields) if len({k[i] for k in keys}) > 1}
    out = {}
    for k in keys:
        d = dict(zip(fields, k, strict=True))
        parts = [f"{d.get('exam_id', '')}/{d.get('question_id', '')}"]
        if "variant" in d and ("variant" in varying or d["variant"] != "original"):
            parts.append(d["variant"])
        if "repeat" in d and ("repeat" in varying or d["repeat"] != "0"):
            parts.append(f"r{d['repeat']}")
        parts += [d[f] for f in ("model", "configuration") if f in varying]
        out[k] = " · ".join(parts)
    return out


def _question(ref: RecordRef) -> QuestionKey:
    return ref.model, ref.configuration, ref.exam_id, ref.question_id


def _unavailable(metric: MetricName, a: RunValues, b: RunValues, by: By | None) -> MetricResult | None:
    title = METRICS[metric][0]
    for run in (a, b):
        if metric in run.unavailable:
            u = run.unavailable[metric]
            return MetricResult(metric=metric, title=title, status="unavailable", reason=u.reason,
                                command=u.command)
    if metric == "robustness" and by == "variant":
        return MetricResult(metric="robustness", title=title, status="unavailable",
                            reason="robustness is one value per question across all its variants; it cannot differ "
                                   "between variants")
    sa, sb = a.scales.get(metric), b.scales.get(metric)
    if sa is not None and sb is not None and sa != sb:
        return MetricResult(metric=metric, title=title, status="unavailable",
                            reason=f"the sides were analysed on different scales ({sa} against {sb})",
                            command=f"re-run the analysis of one run with the other's settings ({METRICS[metric][1]})")
    return None


def _test(metric: MetricName, xs: list[float], ys: list[float], missing: int, opts: CompareOptions) -> MetricResult:
    title = METRICS[metric][0]
    if not xs:
        return MetricResult(metric=metric, title=title, status="no_pairs", missing=missing,
                            reason="no paired item has a value on both sides")
    boot = paired_bootstrap(xs, ys, n_resamples=opts.resamples, confidence=opts.confidence, seed=opts.seed)
    result = MetricResult(metric=metric, title=title, status="ok", n=boot.n, missing=missing,
                          mean_a=boot.mean_a, mean_b=boot.mean_b, delta=boot.mean_diff, ci_low=boot.low,
                          ci_high=boot.high)
    if metric == "accuracy":
        b = sum(1 for x, y in zip(xs, ys, strict=True) if x == 1.0 and y == 0.0)
        c = sum(1 for x, y in zip(xs, ys, strict=True) if x == 0.0 and y == 1.0)
        return result.model_copy(update={"test": "McNemar exact", "p_value": mcnemar_exact(b, c).p_value,
                                         "b": b, "c": c})
    test = "sign-flip permutation" + (" (exact)" if boot.p_exact else f" ({opts.resamples} draws)")
    return result.model_copy(update={"test": test, "p_value": boot.p_value})


def compare_sides(index: int, sa: SideSpec, sb: SideSpec, opts: CompareOptions) -> Comparison:
    """One comparison: pairing, every metric, and the items whose verdict changed."""
    fields = tuple(f for f in KEY_FIELDS if f != sa.by and f not in sa.unpaired)
    side_a = {_key(r, fields): r for r in sa.refs()}
    side_b = {_key(r, fields): r for r in sb.refs()}
    paired = [k for k in side_a if k in side_b]
    only_a = [k for k in side_a if k not in side_b]
    only_b = [k for k in side_b if k not in side_a]
    ids = _item_ids([*side_a, *only_b], fields)
    pairing = Pairing(key=list(fields), paired=len(paired), only_a=len(only_a), only_b=len(only_b),
                      only_a_ids=[ids[k] for k in only_a[:opts.max_listed]],
                      only_b_ids=[ids[k] for k in only_b[:opts.max_listed]])
    a, b = sa.run, sb.run
    metrics: list[MetricResult] = []
    for metric in METRICS:
        gone = _unavailable(metric, a, b, sa.by)
        if gone is not None:
            metrics.append(gone)
            continue
        xs: list[float] = []
        ys: list[float] = []
        missing = 0
        if metric == "robustness":
            units = dict.fromkeys((_question(side_a[k]), _question(side_b[k])) for k in paired)
            for qa, qb in units:
                x, y = a.robustness.get(qa), b.robustness.get(qb)
                if x is None or y is None:
                    missing += 1
                else:
                    xs.append(x)
                    ys.append(y)
        else:
            va, vb = a.values_of(metric), b.values_of(metric)
            for k in paired:
                x, y = va.get(side_a[k].key), vb.get(side_b[k].key)
                if x is None or y is None:
                    missing += 1
                else:
                    xs.append(x)
                    ys.append(y)
        result = _test(metric, xs, ys, missing, opts)
        notes = list(dict.fromkeys(n for n in (a.stale.get(metric), b.stale.get(metric)) if n))
        metrics.append(result.model_copy(update={"stale": notes}) if notes else result)
    changed = _changed(index, paired, side_a, side_b, ids, a, b)
    up = sum(1 for c in changed if c.direction == "wrong_to_correct")
    return Comparison(index=index, a=sa.side(), b=sb.side(), pairing=pairing, metrics=metrics,
                      correct_to_wrong=len(changed) - up, wrong_to_correct=up, changed=changed[:opts.max_listed])


def _changed(index: int, paired: list[tuple[str, ...]], side_a: dict[tuple[str, ...], RecordRef],
             side_b: dict[tuple[str, ...], RecordRef], ids: dict[tuple[str, ...], str], a: RunValues,
             b: RunValues) -> list[ChangedItem]:
    va, vb = a.values_of("accuracy"), b.values_of("accuracy")
    out = []
    for k in paired:
        ra, rb = side_a[k], side_b[k]
        x, y = va.get(ra.key), vb.get(rb.key)
        if x is None or y is None or x == y:
            continue
        (sa, pa), (sb, pb) = a.answers.get(ra.key, ("?", None)), b.answers.get(rb.key, ("?", None))
        out.append(ChangedItem(comparison=index, item=ids[k], record=ra, record_b=rb, status_a=sa, status_b=sb,
                               predicted_a=pa, predicted_b=pb,
                               direction="correct_to_wrong" if x > y else "wrong_to_correct"))
    return out


def correct(comparisons: list[Comparison], opts: CompareOptions) -> int:
    """Adjust every p-value of every comparison together (in place); returns the family size."""
    slots = [(c, i) for c in comparisons for i, m in enumerate(c.metrics) if m.p_value is not None]
    adjusted = adjust([c.metrics[i].p_value or 0.0 for c, i in slots], opts.correction)
    for (c, i), p in zip(slots, adjusted, strict=True):
        c.metrics[i] = c.metrics[i].model_copy(update={"p_adjusted": p, "significant": p < opts.alpha})
    return len(slots)


def compare_runs(runs: Sequence[RunValues], opts: CompareOptions) -> CompareReport:
    """Every comparison the runs and `opts.by` call for, corrected for multiple testing."""
    pairs, rule = plan_sides(runs, opts.by)
    comparisons = [compare_sides(i, sa, sb, opts) for i, (sa, sb) in enumerate(pairs)]
    family = correct(comparisons, opts)
    return CompareReport(runs=[str(r.root) for r in runs], options=opts, rule=rule, family=family,
                         comparisons=comparisons)
