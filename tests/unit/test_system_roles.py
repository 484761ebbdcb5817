"""Named system roles: `--system-role calculus-study` sends the study's role, `--system-role FILE`
still reads a file, and the manifest says which role a run used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.grading.compliance import FormatRules, rules_from_role
from mathlens.cli.main import app
from mathlens.cli.run_args import resolve_system_role
from mathlens.errors import UserError
from mathlens.solve.prompts import CALCULUS_STUDY_ROLE, EXAM_SYSTEM_ROLE, SYSTEM_ROLES, named_system_role


def _run(tmp_path: Path, *extra: str) -> tuple[dict, list[dict]]:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--limit", "2", "--out", str(out),
                                   "-q", *extra])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return manifest, records


def test_the_study_role_is_sent_and_recorded(tmp_path: Path) -> None:
    manifest, records = _run(tmp_path, "--system-role", "calculus-study")
    assert manifest["system_role_name"] == "calculus-study" and manifest["exam_mode"] == "per-question"
    assert manifest["system_role"] == CALCULUS_STUDY_ROLE
    assert len(records) == 2
    for rec in records:
        assert rec["messages"][0] == {"role": "system", "content": CALCULUS_STUDY_ROLE, "images": []}


def test_the_default_role_is_named_exam(tmp_path: Path) -> None:
    manifest, records = _run(tmp_path)
    assert manifest["system_role_name"] == "exam" and manifest["system_role"] == EXAM_SYSTEM_ROLE
    assert records[0]["messages"][0]["content"] == EXAM_SYSTEM_ROLE


def test_a_role_file_has_no_name(tmp_path: Path) -> None:
    role = tmp_path / "role.txt"
    role.write_text("You are terse.")
    manifest, records = _run(tmp_path, "--system-role", str(role), "--exam-mode", "sequential")
    assert manifest["system_role_name"] is None and manifest["system_role"] == "You are terse."
    assert manifest["exam_mode"] == "sequential"
    assert [m["role"] for m in records[1]["messages"]] == ["system", "user", "assistant", "user"]


def test_a_path_to_a_file_named_like_a_role_reads_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "calculus-study").write_text("My own words.")
    assert resolve_system_role("./calculus-study") == ("My own words.", None)
    assert resolve_system_role("calculus-study") == (CALCULUS_STUDY_ROLE, "calculus-study")


@pytest.mark.parametrize(("value", "hint"), [("calculus", "'calculus-study'"), ("nonsense", None)])
def test_an_unknown_role_name_lists_the_known_ones(tmp_path: Path, value: str, hint: str | None) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "calc1-exam1", "--model", "mock/echo", "--out", str(out),
                                   "--system-role", value])
    text = " ".join(res.output.split())
    assert res.exit_code == 2, text
    assert "--system-role" in text and f"'{value}'" in text
    assert "Known: calculus-study, exam" in text
    if hint:
        assert f"Did you mean {hint}" in text
    assert not out.exists()
    with pytest.raises(UserError, match="unknown system role"):
        resolve_system_role(value)
    with pytest.raises(UserError, match="Known: calculus-study, exam"):
        named_system_role(value)


def test_the_study_role_states_table_5_and_adds_nothing() -> None:
    lines = CALCULUS_STUDY_ROLE.splitlines()
    assert len(lines) == 3  # role, notation, format
    role, notation, fmt = (line.lower() for line in lines)
    assert "undergraduate student" in role and "exam" in role and "show" in role and "all of your steps" in role
    assert "thoroughly" in role and "completely" in role
    assert "latex" in notation and "markup" in notation and "f(x)=x^2/4" in notation and "\\frac{x^2}{4}" in notation
    assert "$$" in fmt and "\\( \\)" in fmt and "backslashes" in fmt and "keyboard" in fmt and "paper" in fmt
    # today's role adds these; the study's does not
    for added in ("number", "final answer"):
        assert added in EXAM_SYSTEM_ROLE.lower()
        assert added not in CALCULUS_STUDY_ROLE.lower()
    # the format-compliance analysis reads the same rules from both roles
    assert rules_from_role(CALCULUS_STUDY_ROLE) == FormatRules(latex=True, markup=True)
    assert rules_from_role(EXAM_SYSTEM_ROLE) == FormatRules(latex=True, markup=True)
    assert set(SYSTEM_ROLES) == {"exam", "calculus-study"}
