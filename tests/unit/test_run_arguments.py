"""Every bad `mathlens run` argument is one clear error (exit 2) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app

#: (extra arguments, words the message must hold). `{tmp}` is the test's folder.
CASES: list[tuple[list[str], list[str]]] = [
    (["-M", "timeout_s=abc"], ["timeout_s", "'abc'"]),
    (["-M", "timeout_s=0"], ["timeout_s"]),
    (["--concurrency", "-1"], ["--concurrency", "from 1 to 4096"]),
    (["--concurrency", "0"], ["--concurrency", "from 1 to 4096"]),
    (["--concurrency", "99999999999999999999"], ["--concurrency", "from 1 to 4096", "99999999999999999999"]),
    (["--concurrency", "lots"], ["--concurrency", "whole number", "or auto"]),
    (["--temperature", "nan"], ["--temperature", "finite"]),
    (["--temperature", "inf"], ["--temperature", "finite"]),
    (["--base-url", "notaurl", "--model", "openai/x"], ["--base-url", "http://"]),
    (["--base-url", "ftp://example.org/v1", "--model", "openai/x"], ["--base-url", "http://"]),
    (["--base-url", "http://127.0.0.1:99999/v1", "--model", "openai/x"], ["--base-url", "not a valid URL"]),
    (["-M", "base_url=ftp://x", "--model", "openai/x"], ["base_url", "http://"]),
    (["--system-role", "/nonexistent/role.txt"], ["--system-role", "no such file"]),
    (["--system-role", "{tmp}"], ["--system-role", "not a file"]),
    (["--timeout", "0"], ["--timeout", "greater than 0"]),
    (["--timeout", "nan"], ["--timeout", "finite number"]),
    (["--attempts", "0"], ["--attempts 0: out of range", "from 1 to 100"]),
    (["--max-tokens", "0"], ["--max-tokens 0: out of range", "from 1 to 1,000,000"]),
    (["-M", "api_key=sk-secret-value-123456", "--model", "openai/x"], ["api_key", "OPENAI_API_KEY"]),
    (["-M", "token=abc"], ["token", "never written"]),
    (["--retry-errors"], ["--retry-errors", "--resume"]),
]


@pytest.mark.parametrize(("extra", "words"), CASES, ids=[" ".join(c[0])[:40] for c in CASES])
def test_bad_argument(tmp_path: Path, extra: list[str], words: list[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "calc1-exam1", "--model", "mock/echo", "--out", str(out)]
    args += [a.replace("{tmp}", str(tmp_path)) for a in extra]
    res = CliRunner().invoke(app, args)
    text = " ".join(res.output.split())
    assert res.exit_code == 2, text
    assert isinstance(res.exception, SystemExit) and "Traceback" not in text
    for word in words:
        assert word in text, (word, text)
    assert not out.exists()
    assert "sk-secret-value" not in text


def test_out_naming_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--out", str(target)])
    assert res.exit_code == 2 and "not a directory" in res.output
    assert target.read_text() == "keep me"


def test_resume_of_a_missing_directory(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["run", "--resume", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such run directory" in res.output
    assert not (tmp_path / "nope").exists()


def test_good_arguments_still_run(tmp_path: Path) -> None:
    role = tmp_path / "role.txt"
    role.write_bytes(b"\xef\xbb\xbfYou are terse.")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--out", str(out), "--limit", "1",
                                   "--system-role", str(role), "--temperature", "0.5", "--timeout", "5",
                                   "--attempts", "1", "--concurrency", "1", "-q"])
    assert res.exit_code == 0, res.output
    assert '"system_role": "You are terse."' in (out / "manifest.json").read_text()
