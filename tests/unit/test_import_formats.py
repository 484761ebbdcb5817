"""`mathlens import` of plain JSONL (a round trip through a real run's records), CSV with a field
mapping, and OpenAI batch output; unmatched rows, error rows, repeats and the matching rules."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.items.schema import Exam, Question
from mathlens.runs.importing.common import SourceRow
from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.importing.matching import Matcher
from mathlens.runs.records import ItemSource, RunRecord
from mathlens.runs.store import RunStore

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "importing"
ITEMS = [ItemSource(source=str(CASES_DIR / "items.jsonl"))]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _records(root: Path) -> list[RunRecord]:
    return list(RunStore(root).records())


def test_jsonl_round_trip_of_a_real_run(tmp_path: Path) -> None:
    replies = ["Final answer: 5", "<think>power rule</think>Final answer: 2x", "Final answer: 30"]
    made = _cli(["run", str(CASES_DIR / "items.jsonl"), "--model", "mock/fixed", "-M",
                 "responses=" + json.dumps(replies), "-M", 'errors=["permanent"]', "--runs", "2", "--attempts", "1",
                 "--out", "made", "--quiet"], tmp_path)
    assert made.returncode == 0, made.stderr
    original = {r.key: r for r in _records(tmp_path / "made")}
    assert sum(r.status == "error" for r in original.values()) == 1
    # the export: one JSON object per record, as another tool (or a script) would write them
    exported = tmp_path / "export.jsonl"
    with exported.open("w", encoding="utf-8") as fh:
        for r in original.values():
            fh.write(json.dumps({"question_id": r.question_id, "exam_id": r.exam_id, "model": r.model,
                                 "repeat": r.repeat, "response": r.response, "reasoning": r.reasoning,
                                 "status": r.status, "error": r.error, "finish_reason": r.finish_reason,
                                 "messages": [m.model_dump(mode="json") for m in r.messages]}) + "\n")
    result = import_run(ImportRequest(source=exported, items=ITEMS, out=tmp_path / "back"))
    back = {r.key: r for r in _records(tmp_path / "back")}
    assert back.keys() == original.keys()
    for key, r in original.items():
        b = back[key]
        assert (b.response, b.reasoning, b.status, b.messages, b.repeat) == \
            (r.response, r.reasoning, r.status, r.messages, r.repeat), key
        assert (b.error is not None) == (r.error is not None)
    assert result.imported.format == "jsonl" and result.imported.errors == 1
    assert result.imported.matched_by_id == len(original)
    # the records file of a run is itself a JSONL export and reads back with the default keys
    again = import_run(ImportRequest(source=tmp_path / "made" / "records.jsonl", items=ITEMS, out=tmp_path / "again"))
    assert {r.key for r in _records(again.root)} == set(original)


def test_csv_with_a_field_mapping(tmp_path: Path) -> None:
    source = tmp_path / "outputs.csv"
    rows = [
        {"qid": "", "prompt": "Question: What is 2 + 3?\nAnswer:", "output": "<think>2+3</think>5", "who": "m1",
         "n": ""},
        {"qid": "q2", "prompt": "", "output": "The derivative is\n2x", "who": "m1", "n": "3"},
        {"qid": "", "prompt": "A box holds 6 pens. How many pens are in 5 boxes?", "output": "30", "who": "m2",
         "n": ""},
        {"qid": "zz", "prompt": "What is the capital of France?", "output": "Paris", "who": "m1", "n": ""},
    ]
    with source.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = import_run(ImportRequest(source=source, items=ITEMS, out=tmp_path / "run", mapping={
        "id": "qid", "question": "prompt", "response": "output", "model": "who", "repeat": "n"}))
    got = {(r.model, r.question_id, r.repeat): r for r in _records(result.root)}
    assert set(got) == {("m1", "q1", 0), ("m1", "q2", 3), ("m2", "q3", 0)}
    assert got[("m1", "q1", 0)].reasoning == "2+3" and got[("m1", "q1", 0)].response == "5"
    assert got[("m1", "q2", 3)].response == "The derivative is\n2x"
    imp = result.imported
    assert (imp.rows, imp.records, imp.matched_by_id, imp.matched_by_text, imp.unmatched) == (4, 3, 1, 2, 1)
    (unmatched,) = imp.unmatched_rows
    # the header is line 1 and the first two rows span two lines each: the fourth row starts on line 7
    assert unmatched.where == "line 7" and unmatched.id == "zz" and "matches no question" in unmatched.reason
    manifest = RunStore(result.root).manifest()
    assert [m.spec for m in manifest.models] == ["m1", "m2"] and manifest.runs == 4


BATCH = [
    {"id": "b1", "custom_id": "q1", "error": None, "response": {"status_code": 200, "request_id": "r1", "body": {
        "id": "c1", "object": "chat.completion", "model": "gpt-x-2025", "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Final answer: 5", "reasoning_content": "Two plus three."}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}}}},
    {"id": "b2", "custom_id": "q2", "error": None, "response": {"status_code": 200, "request_id": "r2", "body": {
        "model": "gpt-x-2025", "choices": [{
            "index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "The derivative of x^2 is"}}]}}},
    {"id": "b3", "custom_id": "q3", "response": None,
     "error": {"code": "batch_expired", "message": "This request could not be executed before the window expired."}},
    {"id": "b4", "custom_id": "q1-again", "error": None, "response": {"status_code": 429, "request_id": "r4", "body": {
        "error": {"message": "Rate limit reached", "type": "requests"}}}},
]


def test_openai_batch_output(tmp_path: Path) -> None:
    source = tmp_path / "batch_output.jsonl"
    source.write_text("".join(json.dumps(b) + "\n" for b in BATCH), encoding="utf-8")
    result = import_run(ImportRequest(source=source, items=ITEMS, out=tmp_path / "run"))
    assert result.imported.format == "openai-batch"
    recs = {r.question_id: r for r in _records(result.root)}
    assert set(recs) == {"q1", "q2", "q3"} and result.imported.unmatched == 1  # q1-again is no question id
    assert recs["q1"].model == "gpt-x-2025" and recs["q1"].reasoning == "Two plus three."
    assert recs["q1"].response == "Final answer: 5" and recs["q1"].usage.completion_tokens == 4
    assert recs["q2"].truncated and recs["q2"].status == "ok"
    assert recs["q3"].status == "error" and "batch_expired" in (recs["q3"].error or "")
    assert recs["q3"].model == "gpt-x-2025"  # an error line names no model: the file's one model is taken


def test_openai_batch_with_its_requests_matches_by_text(tmp_path: Path) -> None:
    requests = tmp_path / "batch_input.jsonl"
    texts = {"req-1": "What is 2 + 3?", "req-2": "Find the derivative of x^2.", "req-3": "A box holds 6 pens. "
             "How many pens are in 5 boxes?", "req-4": "What is 2 + 3?"}
    requests.write_text("".join(json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                                            "body": {"model": "gpt-x", "messages": [
                                                {"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": t}]}}) + "\n"
                                for cid, t in texts.items()), encoding="utf-8")
    lines = [dict(b, custom_id=f"req-{i + 1}") for i, b in enumerate(BATCH)]
    lines[3] = dict(BATCH[0], custom_id="req-4")  # a second answer to q1: repeat 1
    source = tmp_path / "batch_output.jsonl"
    source.write_text("".join(json.dumps(b) + "\n" for b in lines), encoding="utf-8")
    result = import_run(ImportRequest(source=source, items=ITEMS, out=tmp_path / "run", model="gpt-x",
                                      requests=requests))
    recs = {(r.question_id, r.repeat): r for r in _records(result.root)}
    assert set(recs) == {("q1", 0), ("q1", 1), ("q2", 0), ("q3", 0)}
    assert result.imported.matched_by_text == 4 and result.imported.unmatched == 0
    assert [m.role for m in recs[("q2", 0)].messages] == ["system", "user"]
    assert RunStore(result.root).manifest().system_role == "Be brief."


def test_unmatched_rows_are_printed_and_in_the_json_output(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "q1", "response": "5", "model": "m"},
        {"id": "nope", "response": "?", "model": "m"},
        {"question": "Name the capital of France.", "response": "Paris", "model": "m"},
        {"id": "q2", "error": {"code": "timeout", "message": "took too long"}, "model": "m"},
    ]), encoding="utf-8")
    items = str(CASES_DIR / "items.jsonl")
    shown = _cli(["import", str(source), "--items", items, "--out", "run"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "unmatched line 2 id 'nope': no question has the id 'nope'" in shown.stderr
    assert "unmatched line 3: its question text matches no question" in shown.stderr
    doc = _cli(["import", str(source), "--items", items, "--out", "run2", "--json"], tmp_path)
    imported = json.loads(doc.stdout)["imported"]
    assert [u["where"] for u in imported["unmatched_rows"]] == ["line 2", "line 3"]
    assert (imported["records"], imported["errors"]) == (2, 1)
    err = next(r for r in _records(tmp_path / "run2") if r.status == "error")
    assert err.question_id == "q2" and err.error == "timeout: took too long" and err.response is None
    manifest = json.loads((tmp_path / "run2" / "manifest.json").read_text())
    assert manifest["imported"]["unmatched"] == 2 and manifest["imported"]["source"] == str(source)
    show = _cli(["show", "run2", "--json"], tmp_path)
    assert json.loads(show.stdout)["imported"]["unmatched_rows"][0]["id"] == "nope"


def test_rows_without_a_repeat_number_are_repeats_in_file_order(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps({"id": "q1", "response": f"answer {k}", "model": "m"}) + "\n"
                              for k in range(3)), encoding="utf-8")
    result = import_run(ImportRequest(source=source, items=ITEMS, out=tmp_path / "run", configuration="rag"))
    recs = _records(result.root)
    assert [(r.repeat, r.response, r.configuration) for r in recs] == \
        [(0, "answer 0", "rag"), (1, "answer 1", "rag"), (2, "answer 2", "rag")]
    assert len({r.key for r in recs}) == 3 and RunStore(result.root).manifest().runs == 3


def _exams() -> list[Exam]:
    return [Exam(id="e1", name="e1", questions=[
        Question(id="1", text="What is 2 + 3?"), Question(id="2", text="What is 3 * 4?"),
        Question(id="long", text="What is 3 * 4 plus one?")]),
        Exam(id="e2", name="e2", questions=[Question(id="1", text="Differentiate sin x.")])]


@pytest.mark.parametrize(("row", "expect"), [
    (SourceRow(where="r", id="2"), ("e1", "2", "id")),
    (SourceRow(where="r", id="1"), ("none", "several item sets")),
    (SourceRow(where="r", id="1", exam="e2"), ("e2", "1", "id")),
    # Inspect numbers samples 1, 2, ... when a dataset has no ids: the text shows which question it was
    (SourceRow(where="r", id="1", question="What is 3 * 4?"), ("e1", "2", "text")),
    (SourceRow(where="r", question="  WHAT is 3 *   4?"), ("e1", "2", "text")),
    (SourceRow(where="r", question="Question: What is 3 * 4 plus one?\nAnswer:"), ("e1", "long", "text")),
    (SourceRow(where="r", question="Solve this. What is 3 * 4?"), ("e1", "2", "text")),
    (SourceRow(where="r", question="What is 2 + 3? And what is 3 * 4?"), ("none", "several questions")),
    (SourceRow(where="r", question="Integrate x."), ("none", "matches no question")),
], ids=["id", "id in two sets", "id with its set", "text beats a numbered id", "case and spaces",
        "longest contained", "template around it", "two contained", "no match"])
def test_matching_rules(row: SourceRow, expect: tuple[str, ...]) -> None:
    m = Matcher(_exams()).match(row)
    if expect[0] == "none":
        assert m.question is None and expect[1] in m.reason
    else:
        assert m.question is not None and (m.exam_id, m.question.id, m.by) == expect


def test_matching_by_id_only_ignores_the_text() -> None:
    m = Matcher(_exams(), by="id").match(SourceRow(where="r", id="2", question="What is 2 + 3?"))
    assert m.question is not None and m.question.id == "2" and m.by == "id"
    t = Matcher(_exams(), by="text").match(SourceRow(where="r", id="2", question="What is 2 + 3?"))
    assert t.question is not None and t.question.id == "1" and t.by == "text"
