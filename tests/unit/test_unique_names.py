"""Repeated names numbered by one rule (`mathlens.unique`): knowledge-base documents whose files
share a stem, and runs that share an id in one report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mathlens.report.loader import load_runs
from mathlens.solve.retrieval.documents import load_sources
from mathlens.unique import occurrences


@pytest.mark.parametrize(("names", "expected"), [
    ([], []),
    (["a"], [1]),
    (["a", "b", "a", "a", "b"], [1, 1, 2, 3, 2]),
])
def test_occurrences(names: list[str], expected: list[int]) -> None:
    assert occurrences(names) == expected


def test_documents_with_one_stem_in_two_folders_are_numbered(tmp_path: Path) -> None:
    for folder, text in (("a", "Derivatives measure change."), ("b", "Integrals measure area.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(f"# Notes\n\n{text}\n", encoding="utf-8")
    docs = load_sources([tmp_path / "a", tmp_path / "b"])
    assert [d.id for d in docs] == ["notes", "notes-2"]
    assert "Integrals" in docs[1].text and "Derivatives" in docs[0].text


def test_runs_with_one_id_get_numbered_labels(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mathlens.cli.main import app

    first = tmp_path / "one"
    res = CliRunner().invoke(app, ["run", "calc3-exam1", "--model", "mock/echo", "--limit", "1", "--out", str(first),
                                   "--json"])
    assert res.exit_code == 0, res.output
    shutil.copytree(first, tmp_path / "two")
    runs = load_runs([first, tmp_path / "two", first])
    label = runs[0].label
    assert [r.label for r in runs] == [label, f"{label} (2)", f"{label} (3)"]
