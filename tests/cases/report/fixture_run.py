"""Build small, real run directories for the report tests.

Runs go through the real CLI in-process (`mathlens run` with a scripted `mock/` model, then
`mathlens analyze`), so the flow, answers and sensitivity files have exactly the shape their
analyzers write. The judge-based analyses (rubric grades, MAPLE, tutoring scores) would need a judge
model; `add_judged_analyses` writes small documents of theirs from `judged.yaml`, keyed to the
records of the mock run (the report tests validate them with the owning pydantic models).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from mathlens.cli.main import app

HERE = Path(__file__).resolve().parent
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


def add_judged_analyses(run: Path) -> list[str]:
    """Write the documents of `judged.yaml` into `run/analysis/`; returns their names."""
    docs = yaml.safe_load((HERE / "judged.yaml").read_text(encoding="utf-8"))
    (run / "analysis").mkdir(exist_ok=True)
    for name, doc in docs.items():
        (run / "analysis" / f"{name}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return list(docs)


SOLUTION = """1. The function is f(x,y) = x^2 y.
2. f_x = 2xy and f_y = x^2.
3. At (-1, 4): f_x = 2(-1)(4) = -8 and f_y = (-1)^2 = 1.
4. So the gradient is <-8, 1>.
Final answer: <-8, 1>"""

WRONG = """1. f_x = 2xy and f_y = x^2.
2. At (-1, 4): f_x = 2(-1)(4) = -6.
Final answer: <-6, 1>"""
