"""The commands docs/reproducing.md gives for each of the three studies, at small scale, against the
stand-in server (the model under study answers with its deterministic replies; the judge with small
instances of each reply schema, `schema_replies=True`). Each study must end with every results table
of its paper written by `mathlens report RUN --tables`, with rows. The figures themselves mean
nothing here (the stand-in's replies are not mathematics); the test is that every stage runs and
every table is produced from the documented commands."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.server, pytest.mark.slow]

CALCULUS_TABLES = {"calculus-table2-question-metrics", "calculus-table3-exam-metrics", "calculus-table6-exam-scores",
                   "calculus-table7-configurations", "calculus-table8-interpretability"}
MAPLE_TABLES = {"maple-by-level", "maple-by-subject", "maple-overall"}
TUTORING_TABLES = {"tutoring-table1-dimensions", "tutoring-table2-adaptivity", "tutoring-table2-profiles",
                   "tutoring-anova", "tutoring-anova-checks", "tutoring-posthoc", "tutoring-letters"}


@pytest.fixture(scope="module")
def server() -> Iterator[StandinServer]:
    with StandinServer(schema_replies=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mlhome-reproduce")


def _cli(home: Path, *args: str) -> str:
    env = {**os.environ, "MATHLENS_HOME": str(home), "MATHLENS_CACHE_DIR": str(home / "cache")}
    out = subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, f"mathlens {' '.join(args)}\n{out.stderr[-3000:]}"
    return out.stdout


def _tables(home: Path, run: Path, out: Path) -> dict[str, int]:
    """Export every table as LaTeX and CSV; table id -> rows. Each written file is non-empty."""
    index = json.loads(_cli(home, "report", str(run), "--tables", "latex,csv", "--out", str(out), "--json"))
    for t in index["tables"]:
        for name in t["files"].values():
            assert (out / name).stat().st_size > 0
    return {t["id"]: t["rows"] for t in index["tables"]}


def test_calculus_study_commands_write_tables_2_3_6_7_and_8(home: Path, server: StandinServer,
                                                             tmp_path: Path) -> None:
    model = ["--model", "openai/standin", "--base-url", server.url + "/v1"]
    study = ["--configuration", "baseline,rag,contextual", "-C", "kb=calculus-study", "-C", "topic_filter=question",
             "-C", "inline=true", "--system-role", "calculus-study"]
    exams = ["calc1-exam1", "calc3-exam2", "--limit", "2"]
    judge = ["--judge", "openai/judge", "-J", f"base_url={server.url}/v1"]
    main, ablation = tmp_path / "calculus", tmp_path / "ablation"
    _cli(home, "run", *exams, *model, *study, "--exam-mode", "sequential", "--runs", "2", "--out", str(main))
    _cli(home, "analyze", str(main), "-O", "flow.depth=chars")
    _cli(home, "grade", str(main), *judge)
    _cli(home, "run", *exams, *model, *study, "--ablate", "all", "--out", str(ablation))
    _cli(home, "analyze", str(ablation), "-O", "flow.depth=chars")
    got_main = _tables(home, main, tmp_path / "tables-main")
    got_ablation = _tables(home, ablation, tmp_path / "tables-ablation")
    for table in ("calculus-table3-exam-metrics", "calculus-table6-exam-scores", "calculus-table7-configurations"):
        assert got_main.get(table, 0) > 0, table
    for table in ("calculus-table2-question-metrics", "calculus-table3-exam-metrics",
                  "calculus-table8-interpretability"):
        assert got_ablation.get(table, 0) > 0, table
    assert set(got_main) | set(got_ablation) >= CALCULUS_TABLES
    # Table 8 in the study's layout: each exam with its B, R and C rows, robustness from the ablations.
    with (tmp_path / "tables-ablation" / "calculus-table8-interpretability.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    codes = {(r["Exam"], r["Configuration"]) for r in rows}
    exams_seen = {e for e, _ in codes}
    assert len(exams_seen) == 2 and codes == {(e, c) for e in exams_seen for c in "BRC"}
    assert all(r["Robustness"] not in ("", "–") for r in rows)


def test_maple_study_commands_write_the_level_and_subject_tables(home: Path, server: StandinServer,
                                                                 tmp_path: Path) -> None:
    data = tmp_path / "math.jsonl"
    rows = [{"problem": f"What is {a} + {b}?", "solution": f"$a+b = \\boxed{{{a + b}}}$", "answer": str(a + b),
             "level": f"Level {1 + i % 3}", "type": "Algebra" if i % 2 else "Prealgebra", "unique_id": f"t/{i}.json"}
            for i, (a, b) in enumerate([(2, 3), (4, 9), (7, 8), (10, 11), (3, 30), (6, 6)])]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "maple"
    _cli(home, "run", str(data), "--format", "math", "--model", "openai/standin", "--base-url", server.url + "/v1",
         "--out", str(run))
    _cli(home, "maple", str(run), "--judge", "openai/judge", "-J", f"base_url={server.url}/v1",
         "--label-procedure", "paper", "--resamples", "100")
    got = _tables(home, run, tmp_path / "tables")
    assert all(got.get(t, 0) > 0 for t in MAPLE_TABLES), got


def test_tutoring_study_commands_write_tables_1_and_2_and_the_anova(home: Path, server: StandinServer,
                                                                    tmp_path: Path) -> None:
    run = tmp_path / "tutor"
    url = f"base_url={server.url}/v1"
    _cli(home, "tutor", "run", "tutoring", "--profiles", "default", "--conditions", "1,2,3,4", "--model",
         "openai/tutor-a", "-M", url, "--model", "openai/tutor-b", "-M", url, "--limit", "2", "--out", str(run))
    _cli(home, "tutor", "score", str(run), "--judge", "openai/judge", "-J", url)
    _cli(home, "tutor", "stats", str(run))
    got = _tables(home, run, tmp_path / "tables")
    assert all(got.get(t, 0) > 0 for t in TUTORING_TABLES), got
