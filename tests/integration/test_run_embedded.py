"""End to end: `mathlens run` on a built-in exam with the tests' embedded model (Qwen2.5-Coder 0.5B), then a
cached re-run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.items.loaders import load_items
from support.embedded import TEST_EMBEDDED_SPEC


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.embedded
def test_run_builtin_exam_with_embedded_model(tmp_path: Path, embedded_model_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "run"
    args = ["run", "calc3-exam1", "--model", TEST_EMBEDDED_SPEC, "--limit", "2", "--max-tokens", "40", "--json"]
    first = _run([*args, "--out", str(out)], env)
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["this_invocation"]["model_calls"] == 2 and doc["this_invocation"]["errors"] == 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    questions = load_items("calc3-exam1").questions[:2]
    assert [r["question_id"] for r in sorted(records, key=lambda r: r["key"])] == sorted(q.id for q in questions)
    for rec in records:
        assert rec["status"] == "ok" and rec["response"]
        assert rec["finish_reason"] in ("stop", "length")
        assert 0 < rec["usage"]["completion_tokens"] <= 40
        assert rec["messages"][0]["role"] == "system" and "LaTeX" in rec["messages"][0]["content"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["models"][0]["spec"] == TEST_EMBEDDED_SPEC
    assert manifest["models"][0]["identity"]["model"] == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert manifest["models"][0]["identity"]["chat_format"] == "gguf-template"
    assert manifest["finished_at"] and manifest["packages"].get("llama_cpp_python") == "0.3.36"
    # the same exam again, into a new directory: every response comes from the cache
    second = _run([*args, "--out", str(tmp_path / "again")], env)
    assert second.returncode == 0, second.stderr
    inv = json.loads(second.stdout)["this_invocation"]
    assert inv["model_calls"] == 0 and inv["cache_hits"] == 2
    again = {json.loads(x)["key"]: json.loads(x)["response"] for x in (tmp_path / "again" / "records.jsonl")
             .read_text().splitlines()}
    assert again == {r["key"]: r["response"] for r in records}


def test_dry_run_counts_without_calling(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    res = _run(["run", "calc3-exam1", "calc1-exam1", "--model", "mock/a", "--model", "mock/b", "--runs", "3",
                "--dry-run", "--json", "--out", str(tmp_path / "r")], env)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    n = len(load_items("calc3-exam1").questions) + len(load_items("calc1-exam1").questions)
    assert doc["requests"] == n * 3 * 2 and doc["estimated_prompt_tokens"] > 0
    assert not (tmp_path / "r").exists()
