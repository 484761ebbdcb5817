"""One rule for the judge of every command, and models that are closed when a command ends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.errors import UserError
from mathlens.models.model import closing_all
from mathlens.models.registry import get_model
from mathlens.runs.judge import resolve_judge
from mathlens.runs.records import ModelEntry
from support import grading_run as helpers

FULL = json.dumps({k: {"points": 1, "rationale": "fine"} for k in
                   ("method", "execution", "final_answer", "notation", "clarity")})


def test_flag_then_recorded_judge_then_a_clear_error(tmp_path: Path) -> None:
    manifest = helpers.make_run(tmp_path).manifest()
    assert resolve_judge(manifest, "ollama/x", {"num_ctx": 1}) == ModelEntry(spec="ollama/x", options={"num_ctx": 1})
    with pytest.raises(UserError, match=r"no judge model for run .*--judge MODEL.*mathlens run \.\.\. --judge"):
        resolve_judge(manifest, None)
    recorded = manifest.model_copy(update={"judge": ModelEntry(spec="ollama/j", options={"num_ctx": 2048})})
    entry = resolve_judge(recorded, None, {"timeout_s": 9})
    assert entry.spec == "ollama/j" and entry.options == {"num_ctx": 2048, "timeout_s": 9}


def test_grade_without_a_judge_says_how_to_name_one(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    res = CliRunner().invoke(app, ["grade", str(store.root)])
    assert res.exit_code == 2
    assert "no judge model" in res.output and "--judge" in res.output


def test_grade_uses_the_judge_recorded_in_the_run(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    manifest = store.manifest()
    store.write_manifest(manifest.model_copy(update={
        "judge": ModelEntry(spec="mock/recorded", options={"responses": [FULL]})}))
    res = CliRunner().invoke(app, ["grade", str(store.root), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["judge"] == "mock/recorded" and doc["counts"]["graded"] > 0


def test_closing_all_closes_each_model_once_even_on_failure() -> None:
    closed: list[str] = []
    a, b = get_model("mock/a"), get_model("mock/b")
    for name, m in (("a", a), ("b", b)):
        async def aclose(name: str = name) -> None:
            closed.append(name)
        m.provider.aclose = aclose  # type: ignore[method-assign]

    async def boom() -> Any:
        raise RuntimeError("work failed")

    with pytest.raises(RuntimeError):
        asyncio.run(closing_all(boom(), [a, b, a]))
    assert sorted(closed) == ["a", "b"]

    async def ctx() -> None:
        async with get_model("mock/c") as model:
            model.provider.aclose = lambda: _record(closed, "c")  # type: ignore[method-assign]

    asyncio.run(ctx())
    assert closed[-1] == "c"


async def _record(seen: list[str], name: str) -> None:
    seen.append(name)
