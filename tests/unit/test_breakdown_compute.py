"""The breakdown computations on small hand-made inputs: question types and topics, cells kept
apart (model, configuration, variant), hybrid step verdicts, and older files refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mathlens.analyze.breakdown.analyzer import answer_fraction, step_facts
from mathlens.analyze.breakdown.compute import (
    NO_TOPIC,
    Bootstrap,
    RecordFacts,
    StepFacts,
    group_scores,
    question_entries,
    question_topics,
    question_type,
    ratio_of_sums,
    step_shares,
)
from mathlens.analyze.breakdown.models import BREAKDOWN
from mathlens.analyze.flow.models import FlowMetrics, FlowRecord, FlowResult, HybridResult, HybridStep, StepReport
from mathlens.analyze.grading.answer_records import AnswerRecord
from mathlens.analyze.grading.verdicts import AnswerVerdict, PartVerdict
from mathlens.items.schema import Part, Question
from mathlens.runs.documents import DocumentVersionError, RecordRef
from mathlens.stats.bootstrap import bootstrap_ci

BOOT = Bootstrap(resamples=200, seed=3)


def _ref(q: str, conf: str = "baseline", variant: str = "original", repeat: int = 0) -> RecordRef:
    return RecordRef(key=f"m|{conf}|e|{q}|{variant}|r{repeat}", model="m", configuration=conf, exam_id="e",
                     question_id=q, variant=variant, variant_kind="original" if variant == "original" else "ablation",
                     repeat=repeat)


def test_question_type_and_topics() -> None:
    assert question_type(Question(id="a", text="t", choices={"A": "1", "B": "2"}, answers=["A"])) == "multiple_choice"
    assert question_type(Question(id="a", text="t", parts=[Part(label="a", text="x", answer="1")])) == "multi_part"
    assert question_type(Question(id="a", text="t", answers=["1"])) == "single_answer"
    assert question_type(Question(id="a", text="t", solution="because")) == "single_answer"
    assert question_type(Question(id="a", text="Prove it.")) == "open"
    typed = Question(id="a", text="t", answers=["1"], metadata={"type": " word problem "})
    assert question_type(typed) == "word problem"
    assert question_topics(Question(id="a", text="t", topics=["x", "y", "x"])) == ["x", "y"]
    assert question_topics(Question(id="a", text="t", subject="Algebra")) == ["Algebra"]
    assert question_topics(Question(id="a", text="t")) == [NO_TOPIC]


def test_cells_are_never_pooled() -> None:
    bad = StepFacts(operations=("integration",), concepts=("u-substitution",), verdict="invalid")
    good = StepFacts(operations=("integration",), concepts=(), verdict="valid")
    unsure = StepFacts(operations=("integration",), concepts=(), verdict="unverifiable")
    records = [
        RecordFacts(ref=_ref("q1"), answer="correct", fraction=1.0, steps=(bad, good, unsure)),
        RecordFacts(ref=_ref("q1", repeat=1), answer="incorrect", fraction=0.0, steps=(good,)),
        RecordFacts(ref=_ref("q1", conf="rag"), answer="incorrect", fraction=0.0, steps=(bad,)),
        RecordFacts(ref=_ref("q1", variant="number-1"), answer="correct", fraction=1.0, steps=(good,)),
    ]
    overall, ops, concepts = step_shares(records, BOOT)
    by_cell = {(r.configuration, r.variant): (r.invalid, r.checked, r.responses) for r in ops}
    # baseline/original: 1 invalid of 3 checked integration steps (the unverifiable one is not checked)
    assert by_cell == {("baseline", "original"): (1, 3, 2), ("rag", "original"): (1, 1, 1),
                       ("baseline", "number-1"): (0, 1, 1)}
    assert [(r.configuration, r.variant) for r in overall] == [("baseline", "original"), ("baseline", "number-1"),
                                                              ("rag", "original")]
    assert {(r.configuration, r.label, r.invalid, r.checked) for r in concepts} == {
        ("baseline", "u-substitution", 1, 1), ("rag", "u-substitution", 1, 1)}
    q = Question(id="q1", text="t", points=4, topics=["integrals"], answers=["1"])
    entries = question_entries(records, {("e", "q1"): q})
    assert [(e.configuration, e.variant, e.responses, e.correct, e.score) for e in entries] == [
        ("baseline", "original", 2, 1, 50.0), ("baseline", "number-1", 1, 1, 100.0), ("rag", "original", 1, 0, 0.0)]
    topics = group_scores(entries, "topic", BOOT)
    assert [(t.configuration, t.variant, t.earned, t.possible) for t in topics] == [
        ("baseline", "original", 2.0, 4.0), ("baseline", "number-1", 4.0, 4.0), ("rag", "original", 0.0, 4.0)]
    with pytest.raises(ValueError, match="topic"):
        group_scores(entries, "level", BOOT)


def test_ratio_of_sums() -> None:
    assert ratio_of_sums([(1, 2), (0, 2)]) == 0.25
    assert ratio_of_sums([(0, 0)]) is None


@pytest.mark.parametrize("seed", [0, 7])
def test_the_array_bootstrap_equals_bootstrap_ci(seed: int) -> None:
    """`Bootstrap.ratio` gives the interval `bootstrap_ci` gives with the same statistic and seed,
    including resamples where the statistic is undefined (every denominator 0)."""
    rng = random.Random(seed)
    for n in (1, 2, 3, 9, 40):
        pairs = [(float(rng.randint(0, 2)), float(rng.randint(0, 3))) for _ in range(n)]
        boot = Bootstrap(resamples=300, confidence=0.9, seed=seed)
        assert boot.ratio(pairs) == bootstrap_ci(pairs, stat=ratio_of_sums, n_resamples=300, confidence=0.9,
                                                 seed=seed), pairs


def _flow(verdicts: list[str], hybrid: list[str] | None, status: str = "ok") -> FlowRecord:
    steps = [StepReport(index=i, text=f"s{i}", start=0, end=1, operations=["evaluation"], verdict=v)
             for i, v in enumerate(verdicts)]
    metrics = FlowMetrics(total_steps=len(steps), total_operations=len(steps), unique_operations=1, unique_concepts=0,
                          mean_complexity_level=None, mean_depth=None, complexity_score=0.0, valid_steps=0,
                          invalid_steps=0, unverifiable_steps=0, unchecked_steps=0, first_invalid_step=None,
                          redundant_steps=[], reasoning_pattern=[])
    hyb = None
    if hybrid is not None:
        hyb = HybridResult(status=status, judge="mock/j",
                           steps=[HybridStep(index=i, verdict=v, provenance="judge", symbolic=verdicts[i])
                                  for i, v in enumerate(hybrid)])
    return FlowRecord(record=_ref("q1"), status="ok", result=FlowResult(steps=steps, metrics=metrics,
                                                                       lexicon_version="1"), hybrid=hyb)


def test_hybrid_verdicts_are_used_when_the_judge_answered() -> None:
    entry = _flow(["valid", "unverifiable"], ["valid", "invalid"])
    steps, used = step_facts(entry, "hybrid")
    assert used and [s.verdict for s in steps] == ["valid", "invalid"]
    steps, used = step_facts(entry, "symbolic")
    assert not used and [s.verdict for s in steps] == ["valid", "unverifiable"]
    steps, used = step_facts(_flow(["valid", "unverifiable"], ["valid", "invalid"], status="error"), "hybrid")
    assert not used and [s.verdict for s in steps] == ["valid", "unverifiable"]


def test_answer_fraction_uses_part_points() -> None:
    q = Question(id="q", text="t", parts=[Part(label="a", text="x", points=1, answer="1"),
                                          Part(label="b", text="y", points=3, answer="2")])
    verdict = AnswerVerdict(status="incorrect", predicted=None, reference=None,
                            parts=[PartVerdict(label="a", status="incorrect", predicted="0", reference="1"),
                                   PartVerdict(label="b", status="correct", predicted="2", reference="2")])
    entry = AnswerRecord(record=_ref("q"), status="incorrect", verdict=verdict)
    assert answer_fraction(q, entry) == 0.75
    assert answer_fraction(q, AnswerRecord(record=_ref("q"), status="unverifiable")) is None
    plain = Question(id="q", text="t", points=5, answers=["1"])
    assert answer_fraction(plain, AnswerRecord(record=_ref("q"), status="no_response")) == 0.0


def test_a_breakdown_file_in_an_older_layout_is_refused(tmp_path: Path) -> None:
    legacy = BREAKDOWN.legacy_path(tmp_path)
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"topics": []}), encoding="utf-8")
    with pytest.raises(DocumentVersionError, match=r"'breakdown' schema version 1.*--only breakdown"):
        BREAKDOWN.read(tmp_path)


# -- the line `mathlens analyze` prints -----------------------------------------------------------

def _described(records: list[RecordFacts]) -> list[str]:
    from mathlens.analyze.breakdown.analyzer import describe
    from mathlens.analyze.breakdown.models import BreakdownSummary

    overall, operations, concepts = step_shares(records, BOOT)
    return describe(BreakdownSummary(score_basis="final answer", overall=overall, operations=operations,
                                     concepts=concepts))


def test_the_printed_line_names_no_operation_when_no_checked_step_is_invalid() -> None:
    good = StepFacts(operations=("comparison",), concepts=(), verdict="valid")
    other = StepFacts(operations=("arithmetic",), concepts=(), verdict="valid")
    lines = _described([RecordFacts(ref=_ref("q1"), steps=(good, other)),
                        RecordFacts(ref=_ref("q2"), steps=(good,))])
    assert not any("most often invalid" in line for line in lines)
    assert lines[0].startswith("no checked step is invalid (3 checked")


def test_the_printed_line_names_the_operation_with_most_invalid_steps_and_its_cell() -> None:
    ok = StepFacts(operations=("comparison",), concepts=(), verdict="valid")
    bad = StepFacts(operations=("integration",), concepts=(), verdict="invalid")
    # the first cell (baseline) has no invalid step; the rag cell has two
    lines = _described([RecordFacts(ref=_ref("q1"), steps=(ok, ok)),
                        RecordFacts(ref=_ref("q1", conf="rag"), steps=(bad, bad, ok))])
    assert lines[0].startswith("most often invalid for ")
    assert " rag: integration (2/2 invalid" in lines[0]
    # one cell only: no cell named
    single = _described([RecordFacts(ref=_ref("q1"), steps=(bad, ok))])
    assert single[0].startswith("most often invalid: integration (1/1 invalid")
