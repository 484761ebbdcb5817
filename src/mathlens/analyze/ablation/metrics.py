"""Question-level sensitivity metrics (calculus seed 000, §3.3, Table 2).

For one question answered by one model under one configuration, with each repeat's original
response compared against the responses to that repeat's variants:

* robustness R = mean over single-element ablations of cos(v_orig, v_abl_i) (eq. 1), with the
  sample standard deviation of those cosines;
* phrase sensitivity PS = max_i (1 − cos(v_orig, v_abl_i)) (eq. 4) and the element that gave it;
* impact factor of each element = 1 − cos (averaged over repeats), ranked, as in the seed's
  "Important phrase: (-1, 4)  Impact: 0.630" lines;
* beyond the seed: the share of ablations that flipped the final answer, the share that changed
  the reasoning pattern, and the mean token-level Levenshtein distance.

Element pairs and paraphrases are summarised separately and never enter R or PS, so numbers stay
comparable with the seed's single-element procedure.

Final answers are compared only where both exist: a pair in which either response states no final
answer (the quality flag `no_final_answer`), or either was cut by the token cap (the end of the
response, where the answer would be, is missing), is left out of the answer-flip rate and of every
other final-answer comparison, with the reason in the pair's `answer_left_out` and the counts beside
the rate (`AnswerPairs`: one count type wherever the rate is stored, down to the run's summary).
An answer that was never given cannot flip.

Degenerate responses (empty, an echo of the prompt or system role, a loop, the wrong script: see
`mathlens.analyze.quality`) are left out unless `include_degenerate`: a degenerate original
response leaves out every pair of its repeat (and the question, when every repeat's original is
degenerate: status `degenerate`), a degenerate variant response leaves out that pair only; they
are also left out of the step count, complexity and consistency. `excluded_degenerate` counts the
responses left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import fmean, stdev
from typing import Literal

from pydantic import BaseModel, Field

from mathlens.analyze.ablation.consistency import Consistency, Unanswered, repeat_consistency
from mathlens.analyze.ablation.divergence import divergences, sequence_distance
from mathlens.analyze.ablation.flags import Flag, FlagConfig, question_flags
from mathlens.analyze.ablation.outcomes import AnswerStatus, FlowSummary, compare_answers, summarize_flow
from mathlens.analyze.quality import DEGENERATE_FLAGS, QualityFlags, record_quality
from mathlens.items.schema import Question
from mathlens.runs.records import RunRecord

PairStatus = Literal["ok", "error", "empty", "no_original", "degenerate", "degenerate_original"]
#: why a pair's final answers were not compared
AnswerLeftOut = Unanswered
QuestionStatus = Literal["ok", "no_variants", "no_original", "degenerate"]
#: Pair statuses that mean "left out because a response is degenerate" (not a failure).
EXCLUDED_PAIR = ("degenerate", "degenerate_original")


@dataclass(frozen=True)
class SensitivityConfig:
    """What to compute. `flow=False` skips step and pattern analysis, `answers=False` the flips."""

    flow: bool = True
    answers: bool = True
    flags: FlagConfig = field(default_factory=FlagConfig)
    n_resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0
    include_degenerate: bool = False


class PairDivergence(BaseModel):
    """One (original, variant) response pair of one repeat."""

    variant: str
    kind: str
    element_type: str | None = None
    element_text: str | None = None
    meaning_preserving: bool = False
    repeat: int = 0
    status: PairStatus = "ok"
    note: str = ""
    cosine: float | None = None
    #: 1 − cosine: this pair's share of the element's impact factor
    impact: float | None = None
    levenshtein: float | None = None
    answer: AnswerStatus | None = None
    original_answer: str | None = None
    variant_answer: str | None = None
    answer_method: str | None = None
    steps_original: int | None = None
    steps_variant: int | None = None
    step_change: int | None = None
    pattern_distance: float | None = None
    pattern_changed: bool | None = None
    truncated: bool = False
    #: why the final answers were not compared (None: compared, or answers not asked for)
    answer_left_out: AnswerLeftOut | None = None


#: the answer statuses of a pair whose final answers were compared
_COMPARED = ("same", "flipped")


class AnswerPairs(BaseModel):
    """The base of an answer-flip rate: the pairs whose final answers were compared, and the pairs
    left out because a response states no final answer (`unanswered`) or was cut by the token cap
    (`truncated`)."""

    compared: int = 0
    unanswered: int = 0
    truncated: int = 0

    @property
    def left_out(self) -> int:
        return self.unanswered + self.truncated

    @classmethod
    def of(cls, pairs: Iterable[PairDivergence]) -> AnswerPairs:
        """Count the pairs of one kind."""
        out = cls()
        for p in pairs:
            out.compared += p.answer in _COMPARED
            out.unanswered += p.answer_left_out == "no_final_answer"
            out.truncated += p.answer_left_out == "truncated"
        return out

    @classmethod
    def total(cls, counts: Iterable[AnswerPairs]) -> AnswerPairs:
        """The counts of several questions added up."""
        out = cls()
        for c in counts:
            out.compared += c.compared
            out.unanswered += c.unanswered
            out.truncated += c.truncated
        return out

    def describe(self) -> str:
        """The counts in words, as every view of the rate prints them."""
        return (f"{self.compared} answered pair(s); left out {self.unanswered} without a final answer, "
                f"{self.truncated} cut by the token cap")


def flip_rate(pairs: Iterable[PairDivergence]) -> float | None:
    """The share of the compared pairs whose final answer flipped (None: none compared)."""
    compared = [p for p in pairs if p.answer in _COMPARED]
    return sum(p.answer == "flipped" for p in compared) / len(compared) if compared else None


class Impact(BaseModel):
    """An element's impact factor, 1 − cos, averaged over repeats; rank 1 is the largest."""

    rank: int
    variant: str
    element_type: str | None
    element_text: str | None
    impact: float
    n: int


class KindSummary(BaseModel):
    """Pairs or paraphrases, summarised apart from the single-element ablations."""

    n: int
    robustness: float | None = None
    robustness_sd: float | None = None
    max_divergence: float | None = None
    answer_flip_rate: float | None = None
    answer_pairs: AnswerPairs = Field(default_factory=AnswerPairs)


class QuestionSensitivity(BaseModel):
    """Every sensitivity metric of one question for one model and configuration."""

    model: str
    configuration: str
    exam_id: str
    question_id: str
    status: QuestionStatus
    note: str = ""
    n_repeats: int = 0
    n_ablations: int = 0
    n_failed_pairs: int = 0
    excluded_degenerate: int = 0
    robustness: float | None = None
    robustness_sd: float | None = None
    phrase_sensitivity: float | None = None
    ps_variant: str | None = None
    ps_element_type: str | None = None
    ps_element_text: str | None = None
    mean_levenshtein: float | None = None
    impact: list[Impact] = Field(default_factory=list)
    answer_flip_rate: float | None = None
    #: the single-element pairs the flip rate rests on, and those left out of it
    answer_pairs: AnswerPairs = Field(default_factory=AnswerPairs)
    meaning_preserving_flips: int = 0
    n_meaning_preserving_compared: int = 0
    pattern_change_rate: float | None = None
    n_pattern_compared: int = 0
    step_count: float | None = None
    complexity: float | None = None
    flow_source: str | None = None
    pairs: KindSummary | None = None
    paraphrases: KindSummary | None = None
    consistency: Consistency | None = None
    flags: list[Flag] = Field(default_factory=list)
    details: list[PairDivergence] = Field(default_factory=list)


def _text(rec: RunRecord) -> str | None:
    return rec.response if rec.status == "ok" and rec.response is not None else None


def degenerate_reasons(records: list[RunRecord], question: Question | None,
                       flags: dict[str, QualityFlags | None] | None = None) -> dict[str, str]:
    """Record key -> why its response is degenerate, for the degenerate ones among `records`
    (`flags`: their quality flags when already computed)."""
    out = {}
    for rec in records:
        f = flags[rec.key] if flags is not None and rec.key in flags else record_quality(rec, question)
        if f is not None and f.degenerate:
            out[rec.key] = "degenerate response (" + "; ".join(
                d for d in f.details if d.split(":")[0] in DEGENERATE_FLAGS) + ")"
    return out


def _unanswered(rec: RunRecord, flags: dict[str, QualityFlags | None]) -> AnswerLeftOut | None:
    """Why the final answer of `rec` cannot be compared, or None when it states one in full."""
    f = flags.get(rec.key)
    if f is not None and f.no_final_answer:
        return "no_final_answer"
    return "truncated" if rec.truncated else None


def _answer_left_out(a: RunRecord, b: RunRecord, flags: dict[str, QualityFlags | None]) -> AnswerLeftOut | None:
    """Why the final answers of `a` and `b` cannot be compared, or None when both state one in full."""
    why = (_unanswered(a, flags), _unanswered(b, flags))
    if "no_final_answer" in why:
        return "no_final_answer"
    return "truncated" if "truncated" in why else None


@dataclass(frozen=True)
class _Flows:
    """Flow summaries: stored ones by record key first, else computed from the response."""

    question_text: str | None
    stored: dict[str, FlowSummary]

    def of(self, rec: RunRecord, text: str) -> FlowSummary:
        # A variant's response is read against the prompt that was actually sent.
        return self.stored.get(rec.key) or summarize_flow(text, rec.variant.question_text or self.question_text)


def _pairs_for_repeat(original: RunRecord | None, variants: list[RunRecord], question: Question | None,
                      config: SensitivityConfig, flows: _Flows, degenerate: dict[str, str],
                      flags: dict[str, QualityFlags | None]) -> list[PairDivergence]:
    out: list[PairDivergence] = []
    base = _text(original) if original is not None else None
    bad_original = original is not None and original.key in degenerate
    if bad_original:
        base = None
    ok = [(v, _text(v)) for v in variants]
    # A degenerate variant response is left out of the vectoriser's fitting set too.
    usable = [(v, t) for v, t in ok if t is not None and v.key not in degenerate]
    cos_of: dict[int, float | None] = {}
    lev_of: dict[int, float] = {}
    if base is not None:
        measures = divergences(base, [t for _, t in usable])
        cos_of = {id(v): c for (v, _), c in zip(usable, measures.cosines, strict=True)}
        lev_of = {id(v): d for (v, _), d in zip(usable, measures.levenshtein, strict=True)}
    flow_o: FlowSummary | None = None
    if original is not None and base is not None and config.flow:
        flow_o = flows.of(original, base)
    for v, t in ok:
        pd = PairDivergence(variant=v.variant.name, kind=v.variant.kind, element_type=v.variant.element_type,
                            element_text=v.variant.element_text, meaning_preserving=v.variant.meaning_preserving,
                            repeat=v.repeat, truncated=v.truncated or bool(original and original.truncated))
        if bad_original and original is not None:
            out.append(pd.model_copy(update={"status": "degenerate_original",
                                             "note": "original: " + degenerate[original.key]}))
            continue
        if base is None:
            out.append(pd.model_copy(update={"status": "no_original",
                                             "note": "the original prompt's response is missing or failed"}))
            continue
        if t is None:
            out.append(pd.model_copy(update={"status": "error", "note": v.error or "no response"}))
            continue
        if v.key in degenerate:
            out.append(pd.model_copy(update={"status": "degenerate", "note": degenerate[v.key]}))
            continue
        cos = cos_of[id(v)]
        if cos is None:
            out.append(pd.model_copy(update={"status": "empty", "note": "both responses have no tokens"}))
            continue
        upd: dict[str, object] = {"cosine": cos, "impact": 1.0 - cos, "levenshtein": lev_of[id(v)]}
        left_out = _answer_left_out(original, v, flags) if config.answers and original is not None else None
        if left_out is not None:
            upd["answer_left_out"] = left_out
        elif config.answers:
            cmp = compare_answers(base, t, question)
            upd |= {"answer": cmp.status, "original_answer": cmp.original, "variant_answer": cmp.variant,
                    "answer_method": cmp.method}
        if flow_o is not None:
            flow_v = flows.of(v, t)
            upd |= {"steps_original": flow_o.step_count, "steps_variant": flow_v.step_count,
                    "step_change": flow_v.step_count - flow_o.step_count}
            if flow_o.pattern is not None and flow_v.pattern is not None:
                dist = sequence_distance(flow_o.pattern, flow_v.pattern)
                upd |= {"pattern_distance": dist, "pattern_changed": dist > 0}
        out.append(pd.model_copy(update=upd))
    return out


def _kind_summary(pairs: list[PairDivergence]) -> KindSummary | None:
    if not pairs:
        return None
    cos = [p.cosine for p in pairs if p.status == "ok" and p.cosine is not None]
    return KindSummary(
        n=len(pairs), robustness=fmean(cos) if cos else None, robustness_sd=stdev(cos) if len(cos) > 1 else None,
        max_divergence=max(1 - c for c in cos) if cos else None,
        answer_flip_rate=flip_rate(pairs), answer_pairs=AnswerPairs.of(pairs),
    )


def _impacts(pairs: list[PairDivergence]) -> list[Impact]:
    by_variant: dict[str, list[PairDivergence]] = defaultdict(list)
    for p in pairs:
        if p.cosine is not None:
            by_variant[p.variant].append(p)
    rows = [(fmean(1 - p.cosine for p in ps if p.cosine is not None), name, ps) for name, ps in by_variant.items()]
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [Impact(rank=i, variant=name, element_type=ps[0].element_type, element_text=ps[0].element_text,
                   impact=value, n=len(ps)) for i, (value, name, ps) in enumerate(rows, start=1)]


def question_sensitivity(records: list[RunRecord], question: Question | None,
                         config: SensitivityConfig | None = None,
                         stored_flows: dict[str, FlowSummary] | None = None) -> QuestionSensitivity:
    """Metrics for the records of one (model, configuration, exam, question).

    `stored_flows` (by record key, from the run's flow analysis) are used instead of analysing
    those responses again.
    """
    config = config or SensitivityConfig()
    flows = _Flows(question.prompt_text() if question is not None else None, stored_flows or {})
    first = records[0]
    head = {"model": first.model, "configuration": first.configuration, "exam_id": first.exam_id,
            "question_id": first.question_id}
    by_repeat: dict[int, list[RunRecord]] = defaultdict(list)
    for r in records:
        by_repeat[r.repeat].append(r)
    originals = {k: next((r for r in rs if r.variant.name == "original"), None) for k, rs in by_repeat.items()}
    flags = {r.key: record_quality(r, question) for r in records}
    degenerate = {} if config.include_degenerate else degenerate_reasons(records, question, flags)
    details: list[PairDivergence] = []
    for k in sorted(by_repeat):
        variants = [r for r in by_repeat[k] if r.variant.name != "original"]
        details += _pairs_for_repeat(originals[k], variants, question, config, flows, degenerate, flags)
    usable = [(o, t) for k in sorted(originals) if (o := originals[k]) is not None and (t := _text(o)) is not None
              and o.key not in degenerate]
    texts = [t for _, t in usable]
    summaries = [flows.of(o, t) for o, t in usable] if config.flow else []
    steps = fmean(f.step_count for f in summaries) if summaries else None
    cx = [f.complexity for f in summaries if f.complexity is not None]
    complexity = fmean(cx) if cx else None
    bad_originals = [o for o in originals.values() if o is not None and o.key in degenerate]
    consistency = None
    if len(by_repeat) > 1:
        consistency = repeat_consistency(texts, question, config.answers,
                                         [_unanswered(o, flags) for o, _ in usable]).model_copy(
            update={"excluded_degenerate": len(bad_originals)})
    common = {**head, "n_repeats": len(by_repeat), "step_count": steps, "complexity": complexity,
              "flow_source": summaries[0].source if summaries else None, "consistency": consistency,
              "excluded_degenerate": len(degenerate)}
    if not details:
        if bad_originals and not texts:
            return QuestionSensitivity(**common, status="degenerate",
                                       note="excluded: " + degenerate[bad_originals[0].key])
        return QuestionSensitivity(**common, status="no_variants", note="the run has no variants of this question")
    if bad_originals and not texts:
        return QuestionSensitivity(**common, status="degenerate", details=details,
                                   note="excluded: the original prompt's response is "
                                        + degenerate[bad_originals[0].key])
    if not texts:
        return QuestionSensitivity(**common, status="no_original", details=details,
                                   note="no usable response to the original prompt")
    single = [p for p in details if p.kind == "ablation"]
    ok = [p for p in single if p.status == "ok" and p.cosine is not None]
    cos = [p.cosine for p in ok if p.cosine is not None]
    impacts = _impacts(ok)
    patterned = [p for p in single if p.pattern_changed is not None]
    preserving = [p for p in details if p.meaning_preserving and p.answer in _COMPARED]
    flips_mp = sum(p.answer == "flipped" for p in preserving)
    ps = impacts[0].impact if impacts else None
    return QuestionSensitivity(
        **common, status="ok", n_ablations=len(single),
        n_failed_pairs=sum(p.status not in ("ok", *EXCLUDED_PAIR) for p in details),
        robustness=fmean(cos) if cos else None, robustness_sd=stdev(cos) if len(cos) > 1 else None,
        phrase_sensitivity=ps, ps_variant=impacts[0].variant if impacts else None,
        ps_element_type=impacts[0].element_type if impacts else None,
        ps_element_text=impacts[0].element_text if impacts else None,
        mean_levenshtein=fmean(p.levenshtein for p in ok if p.levenshtein is not None) if ok else None,
        impact=impacts,
        answer_flip_rate=flip_rate(single), answer_pairs=AnswerPairs.of(single),
        meaning_preserving_flips=flips_mp,
        n_meaning_preserving_compared=len(preserving),
        pattern_change_rate=sum(bool(p.pattern_changed) for p in patterned) / len(patterned) if patterned else None,
        n_pattern_compared=len(patterned),
        pairs=_kind_summary([p for p in details if p.kind == "pair"]),
        paraphrases=_kind_summary([p for p in details if p.kind == "paraphrase"]),
        flags=question_flags(complexity, ps, flips_mp, config.flags),
        details=details,
    )
