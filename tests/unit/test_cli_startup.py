"""The CLI starts fast and its command table matches the command modules.

`mathlens --help` lists commands from the table in cli/main.py without importing any command
module; running one command imports only its own module.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import subprocess
import sys
from typing import Any

import pytest

import mathlens.cli as cli_pkg
from mathlens.cli.main import COMMANDS, collector_paused, load_module_commands

HEAVY = ("sympy", "sklearn", "torch", "chromadb", "statsmodels", "spacy", "matplotlib", "llama_cpp",
         "networkx", "pandas", "sentence_transformers", "math_verify")


def _heavy_loaded(argv: list[str]) -> list[str]:
    code = ("import sys, json\nfrom mathlens.cli.main import app\n"
            f"sys.argv = ['mathlens', *{argv!r}]\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_help_imports_no_heavy_module() -> None:
    assert _heavy_loaded(["--help"]) == []


def test_show_and_list_import_no_heavy_module(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert _heavy_loaded(["show", str(tmp_path)]) == []
    assert _heavy_loaded(["list", "models"]) == []


def test_table_matches_registered_commands() -> None:
    modules = [i.name for i in pkgutil.iter_modules(cli_pkg.__path__)
               if i.name not in ("main", "common") and not i.name.startswith("_")
               and hasattr(importlib.import_module(f"mathlens.cli.{i.name}"), "register")]
    registered = {name: module for module in modules for name in load_module_commands(module)}
    assert registered == {name: module for name, (module, _) in COMMANDS.items()}


def test_listed_description_is_the_command_s_own() -> None:
    """`mathlens --help` lists the table's line without loading the commands; it must say what the
    command itself says first (its help's first paragraph), so the listing cannot drift from the code,
    and fit the listing's column on an 80-column terminal (58 characters beside the longest name)."""
    loaded: dict[str, Any] = {}
    for name, (module, description) in COMMANDS.items():
        command = loaded.setdefault(module, load_module_commands(module))[name]
        first = " ".join((command.help or "").split("\n\n")[0].split())
        assert description == first, name
        assert len(description) <= 58, name


def test_help_fits_80_columns() -> None:
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "--help"], capture_output=True, text=True,
                          timeout=120, check=True, env={**os.environ, "COLUMNS": "80"})
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
    listed = [line.split()[1] for line in rows if len(line.split()) > 1]
    assert set(COMMANDS) <= set(listed)
    assert len(rows) == len(listed), "a description wrapped onto a second line"


def test_help_lists_every_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "--help"], capture_output=True, text=True,
                          timeout=120, check=True)
    for command in COMMANDS:
        assert command in proc.stdout


def _loaded_by_run(tmp_path, flags: list[str], modules: tuple[str, ...]) -> list[str]:  # type: ignore[no-untyped-def]
    """Which of `modules` a `mathlens run` of two questions against a stand-in server loaded."""
    from mathlens.testing.standin import StandinServer

    tmp_path.mkdir(exist_ok=True)
    items = tmp_path / "q.jsonl"
    items.write_text('{"id": "q1", "text": "What is 2 + 3?"}\n{"id": "q2", "text": "What is 4 + 4?"}\n')
    argv = ["run", str(items), "--model", "openai/standin", "--max-tokens", "16", "--out", str(tmp_path / "run"),
            *flags]
    code = ("import sys, json\nfrom mathlens.cli.main import app\n"
            f"sys.argv = ['mathlens', *{argv!r}]\n"
            "try:\n    app()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))")
    with StandinServer() as srv:
        env = {**os.environ, "OPENAI_BASE_URL": srv.url + "/v1", "OPENAI_API_KEY": "x",
               "MATHLENS_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "run" / "records.jsonl").stat().st_size > 0
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_a_plain_run_loads_no_statistics_package(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A run that is not a tutoring study never loads the tutoring analysis and its statistics (SciPy,
    pandas, statsmodels): they used to cost every `mathlens run` about 1.7 s of start-up."""
    assert _loaded_by_run(tmp_path, ["-q"], ("scipy", "pandas", "statsmodels", "sympy")) == []


def test_a_quiet_json_run_loads_no_console_library(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With nothing to draw (`-q`, the summary as JSON) a run never imports Rich (0.04 s of start-up);
    a plain run, which prints its summary tables, does."""
    assert _loaded_by_run(tmp_path / "a", ["-q", "--json"], ("rich",)) == []
    assert _loaded_by_run(tmp_path / "b", [], ("rich",)) == ["rich"]


def _loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


SUMMARY_MODULES = ("mathlens.cli.summary", "mathlens.analyze.grading.tables", "mathlens.analyze.readers.answers")


def test_run_loads_its_summary_only_once_requests_are_out() -> None:
    """`mathlens run` sends its first requests before it loads what its closing summary needs; the
    loader it schedules for the wait loads all of it (so the end of the run does not pay for it)."""
    assert _loaded_after("import mathlens.cli.run", SUMMARY_MODULES) == []
    assert _loaded_after("import mathlens.cli.run as r\nr._load_summary()", SUMMARY_MODULES) == sorted(SUMMARY_MODULES)


def test_summary_loader_waits_until_every_request_is_sent(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With at most 4 in flight, the request of the last task goes out when the record of the
    fifth-to-last comes in; the summary's modules load on the next record, and only once."""
    import mathlens.cli.run as run_cli

    loads: list[int] = []
    loader = run_cli._SummaryLoader(in_flight=4)
    monkeypatch.setattr(run_cli, "_load_summary", lambda: loads.append(loader.left))
    loader.on_start(total=12, done=2)  # 10 to send
    for _ in range(10):
        loader.on_record(None)  # type: ignore[arg-type]
    assert loads == [3]


def test_collector_paused_restores_the_collector() -> None:
    """Loading a command runs without the cyclic collector; it is back on afterwards, even when the
    load fails, and stays off when it was off before."""
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("load failed")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_run_keeps_what_it_made_out_of_collection_only_while_it_lasts(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`resume_run` (and `run_study`) freeze the objects made before the run, and a refused resume
    leaves nothing frozen behind for a caller in the same process (a notebook, a test)."""
    import mathlens.cli.run as run_cli
    from mathlens.errors import UserError
    from mathlens.flags import FlagValues

    seen: list[int] = []

    def refuse(_root: object) -> None:
        seen.append(gc.get_freeze_count())
        raise UserError("no run here")

    monkeypatch.setattr(run_cli, "check_resume_dir", refuse)
    before = gc.get_freeze_count()
    with pytest.raises(UserError):
        run_cli.resume_run(tmp_path / "nowhere", FlagValues(), run_cli.Options())
    assert seen and seen[0] > before
    assert gc.get_freeze_count() == before
