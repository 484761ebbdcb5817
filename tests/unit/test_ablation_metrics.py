"""Question metrics, flags, consistency and the exam table on hand-built run records."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mathlens.analyze.ablation import FlagConfig, SensitivityConfig, question_sensitivity
from mathlens.analyze.ablation.consistency import repeat_consistency
from mathlens.analyze.ablation.divergence import tfidf_cosines
from mathlens.analyze.ablation.flags import question_flags
from mathlens.analyze.ablation.tables import exam_rows, rows_csv
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.records import RunRecord, Variant

Q = Question(id="q1", text="Find the gradient ∇f of f(x,y)=x^2 y at point (-1,4)", answers=["<-8, 1>"])
ORIGINAL = "1. The gradient is <2xy, x^2>.\n2. At (-1,4) it is <-8, 1>.\nFinal answer: <-8, 1>"
NO_FLOW = SensitivityConfig(flow=False)


def rec(response: str | None, variant: Variant | None = None, repeat: int = 0, status: str = "ok",
        question_id: str = "q1", configuration: str = "baseline") -> RunRecord:
    v = variant or Variant()
    return RunRecord(
        key=f"m|{configuration}|e|{question_id}|{v.name}|r{repeat}", model="m", configuration=configuration,
        exam_id="e", question_id=question_id, variant=v, repeat=repeat,
        messages=[Message(role="user", content=v.question_text or Q.text)], config=GenerateConfig(),
        request_hash="h", content_hash="c", response=response, status=status,  # type: ignore[arg-type]
        error="boom" if status == "error" else None, created_at=datetime.now(UTC),
    )


def abl(name: str, etype: str, text: str, kind: str = "ablation", preserving: bool = False) -> Variant:
    return Variant(name=name, kind=kind, element_type=etype, element_text=text,  # type: ignore[arg-type]
                   question_text=f"variant {name}", meaning_preserving=preserving)


def test_identical_responses_give_full_robustness_and_no_sensitivity() -> None:
    records = [rec(ORIGINAL)] + [rec(ORIGINAL, abl(f"keyword-{i}", "keyword", "find")) for i in range(3)]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.status == "ok" and q.n_ablations == 3
    assert q.robustness == pytest.approx(1.0) and q.robustness_sd == pytest.approx(0.0)
    assert q.phrase_sensitivity == pytest.approx(0.0)
    assert q.answer_flip_rate == 0.0 and q.answer_pairs.compared == 3
    assert q.mean_levenshtein == pytest.approx(0.0)


def test_disjoint_response_sets_phrase_sensitivity_and_impact_ranking() -> None:
    other = "Without a point the answer stays symbolic.\nFinal answer: <2xy, x^2>"
    records = [rec(ORIGINAL), rec(other, abl("coordinate-1", "coordinate", "(-1,4)")),
               rec(ORIGINAL, abl("keyword-1", "keyword", "find", preserving=True))]
    q = question_sensitivity(records, Q, NO_FLOW)
    # Worked by hand: the cosines are those of the fitted vectoriser over the three responses.
    cos = tfidf_cosines(ORIGINAL, [other, ORIGINAL]).values
    assert q.robustness == pytest.approx((cos[0] + cos[1]) / 2)
    assert q.phrase_sensitivity == pytest.approx(1 - cos[0])
    assert (q.ps_element_type, q.ps_element_text) == ("coordinate", "(-1,4)")
    assert [i.element_text for i in q.impact] == ["(-1,4)", "find"]
    assert [i.rank for i in q.impact] == [1, 2]
    assert q.answer_flip_rate == pytest.approx(0.5)
    flipped = next(p for p in q.details if p.variant == "coordinate-1")
    assert flipped.answer == "flipped" and flipped.variant_answer == "<2xy, x^2>"
    # The flip came from a removal, not a meaning-preserving change: no "unreliable" flag.
    assert q.meaning_preserving_flips == 0 and "unreliable" not in {f.name for f in q.flags}


def test_flip_under_meaning_preserving_variant_flags_unreliable() -> None:
    records = [rec(ORIGINAL), rec("1. Gradient <2xy, x^2>.\nFinal answer: <8, -1>",
                                  abl("keyword-1", "keyword", "find", preserving=True))]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.meaning_preserving_flips == 1
    assert "unreliable" in {f.name for f in q.flags}


def test_pairs_and_paraphrases_are_kept_out_of_robustness() -> None:
    records = [rec(ORIGINAL), rec(ORIGINAL, abl("keyword-1", "keyword", "find")),
               rec("completely different words", abl("pair-a+b", "coordinate+keyword", "x", kind="pair")),
               rec("also unrelated", abl("paraphrase-1", "paraphrase", "polite request", kind="paraphrase",
                                         preserving=True))]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.n_ablations == 1 and q.robustness == pytest.approx(1.0) and q.phrase_sensitivity == pytest.approx(0)
    assert q.pairs is not None and q.pairs.n == 1 and q.pairs.robustness == pytest.approx(0.0)
    assert q.paraphrases is not None and q.paraphrases.max_divergence == pytest.approx(1.0)


def test_failed_records_are_counted_not_scored() -> None:
    records = [rec(ORIGINAL), rec(None, abl("keyword-1", "keyword", "find"), status="error"),
               rec(ORIGINAL, abl("notation-1", "notation", "∇f"))]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.n_failed_pairs == 1 and q.robustness == pytest.approx(1.0)
    failed = next(p for p in q.details if p.variant == "keyword-1")
    assert failed.status == "error" and failed.cosine is None and "boom" in failed.note


def test_missing_original_is_a_status() -> None:
    q = question_sensitivity([rec(None, status="error"), rec(ORIGINAL, abl("keyword-1", "keyword", "find"))],
                             Q, NO_FLOW)
    assert q.status == "no_original" and q.robustness is None
    assert q.details[0].status == "no_original"
    assert question_sensitivity([rec(ORIGINAL)], Q, NO_FLOW).status == "no_variants"


def test_repeats_pair_with_their_own_original_and_average_impacts() -> None:
    other = "Totally unrelated output"
    records = [rec(ORIGINAL, repeat=0), rec(ORIGINAL, abl("keyword-1", "keyword", "find"), repeat=0),
               rec(ORIGINAL, repeat=1), rec(other, abl("keyword-1", "keyword", "find"), repeat=1)]
    q = question_sensitivity(records, Q, NO_FLOW)
    assert q.n_repeats == 2 and len(q.details) == 2
    assert q.impact[0].n == 2 and q.impact[0].impact == pytest.approx(0.5)  # mean of 0 and 1
    assert q.consistency is not None and q.consistency.answer_agreement == 1.0


def test_flags_use_strict_thresholds() -> None:
    cfg = FlagConfig(complexity_depth="chars")  # the study's scale: "too dense" above 20
    assert [f.name for f in question_flags(20.0, 0.5, 0, cfg)] == []
    assert [f.name for f in question_flags(20.5, 0.51, 2, cfg)] == ["too_dense", "unstable_under_rephrasing",
                                                                     "unreliable"]
    strict = FlagConfig(complexity_max=10, phrase_sensitivity_max=0.9, flag_meaning_preserving_flips=False)
    assert [f.name for f in question_flags(12.0, 0.6, 3, strict)] == ["too_dense"]
    assert question_flags(None, None, 0, cfg) == []


def test_consistency_of_repeats() -> None:
    same = "1. Compute.\nFinal answer: 12"
    c = repeat_consistency([same, same, "1. Compute again.\nFinal answer: 13"], None)
    assert c.status == "ok" and c.n_runs == 3 and c.n_answer_pairs == 3
    assert c.answer_agreement == pytest.approx(1 / 3)
    assert c.modal_share == pytest.approx(2 / 3)
    assert 0 < (c.mean_pairwise_cosine or 0) < 1
    assert repeat_consistency([same], None).status == "single_run"


def test_exam_table_has_sd_and_seeded_intervals() -> None:
    qs = []
    for i, (resp) in enumerate(["p q r", "p q s", "p t u"]):
        records = [rec("p q r", question_id=f"q{i}"),
                   rec(resp, abl("keyword-1", "keyword", "find"), question_id=f"q{i}")]
        qs.append(question_sensitivity(records, None, NO_FLOW))
    cfg = SensitivityConfig(flow=False, n_resamples=500, seed=3)
    rows = exam_rows(qs, {"e": ("Exam I", "Calc I")}, cfg)
    assert len(rows) == 1
    row = rows[0]
    values = [q.robustness for q in qs]
    assert row.course == "Calc I" and row.exam == "Exam I" and row.n_questions == 3
    assert row.robustness.mean == pytest.approx(sum(values) / 3)
    assert row.robustness.ci_low is not None and row.robustness.ci_high is not None
    assert row.robustness.ci_low <= row.robustness.mean <= row.robustness.ci_high
    assert row.complexity.n == 0 and row.complexity.mean is None and row.complexity.status == "empty"
    assert exam_rows(qs, {}, cfg)[0].robustness == row.robustness  # same seed, same interval
    csv_text = rows_csv(rows)
    header, line = csv_text.strip().split("\n")
    assert header.split(",")[:8] == ["course", "exam", "exam_id", "model", "configuration", "n_questions",
                                     "robustness", "robustness_sd"]
    assert line.startswith("Calc I,Exam I,e,m,baseline,3,")


def test_step_count_and_pattern_change_from_the_flow_analysis() -> None:
    q = Question(id="q1", text="Let f(x) = x^2. Find f'(3).", answers=["6"])
    original = "1. Differentiate: f'(x) = 2x.\n2. Substitute x = 3: f'(3) = 2*3 = 6.\nFinal answer: 6"
    dropped = "1. Substitute x = 3: f(3) = 3^2 = 9.\nFinal answer: 9"
    records = [rec(original), rec(dropped, abl("notation-1", "notation", "f'(3)", preserving=True)),
               rec(original, abl("keyword-1", "keyword", "find", preserving=True))]
    result = question_sensitivity(records, q, SensitivityConfig())
    by_variant = {p.variant: p for p in result.details}
    changed, same = by_variant["notation-1"], by_variant["keyword-1"]
    assert changed.steps_variant is not None and changed.steps_original is not None
    assert changed.step_change == changed.steps_variant - changed.steps_original < 0
    assert changed.pattern_changed is True and 0 < (changed.pattern_distance or 0) <= 1
    assert same.step_change == 0 and same.pattern_changed is False
    assert result.pattern_change_rate == pytest.approx(0.5) and result.n_pattern_compared == 2
    assert result.flow_source == "flow" and result.complexity is not None and result.step_count is not None
    assert changed.answer == "flipped" and "unreliable" in {f.name for f in result.flags}
