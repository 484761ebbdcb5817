"""`mathlens grade` and `mathlens agreement` end to end through the command line (scripted judge)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from mathlens.analyze.grading.agreement_report import AGREEMENT
from mathlens.analyze.grading.grades import GRADES
from mathlens.analyze.grading.tables import GRADE_TABLES
from mathlens.cli.main import app
from support import grading_run as helpers

FULL = json.dumps({k: {"points": 1, "rationale": "fine"} for k in
                   ("method", "execution", "final_answer", "notation", "clarity")})


def test_grade_export_import_agreement(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    runner = CliRunner()
    run = str(store.root)
    res = runner.invoke(app, ["grade", run, "--judge", "mock/judge", "-J", f"responses={json.dumps([FULL])}",
                              "--judge-runs", "2", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["counts"] == {"graded": 8, "ungraded": 0}
    assert doc["judge"] == "mock/judge" and doc["rubric"] == "calculus@1"
    assert {r["configuration"] for r in doc["table6"]} == {"baseline", "rag"}
    # The judge gave 1 point per criterion; the checker's verdicts replace the final-answer points:
    # baseline answers both questions correctly, so q2's final answer earns its 2 points (11 in all);
    # rag's q1 answer ("e") is wrong, so its final-answer point goes (10), which the judge contradicted.
    rows = {r["configuration"]: r for r in doc["table6"]}
    assert (rows["baseline"]["score"], rows["rag"]["score"], rows["baseline"]["total"]) == (11, 10, 30)
    assert (rows["rag"]["decisive"], rows["rag"]["disagreements"]) == (2, 1)
    # over both judge runs: the same disagreement twice
    assert doc["reliability"]["disagreements"] == 2 and doc["reliability"]["decisive"] == 8
    assert doc["reliability"]["unreliable"] is True and doc["reliability"]["share"] == 0.25  # over a fifth
    assert doc["path"] == str(GRADES.path(store.root))
    grades = list(GRADES.entries(store.root))
    assert len(grades) == 8 and sorted({g.judge_run for g in grades}) == [0, 1]
    stored = GRADE_TABLES.read(store.root)
    assert stored is not None and [r.model_dump(mode="json") for r in stored.summary.table6] == doc["table6"]
    assert (store.analysis_dir / "table6.csv").read_text(encoding="utf-8").startswith("exam,model")

    sheet = tmp_path / "w.csv"
    res = runner.invoke(app, ["grade", run, "--export-worksheet", str(sheet), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["rows"] == 20
    with sheet.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["points"] = "1"
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    res = runner.invoke(app, ["grade", run, "--import-human", str(sheet), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["graders"] == ["human:w"]

    res = runner.invoke(app, ["agreement", run, "--resamples", "50", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    overall = next(p for p in report["pairs"] if p["scope"] == "overall")
    assert overall["n"] == 4 and overall["mae"]["estimate"] == 0
    written = AGREEMENT.read(store.root)
    assert written is not None and written.summary.model_dump(mode="json") == report
    assert written.options == {"resamples": 50, "seed": 0}


def test_user_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["grade", str(tmp_path / "nope"), "--json"])
    assert res.exit_code == 2
    store = helpers.make_run(tmp_path)
    res = runner.invoke(app, ["agreement", str(store.root)])
    assert res.exit_code == 2 and "no grades yet" in res.output
    res = runner.invoke(app, ["grade", str(store.root), "--rubric", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2 and "no such rubric file" in res.output
    res = runner.invoke(app, ["grade", str(store.root)])  # no --judge and none recorded with the run
    assert res.exit_code == 2 and "no judge model" in res.output
    assert not GRADES.exists(store.root)
