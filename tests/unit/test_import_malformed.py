"""Malformed and partial sources: a clear error naming file, row and field, and nothing written.

The cases are in tests/cases/importing/malformed.yaml; the `.eval` archive cases are built here
with `zipfile`.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.errors import UserError
from mathlens.items.limits import SOURCE_TEXT_CHARS
from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.records import ItemSource

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "importing"
CASES: list[dict[str, Any]] = yaml.safe_load((CASES_DIR / "malformed.yaml").read_text(encoding="utf-8"))
ITEMS = [ItemSource(source=str(CASES_DIR / "items.jsonl"))]


def _import(source: Path, out: Path, **args: Any) -> None:
    import_run(ImportRequest(source=source, items=ITEMS, out=out, fmt=args.get("format", "auto"),
                             mapping=args.get("mapping", {}), model=args.get("model"),
                             reader=args.get("reader", "auto")))


def _nothing_written(tmp_path: Path, out: Path) -> None:
    assert not out.exists()
    assert not [p.name for p in tmp_path.iterdir() if ".importing-" in p.name]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_malformed_source_is_refused_with_its_place(case: dict[str, Any], tmp_path: Path) -> None:
    source = tmp_path / case["file"]
    source.write_text(case["content"].replace("{long}", "x" * (SOURCE_TEXT_CHARS.value + 1)), encoding="utf-8")
    out = tmp_path / "run"
    with pytest.raises(UserError) as caught:
        _import(source, out, **case.get("args", {}))
    for pattern in case["expect"]:
        assert re.search(pattern, str(caught.value)), f"{pattern!r} not in {caught.value}"
    _nothing_written(tmp_path, out)


INSPECT_CASES = [c for c in CASES if c.get("args", {}).get("reader") == "mathlens"]


@pytest.mark.parametrize("case", INSPECT_CASES, ids=[c["name"] for c in INSPECT_CASES])
def test_inspects_own_reader_refuses_them_too(case: dict[str, Any], tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (pip install 'mathlens[interop]')")
    source = tmp_path / case["file"]
    source.write_text(case["content"], encoding="utf-8")
    with pytest.raises(UserError, match=re.escape(str(source))):
        _import(source, tmp_path / "run", reader="inspect_ai")
    _nothing_written(tmp_path, tmp_path / "run")


def _archive(path: Path, members: dict[str, Any]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, doc in members.items():
            z.writestr(name, doc if isinstance(doc, str) else json.dumps(doc))
    return path


HEADER = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "plan": {"config": {}}}
SAMPLE = {"id": "q1", "epoch": 1, "input": "What is 2 + 3?",
          "messages": [{"role": "user", "content": "What is 2 + 3?"}],
          "output": {"completion": "5", "choices": [{"message": {"role": "assistant", "content": "5"},
                                                     "stop_reason": "stop"}]}}


def test_a_deflated_eval_archive_reads_with_the_builtin_reader(tmp_path: Path) -> None:
    log = _archive(tmp_path / "ok.eval", {"header.json": HEADER, "samples/q1_epoch_1.json": SAMPLE})
    result = import_run(ImportRequest(source=log, items=ITEMS, out=tmp_path / "run", reader="mathlens"))
    assert (result.imported.records, result.imported.reader) == (1, "mathlens")


@pytest.mark.parametrize(("members", "expect"), [
    ({"_journal/start.json": HEADER, "samples/q1_epoch_1.json": SAMPLE},
     r"bad\.eval: field 'header\.json': the archive has only the start journal"),
    ({"header.json": HEADER, "samples/q1_epoch_1.json": "{not json"},
     r"bad\.eval: samples/q1_epoch_1\.json: not valid JSON"),
    ({"header.json": HEADER, "samples/q1_epoch_1.json": [1, 2]},
     r"bad\.eval: samples/q1_epoch_1\.json: expected a JSON object"),
    ({"header.json": HEADER, "samples/q1_epoch_1.json": {**SAMPLE, "epoch": 0}},
     r"bad\.eval: sample q1: field 'epoch': must be at least 1"),
], ids=["journal only", "sample not JSON", "sample not an object", "epoch zero"])
def test_a_damaged_eval_archive_names_the_member(members: dict[str, Any], expect: str, tmp_path: Path) -> None:
    log = _archive(tmp_path / "bad.eval", members)
    with pytest.raises(UserError, match=expect):
        import_run(ImportRequest(source=log, items=ITEMS, out=tmp_path / "run", reader="mathlens"))
    _nothing_written(tmp_path, tmp_path / "run")


def test_a_member_that_unpacks_past_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = {**SAMPLE, "metadata": {"pad": "0" * 50_000}}  # compresses to little: a small zip bomb
    log = _archive(tmp_path / "bomb.eval", {"header.json": HEADER, "samples/q1_epoch_1.json": big})
    assert log.stat().st_size < 5_000
    monkeypatch.setenv("MATHLENS_LIMIT_MEMBER_BYTES", "20000")
    with pytest.raises(UserError, match=r"bomb\.eval: samples/q1_epoch_1\.json: unpacks to .* more than the limit "
                                        r"of 20,000 bytes \(raise it with MATHLENS_LIMIT_MEMBER_BYTES=N\)"):
        import_run(ImportRequest(source=log, items=ITEMS, out=tmp_path / "run", reader="mathlens"))


def test_too_many_rows_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps({"id": "q1", "response": "5", "model": "m"}) + "\n" for _ in range(4)),
                      encoding="utf-8")
    monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_ROWS", "3")
    with pytest.raises(UserError, match=r"out\.jsonl: line 4: more than the limit of 3 rows \(raise it with "
                                        r"MATHLENS_LIMIT_SOURCE_ROWS=N\)"):
        _import(source, tmp_path / "run")


def test_a_source_over_the_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"id": "q1", "response": "5" * 200, "model": "m"}) + "\n", encoding="utf-8")
    monkeypatch.setenv("MATHLENS_LIMIT_SOURCE_BYTES", "100")
    with pytest.raises(UserError, match=r"out\.jsonl: the file is \d+ bytes, more than the limit of 100 bytes"):
        _import(source, tmp_path / "run")


def test_an_existing_run_directory_is_not_overwritten(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"id": "q1", "response": "5", "model": "m"}) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(UserError, match="already exists and is not empty"):
        _import(source, out)
    assert (out / "keep.txt").read_text() == "mine"
