"""How far the MAPLE step judge agrees with people on the labels of each step.

The MAPLE study (seed 001, §4.3 and A.3) validates its judge by annotating wrong solutions by hand
with several error labels each and comparing the judge's labels with them. `mathlens
maple-agreement RUN --human FILE` does that for a run: it reads human step labels (`human.py`),
pairs them with the labels of the `MAPLE` document, and writes the `MAPLE_AGREEMENT` document,
`RUN/analysis/maple_agreement.jsonl`.

**Units.** A solution is compared when a person annotated it and the judge judged it (its
`judgement` has status `ok`); an annotated solution the judge did not judge (a right answer, a
degenerate response, an unusable judge reply) is counted in `skipped` by reason. Every step of a
compared solution is one unit, with two label sets: the judge's and the person's (empty = no
error). The judge's labels are those the score counts (`step_labels`: judge and judge-free
detectors merged; `labels_from="merged"`) or the judge's own (`labels_from="judge"`).

**Per label** (every label of the run's label set, plus `any`, "the step has some label"): over
the steps, how often the judge and the person give it (`judge_yes`, `human_yes`, `both_yes`), the
percent agreement (steps where both give it or both do not), and Cohen's kappa of the two yes/no
ratings. **Per step**: the share of steps whose two label sets are identical, over all steps and
over the steps either side labelled. **Per solution**: the share whose first erroneous step (the
lowest labelled one, none for a solution without labels) is the same for both.

**Intervals.** Steps of one solution are not independent, so every interval is a percentile
bootstrap over solutions (`mathlens.stats.bootstrap.bootstrap_ci`, seeded): a resample draws whole
solutions with all their steps. A kappa is undefined (`status: undefined`) when neither side's
rating varies (both never give the label, for instance).

The headline table pools every compared solution: the judge is the rater under study, whatever
model wrote the solutions. Each (model, configuration, variant) cell also gets its own table, so
baseline, RAG and ablation variants are never only seen pooled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from mathlens.analyze.maple.human import HumanAnnotation, read_human_labels
from mathlens.analyze.maple.labels import LabelSet
from mathlens.analyze.maple.results import MAPLE, SolutionMaple
from mathlens.errors import UserError
from mathlens.runs.documents import DocumentSpec, RecordRef
from mathlens.runs.judge import judged_command
from mathlens.runs.store import RunStore
from mathlens.stats.bootstrap import CI, bootstrap_ci

LabelSource = Literal["merged", "judge"]
LABEL_SOURCES: tuple[LabelSource, ...] = ("merged", "judge")
#: The row of "the step has some label, whichever".
ANY = "any"


class StepPair(BaseModel):
    """One step of a compared solution that the judge or the person labelled."""

    step: int
    judge: list[str] = Field(default_factory=list)
    human: list[str] = Field(default_factory=list)
    identical: bool


class SolutionAgreement(BaseModel):
    """One compared solution: its labelled steps on both sides and its first errors.

    `steps` lists only the steps either side labelled; the other `n_steps - len(steps)` steps are
    error-free for both (identical)."""

    record: RecordRef
    annotator: str = ""
    n_steps: int
    steps: list[StepPair] = Field(default_factory=list)
    identical_steps: int
    judge_first_error: int | None = None
    human_first_error: int | None = None
    first_error_agrees: bool


class LabelAgreement(BaseModel):
    """Agreement on one label over the steps of the compared solutions."""

    label: str
    name: str
    n: int = Field(description="steps compared")
    judge_yes: int
    human_yes: int
    both_yes: int
    percent_agreement: float | None = Field(description="share of steps where both give it or both do not")
    kappa: CI = Field(description="Cohen's kappa with a bootstrap CI over solutions")


class AgreementTable(BaseModel):
    """Every agreement figure over one set of solutions: all of them (`cell` None) or one
    (model, configuration, variant) cell."""

    cell: tuple[str, str, str] | None = None
    n_solutions: int
    n_steps: int
    n_labelled_steps: int = Field(description="steps the judge or the person labelled")
    labels: list[LabelAgreement] = Field(default_factory=list)
    any_label: LabelAgreement
    identical_steps: CI = Field(description="share of steps with an identical label set")
    identical_labelled_steps: CI = Field(description="the same share over the steps either side labelled")
    first_error_agreement: CI = Field(description="share of solutions whose first erroneous step is the same")


class MapleAgreementSummary(BaseModel):
    """The agreement document's summary: what was compared with what, and the tables."""

    human_file: str
    human_sha256: str
    human_format: str
    labels_from: LabelSource
    label_set: str = Field(description="label set id and version")
    judge: str
    n_annotated: int
    n_compared: int
    skipped: dict[str, int] = Field(default_factory=dict, description="annotated but not compared, by reason")
    n_judged_not_annotated: int = 0
    n_resamples: int
    seed: int
    overall: AgreementTable
    cells: list[AgreementTable] = Field(default_factory=list)


MAPLE_AGREEMENT = DocumentSpec("maple_agreement", 1, SolutionAgreement, MapleAgreementSummary,
                               rerun="mathlens maple-agreement RUN --human FILE")


def judge_labels_by_step(sol: SolutionMaple, source: LabelSource) -> dict[int, list[str]]:
    """Step number -> the judge's labels on that step (`merged`: as the score counts them)."""
    own = sol.judgement.steps if sol.judgement is not None else []
    items = own if source == "judge" else sol.step_labels
    out: dict[int, list[str]] = {}
    for item in items:
        out.setdefault(item.step, [])
        out[item.step] += [lab for lab in item.labels if lab not in out[item.step]]
    return {k: v for k, v in out.items() if v}


def is_judged(sol: SolutionMaple) -> bool:
    """Whether the judge gave a usable verdict on the solution."""
    return sol.judgement is not None and sol.judgement.status == "ok"


def skip_reason(sol: SolutionMaple) -> str:
    """Why an annotated solution is not compared."""
    if sol.judgement is not None:
        return "judge reply unusable (unjudged)"
    if sol.status == "degenerate":
        return "degenerate response (not judged)"
    if sol.answer_status == "correct":
        return "right answer (not judged)"
    return f"not judged (status {sol.status})"


def compare(sol: SolutionMaple, human: HumanAnnotation, source: LabelSource) -> SolutionAgreement:
    """The two label sets of every step of one solution."""
    judge = judge_labels_by_step(sol, source)
    person = {s.step: list(s.labels) for s in human.steps}
    pairs = [StepPair(step=i, judge=judge.get(i, []), human=person.get(i, []),
                      identical=set(judge.get(i, [])) == set(person.get(i, [])))
             for i in sorted(set(judge) | set(person))]
    first_j, first_h = min(judge, default=None), min(person, default=None)
    return SolutionAgreement(record=sol.record, annotator=human.annotator, n_steps=len(sol.steps), steps=pairs,
                             identical_steps=len(sol.steps) - sum(not p.identical for p in pairs),
                             judge_first_error=first_j, human_first_error=first_h,
                             first_error_agrees=first_j == first_h)


def kappa_2x2(both: float, judge_only: float, human_only: float, neither: float) -> float | None:
    """Cohen's kappa of two yes/no ratings from their 2x2 counts; None when chance agreement is 1
    (neither rating varies). Written as 2(ad - bc) / ((a + b)(b + d) + (a + c)(c + d)), the same
    value as (p_o - p_e) / (1 - p_e), exact on whole counts (a kappa of 0 prints as 0, not -0).

    >>> kappa_2x2(1, 0, 1, 2)
    0.5
    """
    a, b, c, d = both, judge_only, human_only, neither
    denominator = (a + b) * (b + d) + (a + c) * (c + d)
    if denominator <= 0:
        return None
    return 2 * (a * d - b * c) / denominator + 0.0


def _counts(sol: SolutionAgreement, label: str) -> tuple[int, int, int, int]:
    """(both, judge only, human only, neither) for one label over the steps of one solution."""
    def has(labels: list[str]) -> bool:
        return bool(labels) if label == ANY else label in labels

    both = sum(has(p.judge) and has(p.human) for p in sol.steps)
    judge_only = sum(has(p.judge) and not has(p.human) for p in sol.steps)
    human_only = sum(has(p.human) and not has(p.judge) for p in sol.steps)
    return both, judge_only, human_only, sol.n_steps - both - judge_only - human_only


def _ratio_ci(num: np.ndarray, den: np.ndarray, n_resamples: int, seed: int) -> CI:
    """sum(num) / sum(den) over solutions, with a bootstrap interval over solutions."""
    def stat(idx: Sequence[int]) -> float | None:
        d = float(den[list(idx)].sum())
        return float(num[list(idx)].sum()) / d if d > 0 else None

    return bootstrap_ci(list(range(len(num))), stat, n_resamples=n_resamples, seed=seed)


def _label_row(sols: list[SolutionAgreement], label: str, name: str, n_resamples: int, seed: int) -> LabelAgreement:
    counts = np.asarray([_counts(s, label) for s in sols], dtype=float).reshape(-1, 4)
    both, judge_only, human_only, neither = (int(x) for x in counts.sum(axis=0))
    n = both + judge_only + human_only + neither

    def stat(idx: Sequence[int]) -> float | None:
        return kappa_2x2(*(float(x) for x in counts[list(idx)].sum(axis=0)))

    kappa: CI = bootstrap_ci(list(range(len(sols))), stat, n_resamples=n_resamples, seed=seed)
    return LabelAgreement(label=label, name=name, n=n, judge_yes=both + judge_only, human_yes=both + human_only,
                          both_yes=both, percent_agreement=(both + neither) / n if n else None, kappa=kappa)


def agreement_table(sols: list[SolutionAgreement], labels: LabelSet, cell: tuple[str, str, str] | None = None,
                    n_resamples: int = 2000, seed: int = 0) -> AgreementTable:
    """Every figure of one table over `sols` (see the module notes)."""
    steps = np.asarray([s.n_steps for s in sols], dtype=float)
    identical = np.asarray([s.identical_steps for s in sols], dtype=float)
    labelled = np.asarray([len(s.steps) for s in sols], dtype=float)
    identical_labelled = np.asarray([sum(p.identical for p in s.steps) for s in sols], dtype=float)
    first = [float(s.first_error_agrees) for s in sols]
    return AgreementTable(
        cell=cell, n_solutions=len(sols), n_steps=int(steps.sum()), n_labelled_steps=int(labelled.sum()),
        labels=[_label_row(sols, lab.id, lab.name, n_resamples, seed) for lab in labels.labels],
        any_label=_label_row(sols, ANY, "any label", n_resamples, seed),
        identical_steps=_ratio_ci(identical, steps, n_resamples, seed),
        identical_labelled_steps=_ratio_ci(identical_labelled, labelled, n_resamples, seed),
        first_error_agreement=bootstrap_ci(first, n_resamples=n_resamples, seed=seed))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def import_human_labels(store: RunStore, human: Path, labels_from: LabelSource = "merged", n_resamples: int = 2000,
                        seed: int = 0, progress: Callable[[str], None] | None = None) -> Path:
    """Read `human` against the run's MAPLE document, compare, write `MAPLE_AGREEMENT`; its path."""
    if labels_from not in LABEL_SOURCES:
        raise UserError(f"labels_from must be one of {', '.join(LABEL_SOURCES)}, not {labels_from!r}")
    if n_resamples < 0:
        raise UserError("the number of bootstrap resamples must not be negative")
    manifest = store.manifest()
    doc = MAPLE.read(store.root)
    if doc is None:
        raise UserError(f"{store.root}: no MAPLE document to compare with; run "
                        f"`{judged_command(f'mathlens maple {store.root}', manifest)}` first")
    solutions = {s.record.key: s for s in MAPLE.entries(store.root)}
    read = read_human_labels(human, solutions, doc.summary.labels)
    compared: list[SolutionAgreement] = []
    skipped: dict[str, int] = {}
    for ann in read.annotations:
        sol = solutions[ann.key]
        if is_judged(sol):
            compared.append(compare(sol, ann, labels_from))
        else:
            reason = skip_reason(sol)
            skipped[reason] = skipped.get(reason, 0) + 1
    if progress is not None:
        progress(f"{len(compared)} solution(s) compared, {sum(skipped.values())} skipped")
    annotated = {a.key for a in read.annotations}
    labels = doc.summary.labels
    cells: dict[tuple[str, str, str], list[SolutionAgreement]] = {}
    for c in compared:
        cells.setdefault(c.record.group, []).append(c)
    summary = MapleAgreementSummary(
        human_file=str(human), human_sha256=_sha256(human), human_format=read.format, labels_from=labels_from,
        label_set=f"{labels.id} v{labels.version}", judge=doc.summary.judge, n_annotated=len(read.annotations),
        n_compared=len(compared), skipped=skipped,
        n_judged_not_annotated=sum(is_judged(s) and k not in annotated for k, s in solutions.items()),
        n_resamples=n_resamples, seed=seed,
        overall=agreement_table(compared, labels, None, n_resamples, seed),
        cells=[agreement_table(members, labels, cell, n_resamples, seed) for cell, members in cells.items()])
    return MAPLE_AGREEMENT.write(
        store.root, run_id=manifest.run_id, records=store.snapshot(), entries=compared,
        summary=summary, options={"human": str(human), "labels_from": labels_from, "n_resamples": n_resamples,
                                  "seed": seed})
