"""The built-in study files of the papers, `mathlens run study:calculus`, `study:maple` and
`study:tutoring`, at small scale against the stand-in server (models under study, judge, and the
Ollama embedder of the calculus study's retrieval all served by it through `$OLLAMA_HOST`; the judge
answers each reply schema with a small instance of it). Each must write every results table of its
paper, with rows, by itself: no command after `mathlens run`. The figures mean nothing here; the
test is the whole plan."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.server, pytest.mark.slow]


@pytest.fixture(scope="module")
def server() -> Iterator[StandinServer]:
    with StandinServer(schema_replies=True) as srv:
        yield srv


def _run(server: StandinServer, home: Path, cwd: Path, *args: str,
         models: tuple[str, ...] = ("ollama/standin",)) -> None:
    env = {**os.environ, "MATHLENS_HOME": str(home), "MATHLENS_CACHE_DIR": str(home / "cache"),
           "OLLAMA_HOST": server.url}
    env.pop("MATHLENS_DATA", None)
    given = [a for m in models for a in ("--model", m)]
    out = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", *args, *given,
                          "--judge", "ollama/judge", "-q"], capture_output=True, text=True, env=env, cwd=cwd,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]


def _tables(run: Path) -> dict[str, int]:
    index = json.loads((run / "tables" / "index.json").read_text())
    for t in index["tables"]:
        for name in t["files"].values():
            assert (run / "tables" / name).stat().st_size > 0
    return {t["id"]: t["rows"] for t in index["tables"]}


def test_study_calculus_writes_tables_2_3_6_7_and_8(server: StandinServer, tmp_path: Path) -> None:
    run = tmp_path / "calculus"
    _run(server, tmp_path / "home", tmp_path, "study:calculus", "--limit", "1", "--runs", "1", "--out", str(run))
    got = _tables(run)
    for table in ("calculus-table2-question-metrics", "calculus-table3-exam-metrics", "calculus-table6-exam-scores",
                  "calculus-table7-configurations", "calculus-table8-interpretability"):
        assert got.get(table, 0) > 0, (table, got)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["exam_mode"] == "sequential" and manifest["configurations"] == ["baseline", "rag", "contextual"]
    assert len(manifest["items"]) == 9 and manifest["ablation"] is not None
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    retrieved = [r["retrieval"] for r in records if r.get("retrieval")]
    assert retrieved and all(r["embedder"] == "ollama/nomic-embed-text" for r in retrieved)
    assert {r["mode"] for r in retrieved} == {"embedding", "inline"}
    assert any(r["variant"]["kind"] != "original" for r in records)  # the ablations branch off


def test_study_maple_writes_the_level_and_subject_tables(server: StandinServer, tmp_path: Path) -> None:
    rows = [{"problem": f"What is {a} + {b}?", "solution": f"$a+b = \\boxed{{{a + b}}}$", "answer": str(a + b),
             "level": f"Level {1 + i % 3}", "type": "Algebra" if i % 2 else "Prealgebra", "unique_id": f"t/{i}.json"}
            for i, (a, b) in enumerate([(2, 3), (4, 9), (7, 8), (10, 11), (3, 30), (6, 6)])]
    (tmp_path / "math500_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "maple"
    _run(server, tmp_path / "home", tmp_path, "study:maple", "--sample", "6", "--out", str(run))
    got = _tables(run)
    assert all(got.get(t, 0) > 0 for t in ("maple-by-level", "maple-by-subject", "maple-overall")), got
    summary = json.loads((run / "analysis" / "maple.jsonl").read_text().splitlines()[0])["summary"]
    assert summary["label_procedure"] == "paper" and summary["reflection"] == "loop"


def test_study_tutoring_writes_tables_1_and_2_and_the_anova(server: StandinServer, tmp_path: Path) -> None:
    run = tmp_path / "tutoring"
    _run(server, tmp_path / "home", tmp_path, "study:tutoring", "--limit", "2", "--out", str(run),
         models=("ollama/tutor-a", "ollama/tutor-b"))
    got = _tables(run)
    for table in ("tutoring-table1-dimensions", "tutoring-table2-adaptivity", "tutoring-table2-profiles",
                  "tutoring-anova", "tutoring-anova-checks", "tutoring-posthoc", "tutoring-letters"):
        assert got.get(table, 0) > 0, (table, got)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["configurations"] == ["condition-1", "condition-2", "condition-3", "condition-4"]
    assert manifest["tutor"]["accepts_images"] == {"ollama/tutor-a": True, "ollama/tutor-b": True}
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" and r["variant"]["kind"] == "profile" for r in records)
    # the diagrams went to the vision models as images (not their written description)
    with_images = [r for r in records if any(m["images"] for m in r["messages"])]
    assert with_images and not any("(The diagram shows:" in m["content"] for r in with_images for m in r["messages"])
    stats = json.loads((run / "analysis" / "tutor_stats.jsonl").read_text().splitlines()[0])["summary"]
    (judge,) = stats["sources"]
    assert judge["source"] == "judge:ollama/judge" and judge["responses"] == len(records)
    assert set(judge["anova"]) == {"adaptivity", "correctness", "quality"}
