"""Build small, real run directories for the report tests.

Runs go through the real CLI in-process (`mathlens run` with a scripted `mock/` model, then
`mathlens analyze`), so the flow, answers and sensitivity files have exactly the shape their
analyzers write. The judge-based analyses (rubric grades, MAPLE, tutoring scores) would need a judge
model; `add_judged_analyses` writes small documents of theirs from `judged.yaml`, keyed to the
records of the mock run (the report tests validate them with the owning pydantic models).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from mathlens.cli.main import app

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"
MODEL = "mock/report"


def cli(*args: str, cache: Path | None = None) -> dict[str, Any]:
    """Invoke a mathlens command in-process with `--json`; return its document (fails loudly).
    `cache` sets the response cache folder (module-scoped fixtures run before the per-test one)."""
    env = {"MATHLENS_CACHE_DIR": str(cache)} if cache is not None else None
    res = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False, env=env)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def make_run(out: Path, responses: list[str], *, limit: int = 2, ablate: bool = False,
             exam: str = "calc3-exam1", model: str = MODEL, analyze: bool = True) -> Path:
    """A finished run of `exam` answered by a scripted model (responses served in order, cycling)."""
    args = ["run", exam, "--model", model, "-M", "responses=" + json.dumps(responses), "--limit", str(limit),
            "--out", str(out), "--quiet"]
    if ablate:
        args.append("--ablate=all")
    cli(*args, cache=out.parent / f".cache-{out.name}")
    if analyze:
        cli("analyze", str(out))
    return out


#: judged.yaml's top-level keys -> the document spec that owns them ("module:ATTRIBUTE").
JUDGED_SPECS = {
    "grades": "mathlens.analyze.grading.grades:GRADES",
    "grade_tables": "mathlens.analyze.grading.tables:GRADE_TABLES",
    "agreement": "mathlens.analyze.grading.agreement_report:AGREEMENT",
    "maple": "mathlens.analyze.maple.results:MAPLE",
    "tutor_scores": "mathlens.analyze.adaptivity.judge:TUTOR_SCORES",
    "tutor_stats": "mathlens.analyze.adaptivity.tables:TUTOR_STATS",
}


def judged_spec(name: str) -> Any:
    """The `DocumentSpec` that owns judged.yaml's `name`."""
    module, _, attr = JUDGED_SPECS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def add_judged_analyses(run: Path) -> list[str]:
    """Write the documents of `judged.yaml` into `run/analysis/` through their owning specs (so
    they are validated by the owning models); returns their names.

    Each key of judged.yaml holds `summary` and `entries`; an entry's `record` may be given as a
    record key only, and is filled in from the run's record with that key."""
    from mathlens.runs.documents import RecordRef, records_digest
    from mathlens.runs.store import RunStore

    docs = yaml.safe_load((CASES / "judged.yaml").read_text(encoding="utf-8"))
    store = RunStore(run)
    refs = {r.key: RecordRef.of(r).model_dump() for r in store.records()}
    for name, doc in docs.items():
        spec = judged_spec(name)
        entries = []
        for raw in doc.get("entries") or []:
            if isinstance(raw.get("record"), str):
                raw = {**raw, "record": refs[raw["record"]]}
            entries.append(spec.entry.model_validate(raw))
        spec.write(run, run_id=store.manifest().run_id, records_sha256=records_digest(store.records_path),
                   entries=entries, summary=spec.summary.model_validate(doc.get("summary") or {}))
    return list(docs)


SOLUTION = """1. The function is f(x,y) = x^2 y.
2. f_x = 2xy and f_y = x^2.
3. At (-1, 4): f_x = 2(-1)(4) = -8 and f_y = (-1)^2 = 1.
4. So the gradient is <-8, 1>.
Final answer: <-8, 1>"""

WRONG = """1. f_x = 2xy and f_y = x^2.
2. At (-1, 4): f_x = 2(-1)(4) = -6.
Final answer: <-6, 1>"""
