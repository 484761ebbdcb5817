"""Runs for the comparison tests: a scripted model's run through `mathlens run` (`mock_run`), and
one run with several configurations or ablation variants written through `RunStore` (`store_run`),
with grades and MAPLE scores added through their specs (`add_grades_and_maple`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from mathlens.analyze.grading.grades import GRADES
from mathlens.analyze.judging.entries import Judgement
from mathlens.analyze.maple.results import MAPLE, SolutionMaple
from mathlens.cli.main import app
from mathlens.models.base import GenerateConfig, Message
from mathlens.runs.documents import RecordRef, records_digest
from mathlens.runs.records import ItemSource, Manifest, ModelEntry, RunRecord, Variant
from mathlens.runs.store import RunStore
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE

JUDGED = Path(__file__).resolve().parents[1] / "cases" / "report" / "judged.yaml"


def cli(*args: str, env: dict[str, str] | None = None, code: int = 0) -> Any:
    res = CliRunner().invoke(app, list(args), catch_exceptions=False, env=env)
    assert res.exit_code == code, res.output
    return res


def cli_json(*args: str, cache: Path) -> dict[str, Any]:
    res = cli(*args, "--json", env={"MATHLENS_CACHE_DIR": str(cache)})
    return json.loads(res.stdout)


def write_exam(path: Path, ids: list[int]) -> Path:
    """Questions `q<k>`: 'Compute k + 1.' with answer k + 1."""
    exam = {"id": "arith", "name": "Arithmetic",
            "questions": [{"id": f"q{k}", "text": f"Compute {k} + 1.", "points": 10, "answers": [str(k + 1)]}
                          for k in ids]}
    path.write_text(yaml.safe_dump(exam), encoding="utf-8")
    return path


def answer(k: int, right: bool) -> str:
    value = k + 1 if right else k + 2
    return f"We add one: {k} + 1 = {value}.\nFinal answer: {value}"


def mock_run(tmp: Path, name: str, ids: list[int], right: set[int], *, model: str = "mock/student",
             repeats: int = 1) -> Path:
    """`mathlens run` with a scripted model answering question k right when k is in `right`
    (one request at a time, so the scripted replies meet the questions in plan order: each
    question's repeats in turn)."""
    exam = write_exam(tmp / f"{name}.yaml", ids)
    replies = [answer(k, k in right) for k in ids for _ in range(repeats)]
    out = tmp / name
    cache = tmp / f".cache-{name}"
    cli_json("run", str(exam), "--model", model, "-M", "responses=" + json.dumps(replies), "--concurrency",
             "1", "--runs", str(repeats), "--out", str(out), "--quiet", cache=cache)
    cli_json("analyze", str(out), cache=cache)
    return out


def metric(comparison: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in comparison["metrics"] if m["metric"] == name)


# -- one run, several configurations or variants (records written through RunStore) ---------------

CONFIGS = ("baseline", "rag", "contextual")
#: configuration -> questions answered right
RIGHT = {"baseline": {1, 2, 3, 4}, "rag": {1, 2, 3, 4, 5, 6}, "contextual": {1, 5}}
IDS = [1, 2, 3, 4, 5, 6]
ABLATED = {2, 5}  # questions with an ablation variant `number-1` (answered right only for q5)


def store_run(root: Path, *, variants: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    exam = write_exam(root / "exam.yaml", IDS)
    store = RunStore(root / "run")
    now = datetime.now(UTC)
    configs = ("baseline",) if variants else CONFIGS
    store.write_manifest(Manifest(run_id="one", mathlens_version="test", created_at=now,
                                  items=[ItemSource(source=str(exam))], models=[ModelEntry(spec="mock/s")],
                                  configurations=list(configs), generate=GenerateConfig(),
                                  system_role=EXAM_SYSTEM_ROLE))
    for conf in configs:
        for k in IDS:
            tasks = [(Variant(), k in RIGHT[conf])]
            if variants and k in ABLATED:
                tasks.append((Variant(name="number-1", kind="ablation", element_type="number", element_text="1",
                                      question_text=f"Compute {k} +."), k == 5))
            for variant, right in tasks:
                store.append(RunRecord(
                    key=f"mock/s|{conf}|arith|q{k}|{variant.name}|r0", model="mock/s", configuration=conf,
                    exam_id="arith", question_id=f"q{k}", variant=variant, repeat=0,
                    messages=[Message(role="user", content=f"Compute {k} + 1.")], config=GenerateConfig(),
                    request_hash="h", content_hash="c", response=answer(k, right), finish_reason="stop",
                    created_at=now))
    store.close()
    return root / "run"


def add_grades_and_maple(run: Path, rubric_points: dict[str, dict[int, float]]) -> None:
    """Grades (points out of 10) and MAPLE scores per configuration and question, through the owning
    specs; summaries from the report fixtures."""
    judged = yaml.safe_load(JUDGED.read_text(encoding="utf-8"))
    store = RunStore(run)
    grades, maples = [], []
    for rec in store.records():
        ref = RecordRef.of(rec)
        k = int(rec.question_id[1:])
        pts = rubric_points[rec.configuration][k]
        grades.append(Judgement(record=ref, grader="judge:mock/judge", status="graded", total=pts, max_total=10))
        grades.append(Judgement(record=ref, grader="judge:mock/judge", judge_run=1, status="graded", total=pts - 1,
                                max_total=10))
        maples.append(SolutionMaple(record=ref, answer_status="incorrect", maple=pts / 20, status="ok"))
    digest = records_digest(store.records_path)
    GRADES.write(run, run_id="one", records_sha256=digest, entries=grades,
                 summary=GRADES.summary.model_validate(judged["grades"]["summary"]))
    MAPLE.write(run, run_id="one", records_sha256=digest, entries=maples,
                summary=MAPLE.summary.model_validate(judged["maple"]["summary"]))
