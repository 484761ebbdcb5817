"""mathlens's scorers inside the real tools: `mathlens.integrations.inspect` in an Inspect task and
`mathlens.integrations.lm_eval` as a `!function` metric of an lm-eval task, both run here against
the stand-in server.

The Inspect task also carries Inspect's own `match` scorer; its log is then imported, and the scorer
audit must find mathlens's scorer in full agreement with mathlens's answer check, and `match`
wrong exactly where it is wrong (see test_import_inspect.py for the questions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

QUESTIONS = [  # (id, question, target, the stand-in's answer, right?)
    ("add", "What is 7 + 5?", "12", "7 + 5 = 12.0", True),
    ("half", "What is 1 divided by 2?", "0.5", "Dividing 1 by 2 gives 1/2. The answer is 1/2.", True),
    ("sub", "What is 10 - 3?", "7", "10 - 3 = 7", True),
    ("square", "What is 5 squared?", "25", "5 squared is 5 * 5 = 25. The answer is 25.", True),
    ("minus", "What is 9 - 4?", "5", "9 - 4 = 15", False),
    ("div", "What is 20 / 4?", "5", "20 / 4 = 4", False),
]
#: answers with a false step: what the left side of its claim really is
FALSE_STEPS = {"minus": "5", "div": "5"}
#: the server's token cap (in words): every reply above is shorter, this one is cut mid-work
CAP = 24
CUT = ("sum", "What is 3 + 4 + 8 + 7?", "22",
       "We add the numbers from left to right. First 3 + 4 = 7, so the running total is 7. "
       "Then 7 + 8 = 15, so the running total is now 15. Last, 15 + 7 = 22, so the sum is 22.")


def _reply(messages: list[dict[str, Any]]) -> str:
    last = str(messages[-1].get("content", ""))
    return next((a for _, q, _, a, _ in QUESTIONS if q in last), CUT[3] if CUT[1] in last else "I do not know.")


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install 'mathlens[interop]')")
    pytest.importorskip("openai", reason="Inspect's OpenAI-compatible provider needs the openai package")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    from mathlens.integrations.inspect import answer, steps

    tmp = tmp_path_factory.mktemp("inspect-scorers")
    env = {"STANDIN_API_KEY": "not-needed"}
    with StandinServer(reply=_reply, token_cap=True) as srv, pytest.MonkeyPatch.context() as mp:
        for k, v in {**env, "STANDIN_BASE_URL": srv.url + "/v1"}.items():
            mp.setenv(k, v)
        dataset = MemoryDataset([Sample(id=i, input=q, target=t) for i, q, t, _, _ in QUESTIONS]
                                + [Sample(id=CUT[0], input=CUT[1], target=CUT[2])])
        # a model name of its own: Inspect keeps one client per model name for the whole process
        logs = eval(Task(dataset=dataset, solver=generate(), scorer=[answer(), steps(), match()]),
                    model="openai-api/standin/scorers", display="none", log_dir=str(tmp), max_retries=1,
                    log_format="json", max_tokens=CAP)
    assert logs[0].status == "success", logs[0].error
    return Path(logs[0].location)


def test_the_inspect_scorers_run_in_a_real_task(inspect_log: Path) -> None:
    log = json.loads(inspect_log.read_text(encoding="utf-8"))
    scores = {s["id"]: s["scores"] for s in log["samples"]}
    for sid, _, _, _, right in QUESTIONS:
        ans = scores[sid]["mathlens_answer"]
        assert ans["value"] == ("C" if right else "I"), (sid, ans)
        assert ans["metadata"]["status"] == ("correct" if right else "incorrect")
        step = scores[sid]["mathlens_steps"]
        if sid in FALSE_STEPS:
            assert step["value"] == "I" and step["metadata"]["first_invalid_step"] == 0
            (first,) = step["metadata"]["steps"][0]["claims"]
            assert first["status"] == "invalid" and first["expected"] == FALSE_STEPS[sid]
        else:
            assert step["value"] in ("C", "N") and step["metadata"]["invalid_steps"] == 0
    assert scores["add"]["mathlens_answer"]["answer"] == "12.0"
    span = scores["add"]["mathlens_answer"]["metadata"]["span"]
    assert "7 + 5 = 12.0"[span["start"]:span["end"]] == "12.0"
    # cut by the cap after "so the running total is now 15": no answer was stated, and 15 is not read as one
    cut = scores[CUT[0]]["mathlens_answer"]
    assert (cut["value"], cut["metadata"]["status"], cut.get("answer")) == ("N", "no_answer", None), cut
    assert "token cap" in cut["explanation"]
    metrics = {s["name"]: s["metrics"]["accuracy"]["value"] for s in log["results"]["scores"]}
    assert metrics["mathlens_answer"] == pytest.approx(4 / 7)


def test_the_log_imported_audits_both_scorers(inspect_log: Path, tmp_path: Path) -> None:
    from mathlens.analyze.registry import run_analyzers
    from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT
    from mathlens.runs.importing.importer import ImportRequest, import_run
    from mathlens.runs.store import RunStore

    root = import_run(ImportRequest(source=inspect_log, items=[], out=tmp_path / "run")).root
    run_analyzers(RunStore(root), ["answers", "source-agreement"])
    doc = SOURCE_AGREEMENT.read(root)
    assert doc is not None
    rows = {r.scorer: r for r in doc.summary.rows}
    # the cut sample is no answer to both (Inspect's N is a wrong answer; the import keeps the finish reason)
    assert rows["mathlens_answer"].agreement.estimate == 1.0 and rows["mathlens_answer"].compared == 7
    wrong = {e.record.question_id for e in SOURCE_AGREEMENT.entries(root) if e.scorer == "match" and e.agree is False}
    assert wrong == {"add", "half", "minus"}


TASK_YAML = """task: mathlens_metric_gsm
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["Question:"]
  do_sample: false
  max_gen_toks: 64
metric_list:
  - metric: !function mathlens_metrics.mathlens_answer
    aggregation: mean
    higher_is_better: true
  - metric: !function mathlens_metrics.mathlens_steps
    aggregation: mean
    higher_is_better: true
"""
DOCS = [  # the target is GSM8K's worked solution: the metric reads it down to the number after ####
    {"question": "Tom has 3 apples and buys 4 more. How many apples does he have now?", "answer": "3 + 4 = 7\n#### 7"},
    {"question": "A box holds 6 pens. How many pens are in 5 boxes?", "answer": "6 * 5 = 30\n#### 30"},
    {"question": "A train travels 60 km each hour. How far does it go in 2 hours?", "answer": "60 * 2 = 120\n#### 120"},
]
LM_REPLIES = {"apples": "3 + 4 = 7, so he has 7 apples.", "pens": "6 * 5 = 35 pens, so the answer is 30.",
              "train": "60 * 2 = 120, so it goes 110 km."}
#: (answer right?, every step true?) per document, worked out by hand
LM_EXPECTED = [(1.0, 1.0), (1.0, 0.0), (0.0, 1.0)]


def test_the_lm_eval_metric_runs_in_a_real_task(tmp_path: Path) -> None:
    pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install 'mathlens[interop]')")
    data = tmp_path / "gsm.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "metric_gsm.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")
    (tasks / "mathlens_metrics.py").write_text(
        "from mathlens.integrations.lm_eval import mathlens_answer, mathlens_steps  # noqa: F401\n", encoding="utf-8")

    def reply(messages: list[dict[str, Any]]) -> str:
        last = str(messages[-1].get("content", ""))
        return next((r for k, r in LM_REPLIES.items() if k in last), "I do not know.")

    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf"),
           "HF_HOME": str(tmp_path / "hf-home"), "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    with StandinServer(reply=reply) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "lm_eval", "--model", "local-chat-completions", "--model_args",
             f"model=standin-chat,base_url={srv.url}/v1/chat/completions,tokenized_requests=False,"
             "tokenizer_backend=None", "--tasks", "mathlens_metric_gsm", "--include_path", str(tasks),
             "--log_samples", "--output_path", str(tmp_path / "out"), "--apply_chat_template"],
            env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = list((tmp_path / "out").rglob("results_*.json"))
    task = json.loads(results.read_text(encoding="utf-8"))["results"]["mathlens_metric_gsm"]
    assert task["mathlens_answer,none"] == pytest.approx(2 / 3)
    assert task["mathlens_steps,none"] == pytest.approx(2 / 3)
    (samples,) = list((tmp_path / "out").rglob("samples_mathlens_metric_gsm_*.jsonl"))
    got = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        got[s["doc_id"]] = (s["mathlens_answer"], s["mathlens_steps"])
    assert [got[i] for i in range(3)] == LM_EXPECTED
