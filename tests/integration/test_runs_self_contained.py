"""A run keeps its own copy of its questions: moving or deleting the item file changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mathlens.analyze.grading.analyzer import ANSWERS

QUESTIONS = [
    {"id": "d1", "text": "Find the derivative of x^3.", "answers": ["3x^2"]},
    {"id": "d2", "text": "Evaluate 2 + 3.", "answers": ["5"]},
]
REPLIES = ["1. The power rule gives d/dx x^3 = 3x^2.\nFinal answer: 3x^2",
           "1. 2 + 3 = 6\nFinal answer: 6"]


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_analyze_and_report_after_the_item_file_is_deleted(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    made_in = tmp_path / "made"
    made_in.mkdir()
    (made_in / "data.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    run = _cli(["run", "data.jsonl", "--model", "mock/fixed", "-M", "responses=" + json.dumps(REPLIES),
                "--out", "run"], made_in, env)
    assert run.returncode == 0, run.stderr
    run_dir = made_in / "run"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    # the manifest names the file where it was found (a run's item paths are made absolute) and its digest
    assert Path(manifest["items"][0]["source"]) == (made_in / "data.jsonl").resolve()
    assert len(manifest["items"][0]["sha256"]) == 64
    snapshot = json.loads((run_dir / "items.json").read_text())
    assert [q["id"] for q in snapshot["exams"][0]["questions"]] == ["d1", "d2"]

    (made_in / "data.jsonl").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    analyzed = _cli(["analyze", str(run_dir), "--json"], elsewhere, env)
    assert analyzed.returncode == 0, analyzed.stderr
    verdicts = {e.record.question_id: e.status for e in ANSWERS.entries(run_dir)}
    assert verdicts == {"d1": "correct", "d2": "incorrect"}  # the references came from the run's own copy
    reported = _cli(["report", str(run_dir)], elsewhere, env)
    assert reported.returncode == 0, reported.stderr
    html = (run_dir / "report.html").read_text()
    assert "Find the derivative of x^3." in html and "could not be loaded" not in html
    resumed = _cli(["run", "--resume", str(run_dir), "--json"], elsewhere, env)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["this_invocation"]["skipped"] == 2


def test_an_old_run_without_a_copy_names_the_missing_file(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    run = _cli(["run", str(data), "--model", "mock/fixed", "-M", "responses=" + json.dumps(REPLIES),
                "--out", str(tmp_path / "run")], tmp_path, env)
    assert run.returncode == 0, run.stderr
    (tmp_path / "run" / "items.json").unlink()  # as a run made before runs kept their items
    data.unlink()
    proc = _cli(["run", "--resume", str(tmp_path / "run")], tmp_path, env)
    assert proc.returncode == 2
    assert "keeps no copy of its items" in proc.stderr and "data.jsonl" in proc.stderr
    assert "Traceback" not in proc.stderr
