"""The judging core on hand-made units: scales, reply schemas and their checks, the judge call path
(per unit and all at once, seeds per judge run), worksheets (aliases, validation) and agreement by
hand. The two rubrics built on it are tested in test_grading_* and test_adaptivity_*."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mathlens.analyze.judging.agreement import Method, agreement_report, pair_stats, ratings
from mathlens.analyze.judging.entries import Judgement, UnitScore, settle
from mathlens.analyze.judging.request import JudgeJob, RequestOptions, judge, judge_jobs, read_reply, reply_model
from mathlens.analyze.judging.units import Ordinal, Points, ScaleOption, Scope, Target, Unit
from mathlens.analyze.judging.worksheet import read_sheet, replace_graders
from mathlens.errors import UserError
from mathlens.models.base import Message
from mathlens.runs.documents import RecordRef

YES_NO = Ordinal(options=(ScaleOption(value=0, label="no", meaning="absent"),
                          ScaleOption(value=1, label="yes", meaning="present")))
TONE = Ordinal(options=(ScaleOption(value=-1, label="negative", meaning="m"),
                        ScaleOption(value=0, label="no", meaning="m"), ScaleOption(value=1, label="yes", meaning="m")))
STEPS = Unit(id="Q9", name="Steps", instruction="Does it go step by step?", scale=YES_NO, code="SBS")
MOOD = Unit(id="Q2", name="Tone", instruction="Is the tone positive?", scale=TONE)
METHOD = Unit(id="method", name="Method", instruction="right method", scale=Points(max=3))
WORK = Unit(id="execution", name="Execution", instruction="right working", scale=Points(max=4))


def ref(key: str) -> RecordRef:
    return RecordRef(key=key, model="m", configuration="c", exam_id="e", question_id=key)


def prompt(units: Any) -> list[Message]:
    return [Message(role="user", content="score " + ",".join(u.id for u in units))]


# -- scales ----------------------------------------------------------------------------------
def test_ordinal_scale_reads_values_and_labels() -> None:
    assert [TONE.parse(t, "Q2", "w") for t in ("negative", " -1 ", "YES")] == [-1, -1, 1]
    assert TONE.parse("1.0", "Q2", "w") == 1 and TONE.allowed == "-1=negative | 0=no | 1=yes"
    for bad in ("2", "maybe", "0.5", ""):
        with pytest.raises(UserError, match=r"^sheet.csv:7: score .* for Q2 is not one of -1=negative"):
            TONE.parse(bad, "Q2", "sheet.csv:7")
    assert TONE.problem(1, "Q2") == "" and "is not one of" in TONE.problem(2, "Q2")
    assert (TONE.top, TONE.label_of(-1), TONE.value_of("yes"), TONE.value_of("x")) == (1.0, "negative", 1, None)


def test_points_scale_is_bounded() -> None:
    assert Points(max=3).parse("2.5", "method", "w") == 2.5
    assert Points(max=0.30000000000000004).parse("0.3", "m", "w") == 0.3  # weights x points are not exact
    with pytest.raises(UserError, match=r"^w:3: 3.5 points is outside 0..3$"):
        Points(max=3).parse("3.5", "method", "w:3")
    with pytest.raises(UserError, match="is not a number"):
        Points(max=3).parse("three", "method", "w:3")
    for bad in (-1, float("nan"), float("inf")):
        assert "outside 0..3" in Points(max=3).problem(bad, "method")


def test_target_finds_units_by_id_or_code() -> None:
    target = Target(record=ref("k"), units=(MOOD, STEPS))
    assert target.unit("SBS") is STEPS and target.unit("Q2") is MOOD and target.max_total == 2
    assert Target(record=ref("k"), units=(METHOD, WORK), points=7.5).max_total == 7.5
    with pytest.raises(UserError, match="unknown rubric item 'Q20'"):
        target.unit("Q20", "rubric item")


# -- reply schemas and checks ----------------------------------------------------------------
def test_reply_schemas_follow_the_scale() -> None:
    one = reply_model([STEPS], 300).model_json_schema()  # a single model class, as a per-unit request sends
    assert one["title"] == "RubricVerdict" and list(one["properties"]) == ["Q9"]
    from mathlens.analyze.judging.request import unit_reply_model

    ordinal = unit_reply_model(STEPS, 300).model_json_schema()
    assert ordinal["title"] == "VerdictQ9" and ordinal["required"] == ["rationale", "rating"]  # reason first
    assert ordinal["properties"]["rating"]["enum"] == ["no", "yes"]
    assert ordinal["properties"]["rationale"]["maxLength"] == 300
    both = reply_model([METHOD, WORK]).model_json_schema()
    score = both["$defs"]["Score_execution"]
    assert score["required"] == ["points", "rationale"] and score["properties"]["points"]["maximum"] == 4
    assert score["properties"]["rationale"]["maxLength"] == 1000


def test_read_reply_checks_bounds_and_presence() -> None:
    wide = reply_model([Unit(id="method", name="M", instruction="", scale=Points(max=6))])
    value = wide.model_validate({"method": {"points": 5, "rationale": "r"}})
    assert read_reply(value, [METHOD]) == ([], "method: 5 points is outside 0..3")
    scores, problem = read_reply(value, [Unit(id="method", name="M", instruction="", scale=Points(max=6))])
    assert problem == "" and scores == [UnitScore(unit="method", value=5, max=6, rationale="r")]
    assert read_reply(value, [METHOD, WORK])[1] == "method: 5 points is outside 0..3"
    assert read_reply(reply_model([METHOD]).model_validate({"method": {"points": 1, "rationale": ""}}),
                      [METHOD, WORK]) == ([], "execution missing")


# -- asking a judge --------------------------------------------------------------------------
def verdict(label: str) -> str:
    return json.dumps({"rationale": f"said {label}", "rating": label})


async def test_per_unit_requests_score_each_unit_alone(mock_model: Any) -> None:
    def reply(messages: list[Message]) -> str:
        return "no idea" if "Q2" in messages[-1].content else verdict("yes")

    model = mock_model(func=reply)
    options = RequestOptions(max_tokens=64, repeat_penalty=1.1, per_unit=True, max_rationale_chars=300,
                             missing="items unscored")
    got = await judge(model, JudgeJob(Target(ref("k"), (MOOD, STEPS)), prompt), options, judge_run=2)
    assert (got.grader, got.judge_run, got.status, got.total, got.max_total) == ("judge:mock/scripted", 2, "ungraded",
                                                                                  None, 2)
    assert got.error == "1 items unscored"
    mood, steps = got.scores
    assert (mood.unit, mood.value, mood.status) == ("Q2", None, "unscored") and mood.error.startswith("invalid")
    assert (steps.value, steps.label, steps.max, steps.rationale) == (1, "yes", 1, "said yes")
    assert len(got.raw) == 3  # the failed unit's reply and its repair, then the other unit's reply
    sent = model.provider.requests
    assert sorted(m[0].content for m, _, _ in sent) == ["score Q2", "score Q2", "score Q9"]  # one repair
    assert {(c.seed, c.max_tokens, c.repeat_penalty) for _, c, _ in sent} == {(1234 + 2, 64, 1.1)}


async def test_all_units_in_one_request(mock_model: Any) -> None:
    ok = json.dumps({"method": {"points": 2, "rationale": "a"}, "execution": {"points": 4, "rationale": "b"}})
    options = RequestOptions(runs=2)
    jobs = [JudgeJob(Target(ref("k1"), (METHOD, WORK), points=7), prompt),
            JudgeJob(Target(ref("k2"), (METHOD, WORK), points=7), None, "the record has no response")]
    seen: list[str] = []
    model = mock_model(responses=[ok])
    got = await judge_jobs(model, jobs, options, on_done=lambda j: seen.append(j.record.key))
    assert [(j.record.key, j.judge_run, j.status, j.total) for j in got] == [
        ("k1", 0, "graded", 6), ("k1", 1, "graded", 6), ("k2", 0, "ungraded", None), ("k2", 1, "ungraded", None)]
    assert got[0].max_total == 7 and got[2].error == "the record has no response" and got[2].scores == []
    assert sorted(seen) == ["k1", "k1", "k2", "k2"]
    assert sorted(c.seed for _, c, _ in model.provider.requests) == [1234, 1235]
    failed = await judge(mock_model(errors=["permanent"]), jobs[0], options)
    assert failed.status == "ungraded" and failed.scores == [] and failed.error.startswith("error")


def test_settle_totals_only_complete_judgements() -> None:
    full = settle(ref("k"), "human:a", [UnitScore(unit="method", value=2), UnitScore(unit="execution", value=3.5)],
                  7, expected=2)
    assert (full.status, full.total, full.error) == ("graded", 5.5, "")
    part = settle(ref("k"), "human:a", [UnitScore(unit="method", value=2)], 7, expected=2,
                  missing="criteria left blank")
    assert (part.status, part.total, part.error) == ("ungraded", None, "1 criteria left blank")
    assert part.values() == {"method": 2} and part.score("execution") is None and part.rater == "human:a"


# -- worksheets ------------------------------------------------------------------------------
TARGETS = {k: Target(ref(k), (MOOD, STEPS)) for k in ("k1", "k2", "k3")}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_worksheets_import_under_either_column_names(tmp_path: Path) -> None:
    tutor = write(tmp_path / "ana.csv", "response_key,item_id,score,note\nk1,Q2,negative,cold\nk1,SBS,1,\n"
                                        "k2,Q2,0,\nk2,Q9,,unsure\nk3,Q2,,\nk3,Q9,,\n")
    calculus = write(tmp_path / "ana2.csv", "key,criterion,points,comment,grader\nk1,Q2,-1,cold,ana\n"
                                            "k1,Q9,yes,,ana\nk2,Q2,no,,ana\nk2,Q9,,unsure,ana\n")
    a, b = read_sheet(tutor, TARGETS), read_sheet(calculus, TARGETS)
    assert a.rows == 6 and b.rows == 4
    assert [j.model_dump() for j in a.judgements] == [j.model_dump() for j in b.judgements]
    first, second = a.judgements  # k3, wholly blank, is not a judgement
    assert (first.grader, first.status, first.total, first.max_total) == ("human:ana", "graded", 0, 2)
    assert [(s.unit, s.value, s.label, s.rationale) for s in first.scores] == [("Q2", -1, "negative", "cold"),
                                                                               ("Q9", 1, "yes", "")]
    assert (second.status, second.error) == ("ungraded", "1 units left blank")
    assert second.scores[1] == UnitScore(unit="Q9", max=1, rationale="unsure", error="left blank")
    named = read_sheet(tutor, TARGETS, grader="bo").judgements
    assert {j.grader for j in named} == {"human:bo"}


@pytest.mark.parametrize(("body", "message"), [
    ("k9,Q2,1\n", r"x.csv:2: record 'k9' is not in this run"),
    ("k1,Q7,1\n", r"x.csv:2: unknown rubric item 'Q7'"),
    ("k1,Q2,1\nk1,Q2,0\n", r"x.csv:3: k1 Q2 is scored twice"),
    ("k1,Q9,-1\n", r"x.csv:2: score -1 for Q9 is not one of 0=no \| 1=yes"),
    ("k1,Q9,maybe\n", r"x.csv:2: score 'maybe' for Q9 is not one of 0=no \| 1=yes"),
])
def test_worksheet_rows_are_checked(tmp_path: Path, body: str, message: str) -> None:
    sheet = write(tmp_path / "x.csv", "response_key,item_id,score\n" + body)
    with pytest.raises(UserError, match=message):
        read_sheet(sheet, TARGETS, noun="rubric item")


def test_worksheet_needs_its_columns(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"lacks the column\(s\) criterion or item_id"):
        read_sheet(write(tmp_path / "x.csv", "key,points\nk1,1\n"), TARGETS)
    with pytest.raises(UserError, match="no such worksheet"):
        read_sheet(tmp_path / "missing.csv", TARGETS)


def test_reimporting_a_grader_replaces_only_theirs() -> None:
    def j(grader: str, key: str) -> Judgement:
        return settle(ref(key), grader, [], 1, expected=1, error="x")

    stored = [j("human:a", "k1"), j("human:b", "k1"), j("human:a", "k2")]
    merged = replace_graders(stored, [j("human:a", "k3")])
    assert [(m.grader, m.record.key) for m in merged] == [("human:b", "k1"), ("human:a", "k3")]


# -- agreement -------------------------------------------------------------------------------
def judged(grader: str, values: dict[str, tuple[float | None, ...]], run: int = 0) -> list[Judgement]:
    """One judgement per record key, with the values of (Q2, Q9) (None: unscored)."""
    out = []
    for key, vals in values.items():
        scores = [UnitScore(unit=u.id, value=v) for u, v in zip((MOOD, STEPS), vals, strict=True)]
        out.append(settle(ref(key), grader, scores, 2, expected=2, judge_run=run))
    return out


def test_agreement_statistics_follow_the_scale() -> None:
    judge = judged("judge:j", {"a": (1, 1), "b": (0, 1), "c": (-1, 0), "d": (1, 0)})
    human = judged("human:h", {"a": (1, 1), "b": (1, 1), "c": (-1, None), "d": (1, 0)})
    scopes = [Scope("adaptivity", ("Q2", "Q9")), Scope("sum", ("Q2", "Q9"), "total")]
    report = agreement_report([*judge, *human], [MOOD, STEPS], scopes, rubric="r", noun="item", n_resamples=50)
    assert report.graders == ["judge:j", "human:h"] and report.self_agreement == []
    rows = {r.scope: r for r in report.pairs}
    assert list(rows) == ["Q2", "Q9", "adaptivity", "sum"]
    q2, q9, pooled, total = rows["Q2"], rows["Q9"], rows["adaptivity"], rows["sum"]
    # Q2 (three levels, linear kappa): 3 of 4 alike; Q9 (two levels, unweighted): c unscored by h, 3 of 3 alike
    assert (q2.n, q2.kappa_weights, q2.alpha_level, q2.mae) == (4, "linear", "ordinal", None)
    assert q2.percent is not None and q2.percent.estimate == pytest.approx(0.75)
    assert (q9.n, q9.kappa_weights) == (3, "none") and q9.kappa.estimate == pytest.approx(1.0)
    # pooled: 7 response x item observations, unweighted kappa; 6 alike
    assert (pooled.n, pooled.unit, pooled.kappa_weights) == (7, "response x item", "none")
    assert pooled.percent is not None and pooled.percent.estimate == pytest.approx(6 / 7)
    # totals exist only for complete judgements (c is incomplete for h): a 2-2, b 1-2, d 1-1
    assert (total.n, total.unit, total.alpha_level, total.percent) == (3, "response", "interval", None)
    assert total.mae is not None and total.mae.estimate == pytest.approx(1 / 3)
    assert pair_stats([(1, 1), (0, 1), (1, 1), (0, 0)], Method("ordinal", "none", (0, 1)), 0).kappa.estimate \
        == pytest.approx(0.5)  # po = .75, pe = .5 (see test_agreement_stats)


def test_units_nobody_shared_have_no_row_and_judge_runs_agree_with_themselves() -> None:
    run0 = judged("judge:j", {"a": (1, 1), "b": (0, None)})
    run1 = judged("judge:j", {"a": (1, 0), "b": (0, None)}, run=1)
    human = judged("human:h", {"a": (None, 1), "b": (None, 0)})
    table = ratings([*run0, *run1, *human])
    assert set(table) == {"judge:j", "judge:j#run1", "human:h"} and table["judge:j#run1"][("a", "Q9")] == 0
    report = agreement_report([*run0, *run1, *human], [MOOD, STEPS], [], n_resamples=20)
    assert [(r.a, r.b, r.scope, r.n) for r in report.pairs] == [("judge:j", "human:h", "Q9", 1)]
    selves = {s.scope: s for s in report.self_agreement}
    assert set(selves) == {"Q2", "Q9"} and selves["Q2"].identical_share == 1.0 and selves["Q2"].units == 2
    assert (selves["Q9"].runs, selves["Q9"].units, selves["Q9"].identical_share) == (2, 1, 0.0)
