"""`mathlens import` of a real lm-evaluation-harness samples file, made here by running lm-eval.

lm-eval runs offline: a task defined in a YAML file of its own (`dataset_path: json` over a JSONL
file of GSM8K-style questions written here), the `local-chat-completions` model against the
stand-in server, `tokenized_requests=False` and `tokenizer_backend=None` (no tokenizer download),
`--log_samples --limit 3`. The stand-in answers one question with an inline `<think>` trace. The task
has two filters (strict and flexible answer extraction), so lm-eval logs each document twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install 'mathlens[interop]')")

from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.records import ItemSource
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

DOCS = [
    {"question": "Tom has 3 apples and buys 4 more. How many apples does he have now?", "answer": "3 + 4 = 7\n#### 7"},
    {"question": "A box holds 6 pens. How many pens are in 5 boxes?", "answer": "6 * 5 = 30\n#### 30"},
    {"question": "Sara had 20 dollars and spent 8. How many dollars are left?", "answer": "20 - 8 = 12\n#### 12"},
    {"question": "A train travels 60 km each hour. How far does it go in 2 hours?", "answer": "60 * 2 = 120\n#### 120"},
]
TASK_YAML = """task: mathlens_mini_gsm
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer.split('####')[-1].strip()}}}}"
generation_kwargs:
  until: ["Question:"]
  do_sample: false
  max_gen_toks: 64
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: '#### (-?[0-9.,]+)'
      - function: take_first
  - name: flexible-extract
    filter:
      - function: regex
        group_select: -1
        regex_pattern: "(-?[0-9]+)"
      - function: take_first
"""


def _reply(messages: list[dict[str, Any]]) -> str:
    last = str(messages[-1].get("content", ""))
    if "apples" in last:
        return "<think>3 and 4 more make 7.</think>He has 7 apples.\n#### 7"
    if "pens" in last:
        return "5 boxes of 6 pens is 30 pens.\n#### 30"
    return "I think 11.\n#### 11"


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("lmeval")
    data = tmp / "mini_gsm.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    tasks = tmp / "tasks"
    tasks.mkdir()
    (tasks / "mini_gsm.yaml").write_text(TASK_YAML.format(data=data), encoding="utf-8")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp / "hf"),
           "HF_HOME": str(tmp / "hf-home")}
    with StandinServer(reply=_reply) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "lm_eval", "--model", "local-chat-completions", "--model_args",
             f"model=standin-chat,base_url={srv.url}/v1/chat/completions,tokenized_requests=False,"
             "tokenizer_backend=None", "--tasks", "mathlens_mini_gsm", "--include_path", str(tasks),
             "--limit", "3", "--log_samples", "--output_path", str(tmp / "out"), "--apply_chat_template"],
            env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = sorted((tmp / "out").rglob("samples_mathlens_mini_gsm_*.jsonl"))
    assert len(found) == 1, list((tmp / "out").rglob("*"))
    return found[0]


def test_lm_eval_samples_import_matched_by_question_text(samples_file: Path, tmp_path: Path) -> None:
    items = tmp_path / "gsm.jsonl"
    items.write_text("".join(json.dumps({"id": f"g{i}", **d}) + "\n" for i, d in enumerate(DOCS)), encoding="utf-8")
    result = import_run(ImportRequest(source=samples_file, items=[ItemSource(source=str(items))],
                                      out=tmp_path / "run"))
    imp = result.imported
    assert imp.format == "lm-eval" and imp.task == "mathlens_mini_gsm"
    assert (imp.rows, imp.records, imp.matched_by_text, imp.unmatched) == (3, 3, 3, 0)  # --limit 3
    records = {r.question_id: r for r in RunStore(result.root).records()}
    assert set(records) == {"g0", "g1", "g2"}
    apples = records["g0"]
    assert apples.model == "standin-chat"  # from the results file lm-eval wrote beside the samples
    assert apples.reasoning == "3 and 4 more make 7." and apples.response == "He has 7 apples.\n#### 7"
    assert apples.messages[-1].content.startswith("Question: Tom has 3 apples")
    assert apples.config.max_tokens == 64 and apples.config.stop == ("Question:",)
    assert records["g1"].reasoning is None and records["g1"].response.endswith("#### 30")


def test_the_analysis_reads_the_imported_answers(samples_file: Path, tmp_path: Path) -> None:
    from mathlens.analyze.grading.analyzer import ANSWERS

    items = tmp_path / "gsm.jsonl"
    items.write_text("".join(json.dumps({"id": f"g{i}", **d}) + "\n" for i, d in enumerate(DOCS)), encoding="utf-8")
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    for args in (["import", str(samples_file), "--items", str(items), "--out", "run", "--model", "my-model"],
                 ["analyze", "run", "--only", "answers"]):
        done = subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
    verdicts = {e.record.question_id: e.status for e in ANSWERS.entries(tmp_path / "run")}
    assert verdicts == {"g0": "correct", "g1": "correct", "g2": "incorrect"}
    assert {r.model for r in RunStore(tmp_path / "run").records()} == {"my-model"}


def test_lm_eval_samples_import_without_items_with_each_filter_as_a_source_verdict(samples_file: Path,
                                                                                tmp_path: Path) -> None:
    lines = [json.loads(line) for line in samples_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sorted({line["filter"] for line in lines}) == ["flexible-extract", "strict-match"] and len(lines) == 6
    result = import_run(ImportRequest(source=samples_file, items=[], out=tmp_path / "run"))
    imp = result.imported
    assert (imp.items_from, imp.rows, imp.records, imp.scored) == ("source", 3, 3, 3)
    assert imp.settings.get("model_args", "").startswith("model=standin-chat")
    store = RunStore(result.root)
    questions = {q.text: q for q in store.exams()[0].questions}
    assert {q.answers[0] for q in questions.values()} == {"7", "30", "12"}  # `doc_to_target` after ####
    records = list(store.records())
    assert {r.model for r in records} == {"standin-chat"}
    for rec in records:
        scores = {s.scorer: s for s in rec.source_scores or []}
        assert set(scores) == {"exact_match (strict-match)", "exact_match (flexible-extract)"}
        logged = {line["filter"]: line for line in lines if str(line["doc_id"]) == rec.question_id}
        for name, line in logged.items():
            assert scores[f"exact_match ({name})"].correct == (line["exact_match"] == 1.0)
            assert scores[f"exact_match ({name})"].answer == line["filtered_resps"][0]
