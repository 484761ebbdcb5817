"""docs/api.md runs as written: its ```bash and ```python blocks, in order, in a folder holding the
Inspect log the page imports (the python blocks share one namespace, as in a notebook)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "api.md"
LOG = ROOT / "tests" / "cases" / "importing" / "formats" / "inspect_match_audit.json"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.S | re.M)


def test_the_page_has_examples_of_every_function() -> None:
    code = "\n".join(body for _, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")))
    for name in ("check_answer", "verify_steps", "flow", "open_run", ".records()", ".analysis(", ".frame("):
        assert name in code, name


def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(LOG, tmp_path / "arith_audit.json")
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    namespace: dict[str, object] = {"__name__": "api_docs"}
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert [lang for lang, _ in blocks].count("python") >= 3
    for lang, body in blocks:
        if lang == "bash":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, done.stderr
        else:
            exec(compile(body, str(PAGE), "exec"), namespace)  # the page's own examples
    printed = capsys.readouterr().out
    assert "correct 1/2 0.5" in printed
    assert "['answers', 'source-agreement']" in printed
