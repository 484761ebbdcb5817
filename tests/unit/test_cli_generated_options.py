"""Options generated from the models they fill: `tutor score`, `kb build` (and `kb query`'s
embedder) and `import` take their flags from `ScoreOptions`, `BuildSettings`, `EmbedderChoice` and
`ImportOptions`, so a field is declared once; `-q` is the same switch on every command that shows progress."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.core import TyperOption
from typer.testing import CliRunner

from mathlens.analyze.adaptivity.analyzer import ScoreOptions
from mathlens.cli.main import app, load_module_commands
from mathlens.flags import flag_fields
from mathlens.runs.importing.options import ImportOptions
from mathlens.runs.store import RunStore
from mathlens.solve.retrieval.build import BuildSettings, EmbedderChoice

runner = CliRunner()
CORPUS = Path(__file__).parents[1] / "cases" / "retrieval" / "corpus"


def _command(path: str) -> Any:
    group, _, sub = path.partition(" ")
    cmd = load_module_commands({"tutor": "tutor", "kb": "kb", "import": "importing"}.get(group, group))[group]
    return cmd.commands[sub] if sub else cmd


def _names(cmd: Any) -> set[str]:
    return {o for p in cmd.params if isinstance(p, TyperOption) for o in (*p.opts, *p.secondary_opts)}


#: the options each command declares itself (what its model cannot hold)
OWN = {
    "tutor score": ({"--judge", "-j", "-J", "--no-cache", "--quiet", "-q", "--json"}, ScoreOptions),
    "kb build": ({"--name", "--quiet", "-q", "--json"}, BuildSettings),
    "kb query": ({"--mode", "--contextual", "--top-k", "-k", "--json"}, EmbedderChoice),
    "import": ({"--out", "--quiet", "-q", "--json"}, ImportOptions),
}


@pytest.mark.parametrize("path", sorted(OWN))
def test_every_other_option_is_a_model_field(path: str) -> None:
    own, model = OWN[path]
    flagged = {n for ff in flag_fields(model) for name in ff.flag.names for n in name.split("/")}
    assert flagged, f"{model.__name__} declares no flags"
    assert _names(_command(path)) == own | flagged


@pytest.mark.parametrize("path", ["run", "grade", "maple", "analyze", "import", "tutor score", "kb build", "report"])
def test_commands_that_show_progress_take_quiet(path: str) -> None:
    opts = [getattr(p, "opts", []) for p in _command(path).params]
    assert ["--quiet", "-q"] in opts or ["-q", "--quiet"] in opts, f"mathlens {path}: {opts}"


def _invoke(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, list(args))
    return res.exit_code, res.output


def test_tutor_score_flags_reach_the_analyzer_and_quiet_prints_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = _invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "2", "--limit", "1",
                        "--out", str(run), "--no-cache", "--json")
    assert code == 0, out
    yes = json.dumps({"rationale": "fine", "rating": "yes"})
    code, out = _invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(yes)}]",
                        "--items", "Q1,Q13", "--limit", "2", "--no-cache", "-q")
    assert code == 0 and out == ""
    doc = json.loads((run / "analysis" / "tutor_scores.jsonl").read_text().splitlines()[0])
    assert doc["options"]["items"] == ["Q1", "Q13"] and doc["options"]["limit"] == 2
    assert doc["summary"]["responses"] == 2
    code, out = _invoke("tutor", "score", str(run), "--judge", "mock/j", "--max-tokens", "8", "-q")
    assert code == 2 and "--max-tokens 8: out of range (allowed: from 16 to 1,000,000)" in out


@pytest.mark.parametrize(("args", "expected"), [
    (["--chunk-size", "10"], "--chunk-size: chunk size must be at least 50 characters, not 10"),
    (["--chunk-size", "300", "--overlap", "300"], "--overlap: overlap must be between 0 and the chunk size - 1"),
    (["--topics", "derivatives,integralz"], "--topics: unknown topic 'integralz'. Did you mean 'integrals'"),
    ([], "give source files or folders, or --builtin"),
])
def test_kb_build_bad_flags_are_named(args: list[str], expected: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_HOME", str(tmp_path))
    sources = [str(CORPUS)] if args else []
    code, out = _invoke("kb", "build", "--name", "notes", *sources, *args)
    assert code == 2 and expected in " ".join(out.split()), out
    assert not (tmp_path / "kb" / "notes").exists()


@pytest.mark.slow
def test_kb_build_flags_reach_the_build_and_quiet_prints_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "MATHLENS_HOME": str(tmp_path), "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "mathlens.cli.main", "kb", "build", "--name", "notes", str(CORPUS),
           "--chunk-size", "300", "--overlap", "60", "--topics", "series"]
    quiet = subprocess.run([*cmd, "-q"], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == "", quiet.stderr
    built = json.loads((tmp_path / "kb" / "notes" / "kb.json").read_text())
    assert (built["chunk_size"], built["overlap"], built["topics"]) == (300, 60, ["series"])
    again = subprocess.run([*cmd, "--overwrite", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["topics"] == ["series"]


@pytest.mark.parametrize(("args", "expected"), [
    (["-F", "question"], "-F takes KEY=VALUE (not 'question')"),
    (["-F", "question=a", "-F", "question=b"], "-F gives 'question' two values ('a' and 'b')"),
    (["--match", "title"], "'title' is not one of"),
    (["--items-field", "id=1", "--items-field", "id=2"], "--items-field gives 'id' two values ('1' and '2')"),
])
def test_import_bad_flags_are_named(args: list[str], expected: str, tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text('{"question": "1+1?", "response": "2"}\n', encoding="utf-8")
    code, out = _invoke("import", str(source), "--out", str(tmp_path / "run"), *args)
    assert code == 2 and expected in " ".join(out.split()), out
    assert not (tmp_path / "run").exists()


def test_import_mapping_values_stay_names_and_quiet_prints_only_warnings(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    rows = [{"q": "What is 1+1?", "7": "2", "n": 1}, {"q": "What is 2+2?", "7": "4", "n": 2}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # `-F response=7` names the key "7": a name, not the JSON number 7
    # the same pair twice (one per model, as people write -M) says one thing: accepted
    code, out = _invoke("import", str(source), "--out", str(tmp_path / "run"), "-F", "question=q", "-F",
                        "response=7", "-F", "id=n", "-F", "id=n", "--model", "m/x", "-q")
    assert code == 0 and out == "", out
    manifest = RunStore(tmp_path / "run").manifest()
    assert manifest.imported is not None and manifest.imported.mapping == {"question": "q", "response": "7", "id": "n"}
    assert [r.response for r in RunStore(tmp_path / "run").records()] == ["2", "4"]
