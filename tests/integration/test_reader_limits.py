"""Every reader of user files under its limits, through the command line (tests/cases/limits/readers.yaml).

Each case runs `mathlens` in a process of its own and checks what a user sees and what the machine
pays: exit status 2, exactly one line on stderr naming the file and the limit (and the variable that
raises it), no run directory and no temporary left behind, and the wall time and peak resident
memory of the process (from `os.wait4`, see LAUNCHER) within the case's bounds. Hostile files are built here: a
YAML alias bomb, a zip bomb `.eval` archive (1 MB that unpacks to 1 GiB), archives that lie about
their members, JSON nested 100,000 levels deep.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

CASES_FILE = Path(__file__).resolve().parents[1] / "cases" / "limits" / "readers.yaml"
TABLE: dict[str, list[dict[str, Any]]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
CASES = [(group, case) for group, cases in TABLE.items() for case in cases]
#: bounds for every case (a case may set its own)
SECONDS = 60.0
RSS_MB = 600

HEADER = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "dataset": {"samples": 1}},
          "plan": {"config": {}}, "results": None}
SAMPLE_HEAD = ('{"id": "q1", "epoch": 1, "input": "What is 2 + 3?", "target": "5", '
               '"messages": [{"role": "user", "content": "What is 2 + 3?"}], '
               '"output": {"completion": "5", "choices": [{"message": {"role": "assistant", "content": "5"}, '
               '"stop_reason": "stop"}]}, "metadata": {"pad": ')


def _bomb_yaml(path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert path.stat().st_size < 500  # a few hundred bytes that expand to 9^10 values


def _items_many(path: Path) -> None:
    path.write_text("".join(json.dumps({"id": f"q{i}", "text": f"What is {i} + 1?"}) + "\n" for i in range(40)),
                    encoding="utf-8")


def _items_nested(path: Path) -> None:
    path.write_text('{"id": "q1", "text": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
                    encoding="utf-8")


def _items_long_line(path: Path) -> None:
    path.write_text(json.dumps({"id": "q1", "text": "x" * (1 << 21)}) + "\n", encoding="utf-8")


def _eval_archive(path: Path, samples: dict[str, str | Callable[[Any], None]]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(HEADER))
        for name, body in samples.items():
            if isinstance(body, str):
                z.writestr(name, body)
            else:
                with z.open(name, "w", force_zip64=True) as fh:
                    body(fh)


def _eval_zip_bomb(path: Path) -> None:
    block = b"0" * (1 << 20)

    def write(fh: Any) -> None:  # a JSON sample whose metadata holds 1 GiB of zeros
        fh.write(SAMPLE_HEAD.encode() + b'"')
        for _ in range(1024):
            fh.write(block)
        fh.write(b'"}}')
    _eval_archive(path, {"samples/q1_epoch_1.json": write})
    assert path.stat().st_size < 1_200_000


def _eval_lying_size(path: Path) -> None:
    _eval_archive(path, {"samples/q1_epoch_1.json": SAMPLE_HEAD + '"' + "0" * 200_000 + '"}}'})
    data = bytearray(path.read_bytes())
    # the central directory entry of the sample: its uncompressed size (offset 24) says 100 bytes
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + name_len] == b"samples/q1_epoch_1.json":
            struct.pack_into("<I", data, at + 24, 100)
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))


def _eval_many_members(path: Path) -> None:
    _eval_archive(path, {f"samples/q{i}_epoch_1.json": SAMPLE_HEAD.replace("q1", f"q{i}") + '"' + "p" * 900 + '"}}'
                         for i in range(11)})


def _eval_nested(path: Path) -> None:
    _eval_archive(path, {"samples/q1_epoch_1.json": SAMPLE_HEAD + "[" * 100_000 + "]" * 100_000 + "}}"})


def _json_log_nested(path: Path) -> None:
    doc = json.dumps({**HEADER, "samples": ["SAMPLE"]}).replace('"SAMPLE"', SAMPLE_HEAD + "[" * 100_000
                                                                 + "]" * 100_000 + "}}")
    path.write_text(doc, encoding="utf-8")


def _records_nested(path: Path) -> None:
    path.write_text('{"p1": {"question": "What is 2 + 3?", "response": "5", "answer": "5", "metadata": '
                    + "{\"a\": " * 100_000 + "1" + "}" * 100_000 + "}}", encoding="utf-8")


def _jsonl_nested(path: Path) -> None:
    path.write_text(json.dumps({"question": "What is 2 + 3?", "response": "5", "answer": "5", "model": "m"}) + "\n"
                    + '{"question": "What is 1 + 3?", "response": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
                    encoding="utf-8")


def _jsonl_many(path: Path) -> None:
    path.write_text("".join(json.dumps({"question": f"What is {i} + 1?", "response": str(i + 1), "answer": str(i + 1),
                                        "model": "m"}) + "\n" for i in range(30)), encoding="utf-8")


def _math_eval_many(path: Path) -> None:
    path.write_text(json.dumps({"idx": 0, "question": "What is 2 + 3?", "gt": "5", "code": ["5"] * 8,
                                "pred": ["5"] * 8, "score": [True] * 8}) + "\n", encoding="utf-8")


def _csv_long_field(path: Path) -> None:
    path.write_text("question,response,answer,model\nWhat is 2 + 3?," + "5" * 300_000 + ",5,m\n", encoding="utf-8")


BUILDERS: dict[str, Callable[[Path], None]] = {
    "yaml_alias_bomb": _bomb_yaml, "items_many": _items_many, "items_nested_deep": _items_nested,
    "items_long_line": _items_long_line, "eval_zip_bomb": _eval_zip_bomb, "eval_lying_size": _eval_lying_size,
    "eval_many_members": _eval_many_members, "eval_nested_deep": _eval_nested,
    "json_log_nested_deep": _json_log_nested, "records_nested_deep": _records_nested,
    "jsonl_nested_deep": _jsonl_nested, "jsonl_many": _jsonl_many, "math_eval_many": _math_eval_many,
    "csv_long_field": _csv_long_field,
}


def _command(case: dict[str, Any], file: Path, work: Path) -> list[str]:
    cli = [sys.executable, "-m", "mathlens.cli.main"]
    if case["command"] == "run":
        return [*cli, "run", str(file), "--model", "mock/echo", "--out", str(work / "run")]
    if case["command"] == "items":
        source = work / "answers.jsonl"
        source.write_text(json.dumps({"id": "q1", "response": "2", "model": "m"}) + "\n", encoding="utf-8")
        return [*cli, "import", str(source), "--items", str(file), "--out", str(work / "run")]
    return [*cli, "import", str(file), "--out", str(work / "run"), *case.get("args", [])]


#: Runs the command as its own child and writes that child's peak resident memory to the file named
#: by its first argument. The peak of a process forked straight from this (large) test process would
#: start at this process's size: Linux keeps a process's high-water mark across fork and exec, so the
#: small launcher in between is what makes the figure the command's own.
LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _measured(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, float, float]:
    """(exit status, stderr, seconds, peak resident MB) of one process."""
    peak_file = cwd.parent / "peak-rss"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, str(peak_file), *cmd], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, cwd=cwd, check=False)
    seconds = time.monotonic() - started
    peak_kb = int(peak_file.read_text()) if peak_file.exists() else 0
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), seconds, peak_kb / 1024


@pytest.mark.slow
@pytest.mark.parametrize(("group", "case"), CASES, ids=[c["name"] for _, c in CASES])
def test_a_crossed_limit_is_one_line_and_exit_2(group: str, case: dict[str, Any], tmp_path: Path) -> None:
    if case.get("args") != ["--reader", "mathlens"] and case["file"].endswith((".eval", ".json")) \
            and case.get("build", "").startswith(("eval", "json_log")):
        pytest.importorskip("inspect_ai", reason="the case goes through Inspect's own reader")
    work = tmp_path / "work"
    work.mkdir()
    file = work / case["file"]
    if "build" in case:
        BUILDERS[case["build"]](file)
    else:
        file.write_text(case["content"] + ("\n" if not case["content"].endswith("\n") else ""), encoding="utf-8")
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(tmp_path / "cache"), **case.get("env", {})}
    cmd = _command(case, file, work)
    before = set(work.iterdir())
    code, err, seconds, rss_mb = _measured(cmd, env, work)
    lines = [line for line in err.splitlines() if line.strip()]
    print(f"\n[limits] {case['name']}: exit {code}, {seconds:.2f} s, {rss_mb:.0f} MB")  # shown with -s
    assert code == 2, err[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
    for pattern in case["expect"]:
        assert re.search(pattern, lines[0]), f"{pattern!r} not in {lines[0]!r}"
    assert set(work.iterdir()) == before, "something was left behind"
    assert seconds < case.get("seconds", SECONDS), f"took {seconds:.1f} s"
    assert rss_mb < case.get("rss_mb", RSS_MB), f"peak memory {rss_mb:.0f} MB"
