"""The run summary (`run`, `import`, `show`) reads what is stored, and every reader names an analysis
that covers fewer or other records than the run holds now (show, analyze, report, compare).

Runs are real mock-model runs through the CLI (tests/support/report_run.py). A run analysed
while it was still being written is made by analysing a copy whose records file holds only the
first records, then putting the whole file back: exactly what a reader of a growing run sees.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.cli.main import app
from mathlens.report.loader import load_runs
from mathlens.report.render import build_report
from mathlens.runs.counts import CACHE_NAME, count_records
from mathlens.runs.documents import document_states
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"




def _invoke(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("summary")
    full = fx.make_run(root / "full", [fx.SOLUTION, fx.WRONG], limit=4, ablate=False)
    partial = root / "partial"
    shutil.copytree(full, partial)
    shutil.rmtree(partial / "analysis")
    records = (partial / "records.jsonl").read_bytes()
    lines = records.splitlines(keepends=True)
    assert len(lines) == 4
    (partial / "records.jsonl").write_bytes(b"".join(lines[:2]))
    code, _, err = _invoke("analyze", str(partial))
    assert code == 0, err
    (partial / "records.jsonl").write_bytes(records)  # the run "went on" after the analysis read it
    return {"full": full, "partial": partial}


def test_documents_record_what_they_read_and_name_fewer_records(runs: dict[str, Path]) -> None:
    states = {s.name: s for s in document_states(runs["partial"])}
    assert set(states) >= {"flow", "answers", "sensitivity", "breakdown"}
    for s in states.values():
        assert (s.status, s.records) == ("fewer", 2), s
        assert "covers 2 of the 4 records" in s.note and "re-run `mathlens " in s.note
        assert f" {runs['partial']}" in s.note  # the command names the run
    assert all(s.status == "current" for s in document_states(runs["full"]))


def test_show_names_stale_analyses(runs: dict[str, Path]) -> None:
    code, out, _ = _invoke("show", str(runs["partial"]), "--json")
    assert code == 0
    doc = json.loads(out)
    assert {s["name"]: s["status"] for s in doc["analysis_states"]}["answers"] == "fewer"
    assert doc["quality"]["source"] == "analysis/answers.jsonl"
    assert "covers 2 of the 4 records" in doc["quality"]["note"]
    code, _, err = _invoke("show", str(runs["partial"]))
    text = " ".join(err.split())
    assert code == 0 and "stale analysis/answers.jsonl: covers 2 of the 4 records" in text
    assert "answers (fewer)" in text
    code, _, err = _invoke("show", str(runs["full"]))
    assert code == 0 and "stale" not in err


def test_analyze_names_what_it_left_stale(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["partial"], run)
    code, out, _ = _invoke("analyze", str(run), "--only", "answers", "--json")
    assert code == 0
    doc = json.loads(out)
    assert sorted(s["name"] for s in doc["stale"]) == ["breakdown", "flow", "sensitivity"]
    code, _, err = _invoke("analyze", str(run), "--only", "answers")
    assert "stale analysis/flow.jsonl: covers 2 of the 4 records" in " ".join(err.split())
    assert "stale analysis/answers.jsonl" not in err


def test_other_records_are_named_after_a_rewrite(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["full"], run)
    lines = (run / "records.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["latency_s"] = first["latency_s"] + 1.0  # the same record, rewritten
    (run / "records.jsonl").write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    states = {s.name: s for s in document_states(run)}
    assert states["answers"].status == "other"
    assert "no longer the run's" in states["answers"].note


def test_report_states_staleness_at_the_top_and_beside_each_section(runs: dict[str, Path]) -> None:
    report = build_report(load_runs([runs["partial"]]))
    assert any("analysis/answers.jsonl covers 2 of the 4 records" in n for n in report.stale)
    answers_sections = {s.id: s for s in report.sections}
    assert any("answers.jsonl" in n for n in answers_sections["question_index"].stale)
    html = report.html()
    assert 'data-stale="report"' in html and 'data-stale="section"' in html
    fresh = build_report(load_runs([runs["full"]]))
    assert fresh.stale == [] and 'data-stale' not in fresh.html()


def test_compare_states_staleness_beside_the_metric(runs: dict[str, Path]) -> None:
    code, out, _ = _invoke("compare", str(runs["partial"]), str(runs["full"]), "--json")
    assert code == 0
    doc = json.loads(out)
    (comparison,) = doc["comparisons"]
    accuracy = next(m for m in comparison["metrics"] if m["metric"] == "accuracy")
    assert accuracy["stale"] and "answers.jsonl covers 2 of the 4 records" in accuracy["stale"][0]
    code, _, err = _invoke("compare", str(runs["partial"]), str(runs["full"]))
    assert code == 0 and "not up to date:" in err


def test_compare_with_no_item_in_common_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    other = fx.make_run(tmp_path / "other", [fx.SOLUTION], exam="calc3-exam2", limit=1)
    code, out, err = _invoke("compare", str(runs["full"]), str(other))
    assert code == 2 and out == ""
    line = " ".join(err.split())
    assert line.startswith("error: nothing to compare: no item is in both") and "Traceback" not in err


def _echo_run(tmp_path: Path, n: int) -> Path:
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "text": f"Question {i}: what is {i} plus {i}, "
                                        "counted slowly and carefully?"}) + "\n" for i in range(n)))
    run = tmp_path / "run"
    code, _, err = _invoke("run", str(data), "--model", "mock/echo", "--out", str(run), "-q")
    assert code == 0, err
    return run


def test_a_large_unanalysed_run_is_flagged_from_a_sample_and_then_exactly(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    run = _echo_run(tmp_path, 130)
    code, out, _ = _invoke("show", str(run), "--json")
    assert code == 0
    doc = json.loads(out)
    q = doc["quality"]
    assert (q["source"], q["responses"], q["sampled_from"]) == ("sample of records", 100, 130)
    assert q["degenerate"] == 100  # every response copies its prompt
    assert all(g["degenerate"] is None and g["quality"] == {} for g in doc["groups"])
    assert "100 of 100 sampled responses" in doc["warning"] and "of the run's 130" in doc["warning"]
    # the note says what the sample found, not only where it came from
    assert q["note"].startswith("a spread sample of 100 of the 130 responses: 100 degenerate (100%); ")
    assert "echo 100" in q["note"].split(";")[1]
    code, _, printed = _invoke("show", str(run))  # the summary is written to stderr
    assert code == 0 and "quality flags: a spread sample of 100 of the 130 responses: 100 degenerate" in " ".join(
        printed.split())
    code, _, _ = _invoke("analyze", str(run), "--only", "answers")
    assert code == 0
    doc = json.loads(_invoke("show", str(run), "--json")[1])
    assert (doc["quality"]["source"], doc["quality"]["responses"]) == ("analysis/answers.jsonl", 130)
    assert doc["groups"][0]["degenerate"] == 130 and doc["quality"]["sampled_from"] is None


def test_counts_are_incremental_and_restart_after_a_rewrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    run = _echo_run(tmp_path, 6)
    path = run / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]))
    first = count_records(run)
    assert first.records == 4 and first.groups[0].ok == 4
    cache = json.loads((run / CACHE_NAME).read_text())
    assert cache["counts"]["bytes"] == path.stat().st_size
    # mark the cached counts: a later count that starts from them keeps the mark
    cache["counts"]["groups"][0]["cached"] = 1000
    (run / CACHE_NAME).write_text(json.dumps(cache))
    with path.open("ab") as fh:
        fh.write(b"".join(lines[4:]))
    more = count_records(run)
    assert more.records == 6 and more.groups[0].ok == 6 and more.groups[0].cached == 1000
    assert count_records(run, cache=False).groups[0].cached == 0
    tmp = path.with_name("rewritten")
    tmp.write_bytes(b"".join(lines[:3]))
    os.replace(tmp, path)  # a rewrite (as --retry-errors does): another file, counted afresh
    again = count_records(run)
    assert again.records == 3 and again.groups[0].cached == 0


def test_show_of_an_analysed_and_graded_run_imports_nothing_heavy(runs: dict[str, Path], tmp_path: Path) -> None:
    import subprocess
    import sys

    run = tmp_path / "graded"
    shutil.copytree(runs["full"], run)
    assert "grade_tables" in fx.add_judged_analyses(run)
    heavy = ("sympy", "numpy", "scipy", "sklearn", "spacy", "networkx", "latex2sympy2", "math_verify", "torch")
    code = ("import sys, json\nfrom mathlens.cli.main import app\n"
            f"sys.argv = ['mathlens', 'show', {str(run)!r}]\n"
            "try:\n    app()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    assert "as in Table 6 of the calculus study" in " ".join(proc.stdout.split())  # the tables are printed


def test_held_records_are_counted_as_the_stored_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mathlens.analyze.overview import run_overview
    from mathlens.runs.store import RunStore

    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    run = _echo_run(tmp_path, 6)
    path = run / "records.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    for i, rec in enumerate(recs):  # failures, cap hits, traces and two replicas, unlike each other
        rec["replica"] = None if i == 5 else f"http://r{i % 2}"
        rec["latency_s"] = 0.25 * (i + 1)
        rec["usage"] = {"prompt_tokens": 10 + i, "completion_tokens": 3 * i}
        if i in (1, 4):
            rec.update(status="error", error=f"boom {i}")
        if i in (2, 3):
            rec.update(finish_reason="length", reasoning="thinking", response="" if i == 2 else "42")
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    store = RunStore(run)
    stored = run_overview(store)
    held = run_overview(store, records=list(store.records()))
    assert [g.model_dump(exclude={"degenerate", "degenerate_share", "quality"}) for g in held.groups] == \
        [g.model_dump(exclude={"degenerate", "degenerate_share", "quality"}) for g in stored.groups]
    assert held.replicas == stored.replicas and held.errors == stored.errors
    g = stored.groups[0]
    assert (g.records, g.ok, g.error, g.truncated, g.with_trace, g.trace_truncated) == (6, 4, 2, 2, 2, 1)
    assert (g.prompt_tokens, g.completion_tokens, g.latency_s) == (75, 45, 5.25)
    assert [(r.replica, r.records, r.ok, r.error, r.completion_tokens) for r in stored.replicas] == \
        [("http://r0", 3, 2, 1, 18), ("http://r1", 2, 1, 1, 12)]
    assert (stored.errors_total, [e.error for e in stored.errors]) == (2, ["boom 1", "boom 4"])


def test_a_run_without_analyses_is_counted_without_a_digest_of_all_its_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mathlens.analyze.overview import run_overview
    from mathlens.runs import documents, store

    monkeypatch.setenv("MATHLENS_CACHE_DIR", str(tmp_path / "cache"))
    run = _echo_run(tmp_path, 12)
    digests: list[Path] = []
    real = documents.records_snapshot

    def counted(path: Path) -> object:
        digests.append(path)
        return real(path)

    monkeypatch.setattr(documents, "records_snapshot", counted)
    monkeypatch.setattr(store, "records_snapshot", counted)
    overview = run_overview(store.RunStore(run))
    assert overview.records == 12 and overview.analysis_states == [] and digests == []
    # with a document to hold against the records, the digest is taken (once) and the state is known
    assert _invoke("analyze", str(run), "--only", "answers")[0] == 0
    digests.clear()
    overview = run_overview(store.RunStore(run))
    assert len(digests) == 1 and [(s.name, s.status) for s in overview.analysis_states] == [("answers", "current")]


def test_show_and_analyze_state_the_final_answers_the_checker_found_correct(runs: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    from mathlens.analyze.grading.answer_records import ANSWERS

    entries = list(ANSWERS.entries(runs["full"]))
    correct = sum(e.status == "correct" for e in entries)
    assert 0 < correct < len(entries)  # the mock run answers some questions right and some wrong
    said = f"final answers: {correct} of {len(entries)} correct by the answer checker"
    code, _, err = _invoke("show", str(runs["full"]))
    assert code == 0 and said in err
    code, out, _ = _invoke("show", str(runs["full"]), "--json")
    groups = json.loads(out)["final_answers"]
    assert code == 0 and sum(g["counts"]["correct"] for g in groups) == correct
    code, out, _ = _invoke("analyze", str(runs["full"]), "--only", "answers")
    assert code == 0 and said in out
    bare = tmp_path / "bare"  # not analysed: nothing to state, and no line claiming otherwise
    shutil.copytree(runs["full"], bare)
    shutil.rmtree(bare / "analysis")
    code, out, _ = _invoke("show", str(bare), "--json")
    assert code == 0 and json.loads(out)["final_answers"] == []
    assert "final answers" not in _invoke("show", str(bare))[2]


def test_the_report_names_prompt_variants_only_for_a_run_that_has_them(runs: dict[str, Path],
                                                                       tmp_path: Path) -> None:
    from mathlens.analyze.grading.answer_records import ANSWERS
    from mathlens.report import make_report

    entries = list(ANSWERS.entries(runs["full"]))
    correct = sum(e.status == "correct" for e in entries)
    plain = make_report([runs["full"]]).html()
    assert f"{correct} of {len(entries)} correct by the answer checker" in plain
    assert "prompt variants included" not in plain
    ablated = fx.make_run(tmp_path / "ablated", [fx.SOLUTION, fx.WRONG], limit=1, ablate=True)
    assert "prompt variants included" in make_report([ablated]).html()
