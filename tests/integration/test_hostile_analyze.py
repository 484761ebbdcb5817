"""Hostile responses through `mathlens analyze` (every default analysis), one record each: each
finishes with exit 0 inside the bounds of tests/cases/limits/hostile_responses.yaml, writes its
entries, and leaves no temporary behind. bench/bench_hostile_analyze.py measures the same cases
against the goals, beside a normal response."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore

TABLE = yaml.safe_load((Path(__file__).resolve().parents[1] / "cases" / "limits" / "hostile_responses.yaml")
                       .read_text(encoding="utf-8"))
DRIVER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "analyze", sys.argv[1]],
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
print(json.dumps({"rc": proc.returncode, "seconds": time.perf_counter() - start, "stderr": proc.stderr[-500:],
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""
pytestmark = pytest.mark.slow


def _text(case: dict[str, Any]) -> str:
    return "".join(str(p["text"]) * int(p.get("times", 1)) for p in case["parts"])


async def _run_of(root: Path, text: str) -> Path:
    items = root / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "text": TABLE["question"], "answers": [TABLE["reference"]]}) + "\n")
    manifest = base_manifest(items=[ItemSource(source=str(items))], models=[ModelEntry(spec="mock/hostile")],
                             generate=GenerateConfig(max_tokens=10**7), system_role="Solve the problem.")
    store = RunStore(root / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), None)
    models["mock/hostile"].provider.func = lambda _messages: text  # type: ignore[attr-defined]
    result = await execute(store, manifest, models)
    assert result.written == 1 and result.errors == 0
    return store.root


def test_the_table_has_the_reported_rows() -> None:
    reported = {c["id"] for c in TABLE["cases"] if c.get("issue") == 32}
    assert reported == {"unclosed-boxed", "zero-width-rtl", "parentheses-20k", "frac-3000", "million-digit-integer",
                        "power-tower"}
    assert len(TABLE["cases"]) > len(reported)  # and our own


@pytest.mark.parametrize("case", [TABLE["normal"], *TABLE["cases"]], ids=lambda c: c["id"])
async def test_analyze_of_a_hostile_response_is_bounded(case: dict[str, Any], tmp_path: Path) -> None:
    text = _text(case)
    run = await _run_of(tmp_path, text)
    out = subprocess.run([sys.executable, "-c", DRIVER, str(run)], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rc"] == 0, got["stderr"]
    assert got["seconds"] < TABLE["bound_s"], got
    assert got["peak_mb"] < TABLE["bound_mb"], got
    (flow,) = list(FLOW.entries(run))
    (answer,) = list(ANSWERS.entries(run))
    assert flow.record.question_id == answer.record.question_id == "q1"
    assert answer.status in ("correct", "incorrect", "unparseable", "unverifiable")
    if case["id"] == "normal":
        assert answer.status == "correct"
    assert not [p.name for p in (run / "analysis").iterdir() if p.name.endswith(".tmp")]
