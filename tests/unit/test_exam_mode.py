"""The sequential exam mode: an exam's questions in order within one conversation per (model,
configuration, exam, repeat), with errors, resumes, variants and retrieval handled as
docs/exam-setup.md says."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.errors import PermanentModelError, UserError
from mathlens.items.schema import Question
from mathlens.models.base import GenerateConfig, Message
from mathlens.models.model import Model, RetryPolicy
from mathlens.models.registry import get_model
from mathlens.runs.plan import conversations, estimate_prompt_tokens, plan_tasks
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord
from mathlens.runs.runner import Progress, base_manifest, execute
from mathlens.runs.store import RunStore
from mathlens.solve.configurations import CONFIGURATIONS, Built, Retrieval
from mathlens.solve.prompts import question_message
from mathlens.solve.tutoring import LearnerProfile, TutorDesign

SPEC = "mock/seq"
TEXTS = ["Question one: compute 1+1.", "Question two: compute 2+2.", "Question three: compute 3+3."]


def _answer(messages: list[Message]) -> str:
    """A deterministic reply naming the question it answers (whatever the order of calls)."""
    return "Answer to " + messages[-1].content.split(":")[0].lower()


def _exam(tmp_path: Path, texts: list[str] = TEXTS) -> Path:
    path = tmp_path / "exam.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i + 1}", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def _manifest(data: Path, mode: str = "sequential", **extra: Any) -> Manifest:
    return base_manifest(items=[ItemSource(source=str(data))], models=[ModelEntry(spec=SPEC)],
                         generate=GenerateConfig(max_tokens=32), system_role="S", exam_mode=mode, **extra)


def _model(func: Callable[[list[Message]], str] = _answer) -> Model:
    return get_model(SPEC, {"func": func}, cache=None, retry=RetryPolicy(max_attempts=1))


def _execute(root: Path, manifest: Manifest, model: Model, progress: Progress | None = None) -> Any:
    store = RunStore(root)
    if not store.manifest_path.exists():
        store.write_manifest(manifest)

    async def go() -> Any:
        async with model:
            return await execute(store, manifest, {SPEC: model}, progress)

    return asyncio.run(go())


def _records(root: Path) -> list[RunRecord]:
    return list(RunStore(root).records())


def _turns(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def test_sequential_run_sends_growing_conversations(tmp_path: Path) -> None:
    model = _model()
    result = _execute(tmp_path / "run", _manifest(_exam(tmp_path)), model)
    sent = [_turns(messages) for messages, _config, _schema in model.provider.requests]  # type: ignore[attr-defined]
    assert result.written == 3 and len(sent) == 3
    a1, a2 = "Answer to question one", "Answer to question two"
    assert sent[0] == [("system", "S"), ("user", TEXTS[0])]
    assert sent[1] == [("system", "S"), ("user", TEXTS[0]), ("assistant", a1), ("user", TEXTS[1])]
    assert sent[2] == [("system", "S"), ("user", TEXTS[0]), ("assistant", a1), ("user", TEXTS[1]),
                       ("assistant", a2), ("user", TEXTS[2])]
    recs = _records(tmp_path / "run")
    assert [(r.question_id, r.turn) for r in recs] == [("q1", 0), ("q2", 1), ("q3", 2)]
    assert {r.conversation for r in recs} == {f"{SPEC}|baseline|exam|r0"}
    # each record keeps the whole conversation it sent, and its answer is to its own question
    assert [_turns(r.messages) for r in recs] == sent
    assert [r.response for r in recs] == [a1, a2, "Answer to question three"]
    # the keys are the per-question keys, so every analysis reads a sequential run unchanged
    assert [r.key for r in recs] == [f"{SPEC}|baseline|exam|q{i}|original|r0" for i in (1, 2, 3)]


def test_request_hash_covers_the_whole_conversation(tmp_path: Path) -> None:
    data = _exam(tmp_path)
    _execute(tmp_path / "seq", _manifest(data), _model())
    _execute(tmp_path / "one", _manifest(data, "per-question"), _model())
    seq = {r.question_id: r for r in _records(tmp_path / "seq")}
    one = {r.question_id: r for r in _records(tmp_path / "one")}
    # question 1 is the same request in both modes (one cache entry); the later ones are not
    assert seq["q1"].request_hash == one["q1"].request_hash
    assert seq["q2"].request_hash != one["q2"].request_hash
    assert seq["q3"].request_hash != one["q3"].request_hash
    assert all(r.conversation is None and r.turn is None and len(r.messages) == 2 for r in one.values())


def test_repeats_are_separate_conversations(tmp_path: Path) -> None:
    _execute(tmp_path / "run", _manifest(_exam(tmp_path), runs=2), _model())
    recs = _records(tmp_path / "run")
    by_conv: dict[str, list[RunRecord]] = {}
    for r in recs:
        by_conv.setdefault(str(r.conversation), []).append(r)
    assert sorted(by_conv) == [f"{SPEC}|baseline|exam|r0", f"{SPEC}|baseline|exam|r1"]
    for conv, rs in by_conv.items():
        assert [r.question_id for r in rs] == ["q1", "q2", "q3"]
        assert {r.repeat for r in rs} == {int(conv[-1])}
        last = rs[-1].messages
        assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_a_failed_question_is_recorded_and_left_out_of_later_turns(tmp_path: Path) -> None:
    def flaky(messages: list[Message]) -> str:
        if messages[-1].content == TEXTS[1]:
            raise PermanentModelError("refused")
        return _answer(messages)

    root = tmp_path / "run"
    manifest = _manifest(_exam(tmp_path))
    result = _execute(root, manifest, _model(flaky))
    recs = {r.question_id: r for r in _records(root)}
    assert result.written == 3 and result.errors == 1
    assert recs["q2"].status == "error" and "refused" in (recs["q2"].error or "")
    assert _turns(recs["q2"].messages) == [("system", "S"), ("user", TEXTS[0]),
                                           ("assistant", "Answer to question one"), ("user", TEXTS[1])]
    # question 3 follows the last answered question: the messages still alternate question, answer
    assert _turns(recs["q3"].messages) == [("system", "S"), ("user", TEXTS[0]),
                                           ("assistant", "Answer to question one"), ("user", TEXTS[2])]
    assert recs["q3"].status == "ok"
    # --retry-errors sends question 2 again, at its place in the conversation, and nothing else
    assert RunStore(root).drop_error_records() == 1
    model = _model()
    again = _execute(root, manifest, model)
    assert again.written == 1 and len(model.provider.requests) == 1  # type: ignore[attr-defined]
    fixed = {r.question_id: r for r in _records(root)}
    assert fixed["q2"].status == "ok" and fixed["q2"].response == "Answer to question two"
    assert _turns(fixed["q2"].messages) == _turns(recs["q2"].messages)


class _Stop(Exception):
    """Stands in for a kill: raised after a number of records were written."""


def test_resume_after_interruption_continues_the_conversation_exactly(tmp_path: Path) -> None:
    data = _exam(tmp_path)
    manifest = _manifest(data)
    _execute(tmp_path / "full", manifest, _model())
    full = {r.key: r for r in _records(tmp_path / "full")}

    written: list[RunRecord] = []

    def on_record(rec: RunRecord) -> None:
        written.append(rec)
        if len(written) == 2:
            raise _Stop

    cut = tmp_path / "cut"
    with pytest.raises(_Stop):
        _execute(cut, manifest, _model(), Progress(on_record=on_record))
    assert [r.question_id for r in _records(cut)] == ["q1", "q2"]
    model = _model()
    result = _execute(cut, manifest, model)
    assert (result.skipped, result.written) == (2, 1)
    only = model.provider.requests  # type: ignore[attr-defined]
    assert len(only) == 1 and _turns(only[0][0]) == _turns(full[f"{SPEC}|baseline|exam|q3|original|r0"].messages)
    got = _records(cut)
    assert len(got) == len({r.key for r in got}) == 3
    assert {r.key: (_turns(r.messages), r.response) for r in got} == \
        {k: (_turns(r.messages), r.response) for k, r in full.items()}


def _cli(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_cli_resume_of_a_cut_record_file(tmp_path: Path) -> None:
    full = tmp_path / "full"
    _cli("run", "calc1-exam1", "--model", "mock/echo", "--limit", "3", "--exam-mode", "sequential",
         "--out", str(full), "-q")
    cut = tmp_path / "cut"
    shutil.copytree(full, cut)
    lines = (full / "records.jsonl").read_text().splitlines(keepends=True)
    assert len(lines) == 3
    (cut / "records.jsonl").write_text("".join(lines[:2]) + lines[2][:40])  # two records and a torn third
    doc = _cli("run", "--resume", str(cut), "-q")
    assert doc["this_invocation"]["written"] == 1 and doc["this_invocation"]["skipped"] == 2
    got = [json.loads(line) for line in (cut / "records.jsonl").read_text().splitlines()]
    want = [json.loads(line) for line in lines]
    assert [r["key"] for r in got] == [r["key"] for r in want]
    assert [(r["messages"], r["response"], r["turn"]) for r in got] == \
        [(r["messages"], r["response"], r["turn"]) for r in want]
    manifest = json.loads((cut / "manifest.json").read_text())
    assert manifest["exam_mode"] == "sequential" and manifest["system_role_name"] == "exam"


def test_resume_refuses_a_new_mode(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _cli("run", "calc1-exam1", "--model", "mock/echo", "--limit", "1", "--out", str(run), "-q")
    res = CliRunner().invoke(app, ["run", "--resume", str(run), "--exam-mode", "sequential"])
    assert res.exit_code == 2 and "--exam-mode" in res.output and "manifest" in res.output


def test_bad_exam_mode_names_the_modes(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--exam-mode", "whole",
                                   "--out", str(tmp_path / "run")])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "per-question" in text and "sequential" in text and "'whole'" in text
    assert not (tmp_path / "run").exists()


def test_ablation_variants_branch_off_the_conversation(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _cli("run", "calc1-exam1", "--model", "mock/echo", "--limit", "2", "--exam-mode", "sequential",
         "--ablate=all", "--out", str(run), "-q")
    recs = _records(run)
    originals = {r.question_id: r for r in recs if r.variant.kind == "original"}
    variants = [r for r in recs if r.variant.kind != "original"]
    assert set(originals) == {"q1", "q2"} and any(r.question_id == "q2" for r in variants)
    first = originals["q1"]
    # question 2 follows the original question 1 and its answer, never a variant's
    assert _turns(originals["q2"].messages[:-1]) == [*_turns(first.messages), ("assistant", first.response or "")]
    for v in variants:
        want_prefix = first.messages[:1] if v.question_id == "q1" else originals["q2"].messages[:-1]
        assert _turns(v.messages[:-1]) == _turns(want_prefix), v.key
        assert v.messages[-1].content == v.variant.question_text and v.turn == originals[v.question_id].turn
        assert v.conversation == first.conversation


class _FakeRetrieval:
    """A retrieval configuration without a knowledge base: each question gets its own context."""

    name = "fake-rag"

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.options = options

    def build(self, question: Question, system_role: str, text: str | None = None) -> Built:
        context = f"[context for {question.id}]"
        return Built(messages=[Message(role="system", content=system_role),
                               question_message(question, text, context=context)],
                     retrieval=Retrieval(kb="fake", mode="test", query=question.id, texts=[context]))


def test_retrieval_configurations_keep_each_turn_as_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CONFIGURATIONS, "fake-rag", f"{__name__}:_FakeRetrieval")
    _execute(tmp_path / "run", _manifest(_exam(tmp_path), configurations=["fake-rag"]), _model())
    recs = _records(tmp_path / "run")
    assert [r.retrieval.query for r in recs if r.retrieval] == ["q1", "q2", "q3"]  # each turn's own retrieval
    users = [m.content for m in recs[2].messages if m.role == "user"]
    assert [u.split("\n")[0] for u in users] == ["[context for q1]", "[context for q2]", "[context for q3]"]
    assert users[0].endswith(TEXTS[0]) and users[2].endswith(TEXTS[2])


def test_plan_groups_conversations_in_exam_order(tmp_path: Path) -> None:
    tasks = plan_tasks(_manifest(_exam(tmp_path), runs=2))
    convs = conversations(tasks)
    assert len(convs) == 2
    for conv in convs:
        assert [[t.question_id for t in turn] for turn in conv] == [["q1"], ["q2"], ["q3"]]
        assert [turn[0].turn for turn in conv] == [0, 1, 2]
        assert all(len(turn[0].messages) == 2 for turn in conv)  # the question's own turn only
    with pytest.raises(ValueError, match="not part of a conversation"):
        conversations(plan_tasks(_manifest(_exam(tmp_path), "per-question")))


def test_dry_run_estimate_counts_the_earlier_turns(tmp_path: Path) -> None:
    data = _exam(tmp_path, ["x" * 40, "y" * 80])
    one = estimate_prompt_tokens(plan_tasks(_manifest(data, "per-question")))
    seq = estimate_prompt_tokens(plan_tasks(_manifest(data)))
    # question 2 also carries question 1 (40 characters: 10 tokens + 4) and its answer at the cap (32 + 4)
    assert seq - one == 10 + 4 + 32 + 4


def test_sequential_mode_refuses_a_tutoring_run(tmp_path: Path) -> None:
    design = TutorDesign(profiles=(LearnerProfile(id="a", grade=4, performance="low"),), conditions=(1,))
    with pytest.raises(UserError, match="tutoring"):
        plan_tasks(_manifest(_exam(tmp_path), tutor=design, configurations=["condition-1"]))


def test_manifests_and_records_from_before_the_option_still_load(tmp_path: Path) -> None:
    _execute(tmp_path / "run", _manifest(_exam(tmp_path), "per-question"), _model())
    raw = json.loads((tmp_path / "run" / "manifest.json").read_text())
    for key in ("exam_mode", "system_role_name"):
        del raw[key]
    old = Manifest.model_validate(raw)
    assert old.exam_mode == "per-question" and old.system_role_name is None
    rec = json.loads((tmp_path / "run" / "records.jsonl").read_text().splitlines()[0])
    for key in ("conversation", "turn"):
        del rec[key]
    loaded = RunRecord.model_validate(rec)
    assert loaded.conversation is None and loaded.turn is None
