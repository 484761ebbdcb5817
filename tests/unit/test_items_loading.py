"""Item schemas and loaders: good files load, bad files name file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mathlens.items.errors import ItemFileError
from mathlens.items.loaders import load_items
from mathlens.items.schema import Exam

CASES = yaml.safe_load((Path(__file__).parents[1] / "cases" / "items" / "bad_files.yaml").read_text())
BAD = [(group, case) for group, cases in CASES.items() for case in cases]


def write_case(folder: Path, case: dict) -> Path:
    """The file (or directory) a case describes: `content`, or `pattern` head + repeat * times + tail."""
    path = folder / case["name"]
    if case.get("directory"):
        path.mkdir()
        (path / "inside.yaml").write_text("id: x\nname: X\nquestions:\n  - id: q1\n    text: A\n")
        return path
    pattern = case.get("pattern")
    content = case["content"] if pattern is None else \
        pattern["head"] + pattern["repeat"] * pattern["times"] + pattern.get("tail", "")
    path.write_text(content, encoding="latin-1" if case.get("latin1") else "utf-8")
    return path


@pytest.mark.parametrize(("group", "case"), BAD, ids=[f"{g}-{c['name']}" for g, c in BAD])
def test_bad_file_names_line_and_field(tmp_path: Path, group: str, case: dict) -> None:
    path = write_case(tmp_path, case)
    with pytest.raises(ItemFileError) as info:
        load_items(path)
    err = info.value
    assert err.path == str(path)
    assert err.line == case["line"]
    if case["field"] is None:
        assert err.field is None
    else:
        assert err.field == case["field"]
    for word in case["words"]:
        assert word in str(err)
    assert str(path) in str(err)


@pytest.mark.parametrize(("group", "case"), BAD, ids=[f"{g}-{c['name']}" for g, c in BAD])
def test_cli_bad_case_exits_2_with_message(tmp_path: Path, group: str, case: dict) -> None:
    from typer.testing import CliRunner

    from mathlens.cli.main import app

    path = write_case(tmp_path, case)
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", str(path), "--model", "mock/echo", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit), res.exception
    text = " ".join(res.output.split())  # the console wraps long lines
    assert "Traceback" not in text and "error:" in text
    assert str(path) in text.replace(" ", "") or str(path) in text
    for word in case["words"]:
        assert " ".join(word.split()) in text, (word, text[-500:])
    assert not out.exists()


def test_cli_bad_file_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nname: X\nquestions:\n  - id: q1\n    text: A\n    points: -1\n")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "run", str(bad), "--model", "mock/echo",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert f"{bad}:6" in proc.stderr and "questions[0].points" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_yaml_exam_round_trip(tmp_path: Path) -> None:
    exam = {"id": "e", "name": "E", "course": "Calculus I", "total_points": 10,
            "cohort": {"class_average": 81.5, "size": 40, "illustrative": True},
            "questions": [{"id": "q1", "text": "Differentiate x^3.", "points": 4, "answers": ["3x^2"]},
                          {"id": "q2", "text": "Two parts.", "parts": [
                              {"label": "a", "text": "lim x->0 sin(x)/x", "points": 3, "answer": "1"},
                              {"label": "b", "text": "integral of 2x dx", "points": 3, "answer": "x^2 + C"}]}]}
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(exam))
    loaded = load_items(path)
    assert isinstance(loaded, Exam)
    assert loaded.questions[1].total_points == 6
    assert loaded.questions[1].prompt_text().splitlines() == ["Two parts.", "(a) lim x->0 sin(x)/x",
                                                              "(b) integral of 2x dx"]
    assert loaded.cohort is not None and loaded.cohort.illustrative


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_math_records(tmp_path: Path) -> None:
    rows = [{"problem": f"P{i}", "answer": f"\\frac{{{i}}}{{2}}", "solution": "s", "subject": "Algebra",
             "level": i % 5 + 1, "unique_id": f"test/algebra/{i}.json"} for i in range(10)]
    exam = load_items(_jsonl(tmp_path / "m.jsonl", rows))
    assert len(exam.questions) == 10
    q = exam.questions[3]
    assert (q.id, q.text, q.answers, q.level, q.subject, q.answer_format) == (
        "test/algebra/3.json", "P3", ["\\frac{3}{2}"], 4, "Algebra", "latex")


def test_gsm8k_records(tmp_path: Path) -> None:
    rows = [{"question": "How many?", "answer": "3 + 4 = <<3+4=7>>7 apples\n#### 1,007"}]
    q = load_items(_jsonl(tmp_path / "g.jsonl", rows)).questions[0]
    assert q.answers == ["1007"]
    assert q.solution is not None and "#### " not in q.solution


def test_generic_mapping(tmp_path: Path) -> None:
    rows = [{"uid": "a1", "prompt": {"body": "Solve x+1=2"}, "gold": 1}]
    exam = load_items(_jsonl(tmp_path / "x.jsonl", rows), fmt="jsonl",
                      mapping={"id": "uid", "text": "prompt.body", "answer": "gold"})
    assert (exam.questions[0].id, exam.questions[0].text, exam.questions[0].answers) == ("a1", "Solve x+1=2", ["1"])


def test_limit_and_seeded_sample(tmp_path: Path) -> None:
    rows = [{"problem": f"P{i}", "answer": str(i)} for i in range(50)]
    path = _jsonl(tmp_path / "m.jsonl", rows)
    assert [q.text for q in load_items(path, limit=3).questions] == ["P0", "P1", "P2"]
    a = [q.text for q in load_items(path, sample=7, seed=3).questions]
    b = [q.text for q in load_items(path, sample=7, seed=3).questions]
    c = [q.text for q in load_items(path, sample=7, seed=4).questions]
    assert a == b and len(set(a)) == 7 and a != c
    # sampled questions keep file order
    assert a == sorted(a, key=lambda t: int(t[1:]))


def test_unknown_builtin_suggests() -> None:
    from mathlens.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="Did you mean"):
        load_items("calc3-exam")


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
def test_byte_order_mark_is_accepted(tmp_path: Path, suffix: str) -> None:
    body = ("id: x\nname: X\nquestions:\n  - id: q1\n    text: A\n" if suffix == ".yaml"
            else '{"id": "q1", "text": "A"}\n')
    path = tmp_path / f"bom{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    exam = load_items(path)
    assert [(q.id, q.text) for q in exam.questions] == [("q1", "A")]


def test_large_jsonl_streams(tmp_path: Path) -> None:
    """Records are read one at a time: the file is never decoded as one string."""
    path = tmp_path / "many.jsonl"
    with path.open("w") as fh:
        for i in range(20_000):
            fh.write(json.dumps({"id": f"q{i}", "text": f"What is {i} + 1?"}) + "\n")
    exam = load_items(path, limit=3)
    assert [q.id for q in exam.questions] == ["q0", "q1", "q2"]
    from mathlens.items.limits import ITEM_RECORDS

    original = Path.read_text
    try:
        Path.read_text = lambda *a, **k: (_ for _ in ()).throw(AssertionError("read whole file"))  # type: ignore[method-assign]
        assert len(load_items(path).questions) == 20_000
    finally:
        Path.read_text = original  # type: ignore[method-assign]
    assert ITEM_RECORDS.value >= 20_000
