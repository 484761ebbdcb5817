"""Importing without an items file, and the formats of other tools, from fixtures written for these
tests (tests/cases/importing/formats/, real-shaped, made up here): questions and gold answers from
the source, the source's own verdicts kept, `-F` list paths, partial Inspect logs, lm-eval filters
and results files, the math-evaluation-harness layout, MathVista-style records, lm-eval `cache`
JSON. Logs written by the real Inspect and lm-eval are in tests/integration/test_import_*.py.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from mathlens.errors import UserError
from mathlens.items.schema import Question
from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.importing.source_items import reference_answer
from mathlens.runs.records import ItemSource, RunRecord
from mathlens.runs.store import RunStore

FORMATS = Path(__file__).resolve().parents[1] / "cases" / "importing" / "formats"


def _run(source: Path, out: Path, **kw: Any) -> tuple[Any, list[RunRecord], dict[str, Question]]:
    result = import_run(ImportRequest(source=source, items=kw.pop("items", []), out=out, **kw))
    store = RunStore(result.root)
    questions = {q.id: q for exam in store.exams() for q in exam.questions}
    return result.imported, list(store.records()), questions


@pytest.mark.parametrize(("target", "answer"), [
    ("5", "5"), (" 42 ", "42"), ("3 + 4 = 7\n#### 7", "7"), ("so...\n#### 1,234", "1234"),
    ("#### x = 3", "x = 3"), ("The area is $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
    ("first \\boxed{1} then \\boxed{{2}}", "{2}"), ("\\boxed{unclosed", "\\boxed{unclosed"), ("\\fbox{9}", "9"),
])
def test_reference_answer_reads_a_worked_target_down_to_its_answer(target: str, answer: str) -> None:
    assert reference_answer(target) == answer


def test_math_eval_harness_layout_each_sample_a_repeat(tmp_path: Path) -> None:
    imp, records, questions = _run(FORMATS / "math_eval.jsonl", tmp_path / "run", model="tora-7b")
    assert imp.format == "math-eval" and imp.items_from == "source"
    assert (imp.rows, imp.records, imp.scored) == (6, 6, 6)
    assert set(questions) == {"0", "1", "2"}
    assert questions["0"].answers == ["\\frac{1}{2}"] and questions["0"].level == 1
    assert questions["2"].subject == "Number Theory"
    by = {(r.question_id, r.repeat): r for r in records}
    assert set(by) == {(q, k) for q in "012" for k in (0, 1)}
    half = by[("0", 1)]
    assert half.response is not None and half.response.endswith("$\\boxed{0.5}$.")
    assert half.source_scores is not None
    (score,) = half.source_scores
    assert (score.scorer, score.value, score.correct, score.answer) == ("score[*]", False, False, "0.5")
    assert by[("1", 0)].source_scores[0].correct is True  # type: ignore[index]


def test_list_paths_pick_an_element_or_take_every_one(tmp_path: Path) -> None:
    first = _run(FORMATS / "math_eval.jsonl", tmp_path / "first", model="m", fmt="jsonl",
                 mapping={"response": "code[0]", "target": "gt", "id": "idx"})[1]
    assert [(r.question_id, r.repeat) for r in first] == [("0", 0), ("1", 0), ("2", 0)]
    assert first[1].response == "Subtracting 5 from both sides, $2x = 12$, so $x = \\boxed{6}$."
    every = _run(FORMATS / "math_eval.jsonl", tmp_path / "every", model="m", fmt="jsonl",
                 mapping={"response": "code[*]", "id": "idx"})[1]
    assert len(every) == 6 and {r.repeat for r in every} == {0, 1}


def test_star_fields_of_different_lengths_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"idx": 0, "question": "What is 2 + 3?", "gt": "5", "code": ["5", "6"],
                                  "pred": ["5"], "score": [True, False]}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"out\.jsonl: line 1: the \[\*\] fields have different lengths "
                                        r"\(code\[\*\]: 2, pred\[\*\]: 1, score\[\*\]: 2\)"):
        _run(source, tmp_path / "run", model="m")
    assert not (tmp_path / "run").exists()
    with pytest.raises(UserError, match="at most one"):
        _run(source, tmp_path / "run2", model="m", fmt="jsonl", mapping={"response": "code[*].x[*]"})


def test_mathvista_records_keyed_by_id(tmp_path: Path) -> None:
    imp, records, questions = _run(FORMATS / "mathvista.json", tmp_path / "run", model="my-vlm")
    assert imp.format == "records-json" and imp.records == 3
    assert questions["1"].images == ["images/1.jpg"] and questions["1"].answers == ["14"]
    assert questions["2"].choices == {"A": "angle A", "B": "angle B", "C": "angle C"}
    by = {r.question_id: r for r in records}
    verdicts = {q: (r.source_scores[0].correct, r.source_scores[0].answer) for q, r in by.items()
                if r.source_scores}
    assert verdicts == {"1": (True, "14"), "2": (True, "B"), "3": (False, "30")}


def test_mathvista_metadata_scalars_are_kept(tmp_path: Path) -> None:
    questions = _run(FORMATS / "mathvista.json", tmp_path / "run", model="m")[2]
    meta = questions["3"].metadata
    # scalars are kept; the list of skills is not a scalar
    assert meta["grade"] == "high school" and meta["task"] == "geometry problem solving" and "skills" not in meta


def test_a_list_of_records_takes_ids_from_the_records(tmp_path: Path) -> None:
    doc = json.loads((FORMATS / "mathvista.json").read_text(encoding="utf-8"))
    source = tmp_path / "list.json"
    source.write_text(json.dumps(list(doc.values())), encoding="utf-8")
    imp, _, questions = _run(source, tmp_path / "run", model="m")
    assert imp.format == "records-json" and set(questions) == {"1", "2", "3"}  # from `pid`


def test_lm_eval_filters_are_one_row_with_a_verdict_per_filter(tmp_path: Path) -> None:
    samples = next((FORMATS / "lmeval").glob("samples_*.jsonl"))
    imp, records, questions = _run(samples, tmp_path / "run")
    assert imp.format == "lm-eval" and imp.task == "gsm_cot_chat"
    assert (imp.rows, imp.records, imp.scored) == (3, 3, 3)  # six lines: three documents under two filters
    assert {r.model for r in records} == {"tutor-7b-chat"}  # from the results file beside it
    assert imp.settings["num_fewshot"] == 0 and imp.settings["lm_eval_version"] == "0.4.13"
    assert "sk-not-a-real-key" not in json.dumps(imp.settings) and "api_key=[REDACTED]" in str(imp.settings)
    assert questions["0"].answers == ["7"] and questions["2"].answers == ["105"]
    third = next(r for r in records if r.question_id == "2")
    assert third.reasoning == "15 times 7 is 105." and third.response == "He reads 15 * 7 = 105 pages.\n#### 1,05"
    assert [m.role for m in third.messages] == ["system", "user"]  # the chat prompt, decoded
    assert third.config.max_tokens == 256 and third.config.stop == ("Question:", "</s>")
    scores = {s.scorer: (s.correct, s.answer) for s in third.source_scores or []}
    assert scores == {"exact_match (strict-match)": (False, "1,05"), "exact_match (flexible-extract)": (False, "05")}


def test_lm_eval_without_its_results_file_needs_the_model(tmp_path: Path) -> None:
    samples = next((FORMATS / "lmeval").glob("samples_*.jsonl"))
    alone = tmp_path / samples.name
    shutil.copy(samples, alone)
    with pytest.raises(UserError, match="does not name the model"):
        _run(alone, tmp_path / "run")
    imp, records, _ = _run(alone, tmp_path / "run2", model="mine")
    assert {r.model for r in records} == {"mine"} and imp.settings == {}


def test_a_damaged_results_file_is_a_warning_not_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = next((FORMATS / "lmeval").glob("samples_*.jsonl"))
    shutil.copy(samples, tmp_path / samples.name)
    stamp = samples.stem.rsplit("_", 1)[1]
    (tmp_path / f"results_{stamp}.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    _run(tmp_path / samples.name, tmp_path / "run", model="m")
    assert "values nest 100,000 levels deep" in capsys.readouterr().err


def test_lm_eval_loglikelihood_tasks_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"resps\[0\]\[0\]'?: not a generated text: this is a loglikelihood"):
        _run(FORMATS / "samples_mc_2026-11-20T10-00-00.000001.jsonl", tmp_path / "run", model="m")
    assert not (tmp_path / "run").exists()


def test_lm_eval_cache_json_one_item_set_per_task(tmp_path: Path) -> None:
    imp, records, _ = _run(FORMATS / "lm_eval_cache.json", tmp_path / "run")
    assert imp.format == "lm-eval-json" and imp.records == 4
    assert {r.model for r in records} == {"acme/math-1b"}  # pretrained= of the model arguments
    exams = {e.id: e for e in RunStore(tmp_path / "run").exams()}
    assert set(exams) == {"gsm_cot_chat", "minimath"}
    (power,) = exams["minimath"].questions
    assert power.text == "Compute $2^5$." and power.answers == ["32"] and power.level == 1
    rec = next(r for r in records if r.exam_id == "minimath")
    assert rec.source_scores is not None and rec.source_scores[0].scorer == "exact_match"


def test_items_still_win_when_given(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "tim", "text": "Tim reads 15 pages a day. How many pages does he read in a "
                                 "week?", "answers": ["105"]}) + "\n", encoding="utf-8")
    samples = next((FORMATS / "lmeval").glob("samples_*.jsonl"))
    imp, records, questions = _run(samples, tmp_path / "run", items=[ItemSource(source=str(items))])
    assert imp.items_from == "items" and set(questions) == {"tim"}
    assert [r.question_id for r in records] == ["tim"] and imp.unmatched == 2
    assert records[0].source_scores is not None  # the source's verdicts are kept either way


def test_a_cancelled_inspect_log_imports_what_it_has_flagged_partial(tmp_path: Path) -> None:
    imp, _, questions = _run(FORMATS / "inspect_cancelled.json", tmp_path / "run", reader="mathlens")
    assert (imp.partial, imp.planned, imp.rows) == ("cancelled", 6, 2)
    assert set(questions) == {"a1", "a2"} and questions["a1"].answers == ["4"]


def test_a_row_without_a_question_text_needs_items(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"id": "q1", "response": "5", "model": "m"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"line 1: field 'question': has no question text.*--items"):
        _run(source, tmp_path / "run")


def test_one_id_for_two_questions_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": 1, "question": "What is 2 + 3?", "response": "5", "model": "m"},
        {"id": 1, "question": "What is 4 + 4?", "response": "8", "model": "m"}]), encoding="utf-8")
    with pytest.raises(UserError, match=r"line 2: field 'question': id '1' was given to another question at line 1"):
        _run(source, tmp_path / "run")


def test_rows_without_ids_are_told_apart_by_their_text(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "What is 2 + 3?", "response": "5", "answer": "5", "model": "m"},
        {"question": "What is 4 + 4?", "response": "8", "answer": "8", "model": "m"},
        {"question": "what is 2 +   3?", "response": "6", "model": "m"}]), encoding="utf-8")
    _, records, questions = _run(source, tmp_path / "run")
    assert {q: x.answers for q, x in questions.items()} == {"q1": ["5"], "q2": ["8"]}
    assert [(r.question_id, r.repeat) for r in records] == [("q1", 0), ("q2", 0), ("q1", 1)]


def test_an_aime_style_eval_log_with_epochs_and_no_items(tmp_path: Path) -> None:
    header = {"version": 2, "status": "success", "eval": {
        "created": "2026-11-20T10:00:00+00:00", "task": "aime2024", "model": "openai/o-mini",
        "dataset": {"name": "aime", "samples": 2, "sample_ids": ["2024-I-3", "2024-II-11"]}, "config": {"epochs": 3}},
        "plan": {"config": {"temperature": 0.6}}}

    def sample(sid: str, epoch: int, question: str, target: str, answer: str) -> dict[str, Any]:
        return {"id": sid, "epoch": epoch, "input": question, "target": target,
                "metadata": {"year": 2024, "problem_number": int(sid.rsplit("-", 1)[1])},
                "output": {"completion": answer, "choices": [{"message": {"role": "assistant", "content": answer},
                                                              "stop_reason": "stop"}]},
                "scores": {"aime_scorer": {"value": "C" if answer.endswith(target) else "I", "answer": answer[-3:]}}}
    log = tmp_path / "aime.eval"
    with zipfile.ZipFile(log, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(header))
        for epoch in (1, 2, 3):
            z.writestr(f"samples/2024-I-3_epoch_{epoch}.json", json.dumps(sample(
                "2024-I-3", epoch, "Find the number of positive integers n at most 2024 such that ...", "809",
                "So the count is 809" if epoch != 2 else "So the count is 810")))
            z.writestr(f"samples/2024-II-11_epoch_{epoch}.json", json.dumps(sample(
                "2024-II-11", epoch, "Find the remainder when the product is divided by 1000.", "601",
                "The remainder is 601")))
    for reader in ("mathlens", "inspect_ai"):
        if reader == "inspect_ai":
            pytest.importorskip("inspect_ai")
        imp, records, questions = _run(log, tmp_path / f"run-{reader}", reader=reader)
        assert imp.task == "aime2024" and set(questions) == {"2024-I-3", "2024-II-11"}
        assert questions["2024-I-3"].metadata == {"year": 2024, "problem_number": 3}
        assert sorted((r.question_id, r.repeat) for r in records) == \
            [(q, k) for q in ("2024-I-3", "2024-II-11") for k in range(3)]
        wrong = [(r.question_id, r.repeat) for r in records if r.source_scores and not r.source_scores[0].correct]
        assert wrong == [("2024-I-3", 1)]


@pytest.mark.parametrize("fixture", ["inspect_match_audit.json", "inspect_cancelled.json"])
def test_inspects_own_reader_reads_the_hand_written_logs_alike(fixture: str, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install 'mathlens[interop]')")
    ours = _run(FORMATS / fixture, tmp_path / "ours", reader="mathlens")
    theirs = _run(FORMATS / fixture, tmp_path / "theirs", reader="inspect_ai")
    assert ours[2] == theirs[2]
    strip = {"created_at"}
    assert [r.model_dump(exclude=strip) for r in ours[1]] == [r.model_dump(exclude=strip) for r in theirs[1]]
    assert ours[0].partial == theirs[0].partial
