"""The layer contract that `make lint` checks with import-linter.

One test holds the contract against the package (every sub-package has a layer); another runs
import-linter on a copy of the package with one deliberately upward import and expects it to fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "mathlens"
#: Sub-packages outside the layers: shared helpers for tests and benches.
UTILITIES = {"testing"}


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def _contract() -> dict[str, object]:
    """The contract of the package's top-level layers."""
    return next(c for c in _contracts() if c["type"] == "layers" and "containers" not in c)


def _layered_packages() -> set[str]:
    names = set()
    for layer in _contract()["layers"]:  # type: ignore[union-attr]
        for part in str(layer).replace(":", "|").split("|"):
            names.add(part.strip().removeprefix("mathlens."))
    return names


def test_every_subpackage_has_a_layer() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages - UTILITIES == _layered_packages()


def _lint(tmp_path: Path, bad_import: str | None, where: str = "items/_upward.py") -> subprocess.CompletedProcess[str]:
    """import-linter on a copy of the package, with `bad_import` written into the module `where`."""
    copy = tmp_path / "src" / "mathlens"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if bad_import:
        (copy / where).write_text(f"{bad_import}\n", encoding="utf-8")
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (it comes with the dev extra)")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    return subprocess.run([exe, "--config", str(tmp_path / "pyproject.toml"), "--no-cache"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


def test_contract_holds_and_catches_an_upward_import(tmp_path: Path) -> None:
    good = _lint(tmp_path / "good", None)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _lint(tmp_path / "bad", "from mathlens.report import registry  # noqa: F401")
    assert bad.returncode != 0
    assert "BROKEN" in bad.stdout and "mathlens.items._upward -> mathlens.report" in bad.stdout


def _production() -> set[str]:
    """Every top-level package and module of mathlens but the test stand-ins."""
    out = {f"mathlens.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    out |= {f"mathlens.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return out - {"mathlens.testing"}


def test_no_production_module_may_import_the_stand_ins() -> None:
    forbidden = next(c for c in _contracts() if c["type"] == "forbidden")
    assert forbidden["forbidden_modules"] == ["mathlens.testing"]
    assert set(forbidden["source_modules"]) == _production()  # type: ignore[arg-type]


def test_an_import_of_the_stand_ins_inside_a_function_breaks_the_contract(tmp_path: Path) -> None:
    code = "def serve() -> None:\n    from mathlens.testing.standin import StandinServer  # noqa: F401"
    bad = _lint(tmp_path, code, where="report/_standin.py")
    assert bad.returncode != 0
    assert "BROKEN" in bad.stdout and "mathlens.report._standin -> mathlens.testing" in bad.stdout


def _analyze_contract() -> dict[str, object]:
    return next(c for c in _contracts() if c.get("containers") == ["mathlens.analyze"])


def test_every_part_of_analyze_has_a_layer() -> None:
    analyze = PACKAGE / "analyze"
    parts = {p.name for p in analyze.iterdir() if (p / "__init__.py").is_file()}
    parts |= {p.stem for p in analyze.glob("*.py") if p.stem != "__init__"}
    layered = {part.strip() for layer in _analyze_contract()["layers"]  # type: ignore[union-attr]
               for part in str(layer).replace(":", "|").split("|")}
    assert parts == layered


@pytest.mark.parametrize("where, code, arrow", [
    # the loops the contract keeps broken, written back inside functions, where they used to hide
    ("analyze/verify/_upward.py", "def warm() -> None:\n    from mathlens.analyze.grading.symbolic import warm_up",
     "mathlens.analyze.verify._upward -> mathlens.analyze.grading.symbolic"),
    ("analyze/quality/_upward.py",
     "def read() -> None:\n    from mathlens.analyze.grading.equivalence import equivalent",
     "mathlens.analyze.quality._upward -> mathlens.analyze.grading.equivalence"),
])
def test_an_upward_import_inside_analyze_breaks_its_contract(tmp_path: Path, where: str, code: str,
                                                             arrow: str) -> None:
    bad = _lint(tmp_path, code + "  # noqa: F401", where=where)
    assert bad.returncode != 0
    assert "analyze layers BROKEN" in bad.stdout and arrow in bad.stdout
