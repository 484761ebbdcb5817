"""`mathlens import` of a real Inspect AI log, made here by running Inspect against the stand-in server.

Inspect talks to the stand-in through its OpenAI-compatible provider (`openai-api/<service>/<model>`
with `<SERVICE>_BASE_URL`), so the log is exactly what Inspect writes. One question is answered
with an inline `<think>` trace (Inspect turns it into a reasoning content block), one request fails
with an HTTP 400 (an errored sample), and each question is run for two epochs. The same `.eval` log
is imported with Inspect's reader and with the built-in one, and both must give the same records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install 'mathlens[interop]')")
pytest.importorskip("openai", reason="Inspect's OpenAI-compatible provider needs the openai package")

from mathlens.analyze.grading.analyzer import ANSWERS
from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.records import ItemSource
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

QUESTIONS = [
    {"id": "add", "text": "What is 2 + 3?", "answers": ["5"]},
    {"id": "mul", "text": "What is 3 * 4?", "answers": ["12"]},
    {"id": "sub", "text": "What is 10 - 7? FAIL", "answers": ["3"]},
]
THINK = "2 plus 3: count up from 2 three times."

# -- questions from the log, the scorer audit, partial logs ------------------------------------------
AUDIT = [  # (id, question, target, the stand-in's answer); `match` (end of the answer, as text) is wrong on
    # add ("12.0" is 12), half ("1/2" is 0.5) and minus ("15" ends with "5" but is not 5)
    ("add", "What is 7 + 5?", "12", "7 + 5 = 12.0"),
    ("half", "What is 1 divided by 2?", "0.5", "Dividing 1 by 2 gives 1/2. The answer is 1/2."),
    ("sub", "What is 10 - 3?", "7", "10 - 3 = 7"),
    ("square", "What is 5 squared?", "25", "5 squared is 5 * 5 = 25. The answer is 25."),
    ("minus", "What is 9 - 4?", "5", "9 - 4 = 15"),
    ("div", "What is 20 / 4?", "5", "20 / 4 = 4"),
]
MATCH_WRONG = {"add", "half", "minus"}
#: the audit questions again, the `minus` one failing (an HTTP 400): with fail_on_error, Inspect stops there
PARTIAL = [(i, q + " FAIL" if i == "minus" else q, t, a) for i, q, t, a in AUDIT]


def _reply(messages: list[dict[str, Any]]) -> str:
    last = str(messages[-1].get("content", ""))
    audit = next((answer for _, question, _, answer in AUDIT if question == last), None)
    if audit is not None:
        return audit
    if "2 + 3" in last:
        return f"<think>{THINK}</think>Final answer: 5"
    if "3 * 4" in last:
        return "Step 1: 3 * 4 = 12.\nFinal answer: 12"
    return "Final answer: 3"


def _inspect_logs(tmp: Path) -> dict[str, Path]:
    """Run a two-epoch Inspect eval of QUESTIONS against the stand-in, once writing an `.eval` log and
    once a `.json` log; then the AUDIT questions (`audit`), and the PARTIAL ones with fail_on_error
    (`partial`). One server for all: Inspect keeps its model client between evals."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    logs_dir = tmp / "logs"
    out: dict[str, Path] = {}
    env = {"STANDIN_API_KEY": "not-needed", "INSPECT_LOG_DIR": str(logs_dir)}
    with StandinServer(reply=_reply, faults={"FAIL": ["400"] * 60}) as srv, pytest.MonkeyPatch.context() as mp:
        for k, v in {**env, "STANDIN_BASE_URL": srv.url + "/v1"}.items():
            mp.setenv(k, v)
        dataset = MemoryDataset([Sample(id=q["id"], input=q["text"], target=q["answers"][0]) for q in QUESTIONS])
        for fmt in ("eval", "json"):
            logs = eval(Task(dataset=dataset, solver=generate(), scorer=match(), epochs=2),
                        model="openai-api/standin/standin", display="none", log_format=fmt,
                        log_dir=str(logs_dir), fail_on_error=False, max_retries=1, retry_on_error=0)
            assert logs[0].location, "Inspect wrote no log"
            out[fmt] = Path(logs[0].location)
        for name, rows, stop in (("audit", AUDIT, False), ("partial", PARTIAL, True)):
            audit = MemoryDataset([Sample(id=i, input=q, target=t, metadata={"level": "Level 1"})
                                   for i, q, t, _ in rows])
            logs = eval(Task(dataset=audit, solver=generate(), scorer=match()), model="openai-api/standin/standin",
                        display="none", log_dir=str(logs_dir), fail_on_error=stop, max_retries=1,
                        retry_on_error=0, max_samples=1)
            assert logs[0].location, "Inspect wrote no log"
            out[name] = Path(logs[0].location)
    return out


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _inspect_logs(tmp_path_factory.mktemp("inspect"))


@pytest.fixture
def eval_log(inspect_logs: dict[str, Path]) -> Path:
    return inspect_logs["eval"]


@pytest.fixture
def items(tmp_path: Path) -> list[ItemSource]:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return [ItemSource(source=str(path))]


def _records(root: Path) -> dict[str, Any]:
    return {r.key: r for r in RunStore(root).records()}


def test_both_readers_import_the_same_records(eval_log: Path, items: list[ItemSource], tmp_path: Path) -> None:
    ours = import_run(ImportRequest(source=eval_log, items=items, out=tmp_path / "ours", reader="mathlens"))
    theirs = import_run(ImportRequest(source=eval_log, items=items, out=tmp_path / "theirs", reader="inspect_ai"))
    assert (ours.imported.reader, theirs.imported.reader) == ("mathlens", "inspect_ai")
    a, b = _records(ours.root), _records(theirs.root)
    assert len(a) == 6  # three questions, two epochs
    assert a.keys() == b.keys()
    strip = {"created_at"}
    for key in a:
        assert a[key].model_dump(exclude=strip) == b[key].model_dump(exclude=strip), key

    model = "openai-api/standin/standin"
    add = a[f"{model}|baseline|items|add|original|r1"]
    assert add.reasoning == THINK and add.response == "Final answer: 5" and add.status == "ok"
    assert [m.content for m in add.messages if m.role == "user"] == ["What is 2 + 3?"]
    sub = a[f"{model}|baseline|items|sub|original|r0"]
    assert sub.status == "error" and sub.error and "400" in sub.error and sub.response is None
    assert ours.imported.errors == 2 and ours.imported.matched_by_id == 6 and ours.imported.unmatched == 0
    manifest = RunStore(ours.root).manifest()
    assert manifest.imported is not None and manifest.imported.sha256 == theirs.imported.sha256
    assert manifest.runs == 2 and [m.spec for m in manifest.models] == [model]


def test_a_json_log_imports_like_an_eval_log(inspect_logs: dict[str, Path], items: list[ItemSource],
                                             tmp_path: Path) -> None:
    eval_log, json_log = inspect_logs["eval"], inspect_logs["json"]
    assert json_log.suffix == ".json"
    from_json = _records(import_run(ImportRequest(source=json_log, items=items, out=tmp_path / "j",
                                                  reader="mathlens")).root)
    from_eval = _records(import_run(ImportRequest(source=eval_log, items=items, out=tmp_path / "e",
                                                  reader="mathlens")).root)
    assert from_json.keys() == from_eval.keys()
    assert {k: (r.response, r.reasoning, r.status) for k, r in from_json.items()} == \
        {k: (r.response, r.reasoning, r.status) for k, r in from_eval.items()}


def test_a_log_cut_off_while_written_is_refused_and_nothing_is_written(eval_log: Path, items: list[ItemSource],
                                                                       tmp_path: Path) -> None:
    from mathlens.errors import UserError

    cut = tmp_path / "cut.eval"
    data = eval_log.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])  # no central directory: a log whose writer was killed
    for reader in ("mathlens", "inspect_ai"):
        with pytest.raises(UserError, match=r"cut\.eval"):
            import_run(ImportRequest(source=cut, items=items, out=tmp_path / f"run-{reader}", reader=reader))  # type: ignore[arg-type]
        assert not (tmp_path / f"run-{reader}").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run")]


def test_analyze_and_report_work_on_the_imported_run(eval_log: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)

    done = cli("import", str(eval_log), "--items", str(items), "--out", "run", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"]["records"] == 6
    analyzed = cli("analyze", "run", "--json")
    assert analyzed.returncode == 0, analyzed.stderr
    verdicts = {(e.record.question_id, e.record.repeat): e.status for e in ANSWERS.entries(tmp_path / "run")}
    assert verdicts[("add", 0)] == verdicts[("add", 1)] == "correct"
    assert verdicts[("mul", 0)] == "correct"
    assert ("sub", 0) not in verdicts or verdicts[("sub", 0)] != "correct"  # an error record has no answer
    reported = cli("report", "run")
    assert reported.returncode == 0, reported.stderr
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "What is 3 * 4?" in html
    shown = cli("show", "run")
    assert shown.returncode == 0 and "imported" in shown.stderr and eval_log.name in shown.stderr
    resumed = cli("run", "--resume", "run")
    assert resumed.returncode == 2 and "cannot be resumed" in resumed.stderr


def test_a_real_log_imports_without_items_and_the_audit_lists_where_match_is_wrong(
        inspect_logs: dict[str, Path], tmp_path: Path) -> None:
    log = inspect_logs["audit"]
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=600)

    done = cli("import", str(log), "--out", "run", "--json")  # no --items: the questions are the log's
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)["imported"]
    assert (imported["items_from"], imported["records"], imported["scored"]) == ("source", 6, 6)
    questions = {q.id: q for q in RunStore(tmp_path / "run").exams()[0].questions}
    assert {i: q.answers for i, q in questions.items()} == {i: [t] for i, _, t, _ in AUDIT}
    assert questions["add"].level == 1
    assert cli("analyze", "run").returncode == 0
    from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT

    entries = list(SOURCE_AGREEMENT.entries(tmp_path / "run"))
    assert {e.record.question_id for e in entries if e.agree is False} == MATCH_WRONG
    assert {e.scorer for e in entries} == {"match"}
    shown = cli("show", "run")
    assert sorted(line.split()[1].rsplit("/", 1)[1] for line in shown.stderr.splitlines()
                  if line.strip().startswith("disagree ")) == sorted(MATCH_WRONG)
    assert cli("report", "run").returncode == 0
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "Scorer audit" in html and "Where they disagree: 3 verdict(s)" in html


def test_a_real_log_stopped_by_an_error_is_imported_and_flagged_partial(inspect_logs: dict[str, Path],
                                                                         tmp_path: Path) -> None:
    log = inspect_logs["partial"]
    result = import_run(ImportRequest(source=log, items=[], out=tmp_path / "run"))
    imp = result.imported
    assert imp.partial == "error" and imp.planned == 6
    status = {r.question_id: r.status for r in RunStore(result.root).records()}
    assert status["minus"] == "error" and all(status[q] == "ok" for q in ("add", "half", "sub", "square"))
    shown = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "show", str(result.root)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert "partial: the evaluation ended with status 'error'" in shown.stderr
