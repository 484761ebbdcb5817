"""How every command ends on a wrong value, path or state (tests/cases/cli/exit_paths.yaml).

Each case runs `mathlens` in a process of its own, as a user would, and checks what the user sees
and what is left on disk: the exit status (2 unless the case says otherwise), exactly one line on
stderr matching the case's patterns (so no traceback and no usage box), the runs and the case's
folder holding the same files with the same contents as before, and no temporary file anywhere. A
case whose hint names a command (`then`) also runs that command in the state left behind: it must
appear in the message as written and succeed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.smallfs import small_fs

CASES_FILE = Path(__file__).resolve().parents[1] / "cases" / "cli" / "exit_paths.yaml"
TABLE: dict[str, list[dict[str, Any]]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
CASES = [(group, case) for group, cases in TABLE.items() for case in cases]
SRC = Path(__file__).resolve().parents[2] / "src"


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "COLUMNS": "200", "NO_COLOR": "1", "MATHLENS_CACHE_DIR": str(home / "cache"), "HOME": str(home)}
    env.pop("MATHLENS_DATA", None)
    return env


def mathlens(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], env=env, cwd=cwd, text=True,
                          capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A finished run of two questions (`mock/x`) and an imported run of one, made through the CLI."""
    root = tmp_path_factory.mktemp("exit-paths")
    env = _env(root)
    made = mathlens(["run", "calc3-exam1", "--model", "mock/x", "--limit", "2", "--out", str(root / "run"), "-q"],
                    env, root)
    assert made.returncode == 0, made.stderr
    (root / "log.jsonl").write_text('{"question": "What is 2 + 3?", "response": "5", "answer": "5", "model": "m"}\n',
                                    encoding="utf-8")
    made = mathlens(["import", str(root / "log.jsonl"), "--out", str(root / "imported"), "-q"], env, root)
    assert made.returncode == 0, made.stderr
    yield root, env


def _files(folder: Path) -> dict[str, str]:
    """Every file under `folder`, by relative path, with a digest of its contents ('' for a folder, and
    for a run's `.lock`, which holds the PID of the last process that took the lock and so changes
    with every command that takes it, even one that then refuses to write)."""
    if not folder.exists():
        return {}
    out = {}
    for p in sorted(folder.rglob("*")):
        digest = p.is_file() and p.name != ".lock"
        out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest() if digest else ""
    return out


def _fill(args: list[str], places: dict[str, Path]) -> list[str]:
    return [re.sub(r"\{(\w+)\}", lambda m: str(places[m.group(1)]), a) for a in args]


@pytest.mark.parametrize(("group", "case"), CASES, ids=[f"{g}: {c['name']}" for g, c in CASES])
def test_exit_path(group: str, case: dict[str, Any], base: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = base
    places = {"run": tmp_path / "run", "imported": tmp_path / "imported", "tmp": tmp_path / "case"}
    shutil.copytree(root / "run", places["run"])
    shutil.copytree(root / "imported", places["imported"])
    places["tmp"].mkdir()
    with _small_if_needed(case, tmp_path) as small:
        if small is not None:
            places["small"] = small
        watched = [places["run"], places["imported"], places["tmp"]] + ([small] if small is not None else [])
        before = {str(w): _files(w) for w in watched}
        res = mathlens(_fill(case["args"], places), env, tmp_path)
        lines = res.stderr.splitlines()
        assert res.returncode == case.get("code", 2), res.stderr
        assert len(lines) == 1, f"expected one line on stderr, got:\n{res.stderr}"
        for pattern in case["expect"]:
            assert re.search(pattern, lines[0]), f"{pattern!r} not in {lines[0]!r}"
        after = {str(w): _files(w) for w in watched}
        kept = set(case.get("keep", ()))
        after[str(places["tmp"])] = {k: v for k, v in after[str(places["tmp"])].items() if k not in kept}
        assert after == before, "files changed or were left behind"
        leftovers = [p for w in watched for p in w.rglob("*.tmp")]
        assert not leftovers, leftovers
        if "then" in case:
            then = _fill(case["then"], places)
            assert "mathlens " + " ".join(then) in lines[0], "the hint does not name the command tried next"
            res = mathlens(then, env, tmp_path)
            assert res.returncode == 0, res.stderr


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _small_if_needed(case: dict[str, Any], parent: Path) -> Any:
    if any("{small}" in a for a in case["args"]):
        return small_fs(parent, size_kb=16)
    return _Nothing()
