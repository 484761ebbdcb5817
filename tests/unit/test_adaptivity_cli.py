"""`mathlens tutor ...` end to end with scripted models: every command, its --json output and errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from mathlens.cli.main import app

runner = CliRunner()
YES = json.dumps({"rationale": "fine", "rating": "yes"})


def invoke(*args: str) -> tuple[int, str]:
    """Exit code and output (stdout alone with --json: warnings go to stderr, as for `mathlens run`)."""
    res = runner.invoke(app, list(args))
    return res.exit_code, res.stdout if "--json" in args else res.output


def test_tutor_commands(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "1,4", "--limit", "2",
                       "--dry-run", "--json", "--no-cache")
    assert code == 0 and json.loads(out)["requests"] == 2 * 3 * 2
    code, out = invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "1,4", "--limit", "2",
                       "--out", str(run), "--json", "--no-cache")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["this_invocation"]["written"] == 12
    assert {g["configuration"] for g in doc["groups"]} == {"condition-1", "condition-4"}
    code, out = invoke("tutor", "run", "--resume", str(run), "--json", "--no-cache")
    assert code == 0 and json.loads(out)["this_invocation"]["skipped"] == 12

    code, out = invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
                       "--items", "Q1,SBS,Q13", "--json", "--no-cache")
    assert code == 0, out
    doc = json.loads(out)["summary"]
    assert doc["counts"] == {"ok": 36} and doc["items"] == ["Q1", "Q9", "Q13"]

    code, out = invoke("tutor", "stats", str(run), "--json")
    assert code == 0, out
    st = json.loads(out)
    # only 3 of 9 adaptivity items were scored, so no response is complete on any dimension
    assert st["excluded"] == {"adaptivity": 12, "correctness": 12, "quality": 12}
    assert all(r["n"] == 0 for r in st["table1"]) and st["anova"] == {}
    sbs = [r for r in st["table2"] if r["code"] == "SBS" and r["model"] == "all"]
    assert [(r["condition"], r["percent_satisfied"], r["n"]) for r in sbs] == [(1, 100.0, 6), (4, 100.0, 6)]

    sheet = tmp_path / "sheet.csv"
    code, out = invoke("tutor", "worksheet", "export", str(run), "-o", str(sheet), "--items", "Q1,Q13",
                       "--with-judge", "--json")
    assert code == 0 and json.loads(out)["rows"] == 24
    with sheet.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        # the judge answered "yes" to both: Q1 scores 1, but Q13 asks about a failure and scores 0
        row["score"] = "1"
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    code, out = invoke("tutor", "worksheet", "import", str(run), str(sheet), "--annotator", "bo", "--json")
    assert code == 0 and json.loads(out)["counts"] == {"ok": 24}
    code, out = invoke("tutor", "agreement", str(run), "--resamples", "20", "--json")
    assert code == 0, out
    by_scope = {r["scope"]: r["stats"] for r in json.loads(out)["rows"]}
    assert by_scope["Q1"]["percent"]["estimate"] == 1.0 and by_scope["Q13"]["percent"]["estimate"] == 0.0
    code, out = invoke("tutor", "stats", str(run), "--source", "human:nobody")
    assert code == 2 and "no worksheet imported" in out


def test_user_errors_exit_two(tmp_path: Path) -> None:
    code, out = invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--images", "send", "--limit", "1",
                       "--out", str(tmp_path / "r"), "--no-cache")
    assert code == 2 and "text-only" in out
    code, out = invoke("tutor", "run", "tutoring", "--conditions", "7", "--model", "mock/echo")
    assert code == 2 and "unknown context condition" in out
    code, out = invoke("tutor", "run", "no-such-items.yaml", "--model", "mock/echo")
    assert code == 2 and "no such item file" in out
    code, out = invoke("tutor", "score", str(tmp_path), "--judge", "mock/j")
    assert code == 2 and "not a run directory" in out


def test_score_takes_the_judge_from_the_flag_or_the_run_and_never_a_default(tmp_path: Path) -> None:
    from mathlens.runs.records import ModelEntry
    from mathlens.runs.store import RunStore

    run = tmp_path / "run"
    code, out = invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "2", "--limit", "1",
                       "--out", str(run), "--json", "--no-cache")
    assert code == 0, out
    code, out = invoke("tutor", "score", str(run), "--items", "Q1")
    assert code == 2 and "no judge model for run" in out and "--judge MODEL" in out
    assert not (run / "analysis" / "tutor_scores.jsonl").exists()
    store = RunStore(run)
    store.write_manifest(store.manifest().model_copy(update={
        "judge": ModelEntry(spec="mock/recorded", options={"responses": [YES]})}))
    code, out = invoke("tutor", "score", str(run), "--items", "Q1,Q9", "--json", "--no-cache")
    assert code == 0, out
    doc = json.loads(out)["summary"]
    assert doc["grader"] == "judge:mock/recorded" and doc["counts"] == {"ok": 6} and doc["responses"] == 3
    # a flag wins over the recorded judge; an unknown rubric item is refused
    code, out = invoke("tutor", "score", str(run), "--judge", "mock/flag", "-J", f"responses=[{json.dumps(YES)}]",
                       "--items", "Q1", "--json", "--no-cache")
    assert code == 0 and json.loads(out)["summary"]["grader"] == "judge:mock/flag"
    code, out = invoke("tutor", "score", str(run), "--judge", "mock/flag", "--items", "Q99")
    assert code == 2 and "Q99" in out


def test_a_plain_run_cannot_use_a_context_condition(tmp_path: Path) -> None:
    code, out = invoke("run", "calc3-exam1", "--model", "mock/echo", "--config", "condition-2", "--limit", "1",
                       "--dry-run", "--out", str(tmp_path / "r"))
    assert code == 2 and "tutoring context condition" in out and "mathlens tutor run" in out


def test_tutor_stats_is_the_tutor_stats_analysis(tmp_path: Path) -> None:
    """`tutor stats` runs the `tutor_stats` analyzer: its flags are the analyzer's options, and
    `mathlens analyze --only tutor_stats` writes the same statistics."""
    run = tmp_path / "run"
    code, out = invoke("tutor", "run", "tutoring", "--model", "mock/a", "--model", "mock/b", "--conditions", "1,2",
                       "--limit", "2", "--out", str(run), "--json", "--no-cache")
    assert code == 0, out
    code, out = invoke("tutor", "stats", str(run))
    assert code == 2 and "no judge scores yet" in out and "tutor score" in out
    code, out = invoke("analyze", str(run), "--json")  # a bare analyze passes over it until there are scores
    assert code == 0 and json.loads(out)["analyzers"]["tutor_stats"]["status"] == "skipped", out
    code, out = invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
                       "--json", "--no-cache")
    assert code == 0, out
    code, out = invoke("tutor", "stats", str(run), "--alpha", "0.9")
    assert code == 2 and "--alpha" in out and "0.5" in out
    code, out = invoke("tutor", "stats", str(run), "--source", "people")
    assert code == 2 and "--source" in out
    code, out = invoke("tutor", "stats", str(run), "--seed", "7", "--json")
    assert code == 0, out
    by_command = json.loads(out)
    assert by_command["seed"] == 7 and by_command["responses"] == 2 * 2 * 2 * 3
    document = run / "analysis" / "tutor_stats.jsonl"
    envelope = json.loads(document.read_text().splitlines()[0])
    assert envelope["options"] == {"source": "judge", "alpha": 0.05, "seed": 7}
    document.unlink()
    code, out = invoke("analyze", str(run), "--only", "tutor_stats", "-O", "tutor_stats.seed=7", "--json")
    assert code == 0, out
    by_analysis = json.loads(out)["analyzers"]["tutor_stats"]["summary"]
    assert by_analysis == by_command


def test_a_bare_analyze_skips_the_tutoring_statistics_of_another_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, out = invoke("run", "calc3-exam1", "--model", "mock/echo", "--limit", "1", "--out", str(run), "-q")
    assert code == 0, out
    code, out = invoke("analyze", str(run), "--json")
    assert code == 0, out
    outcome = json.loads(out)["analyzers"]["tutor_stats"]
    assert outcome["status"] == "skipped" and "not a tutoring run" in outcome["notes"][0]
    assert not (run / "analysis" / "tutor_stats.jsonl").exists()
