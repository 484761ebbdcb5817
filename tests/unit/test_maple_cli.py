"""`mathlens maple-audit` and `mathlens maple` argument handling through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mathlens.cli.main import app

runner = CliRunner()


def processbench(path: Path) -> Path:
    rows = [
        {"id": "a", "problem": "1+1?", "steps": ["1+1 = 3", "So 3."], "label": 0, "final_answer_correct": False},
        {"id": "b", "problem": "2+2?", "steps": ["2+2 = 4", "So 4."], "label": -1, "final_answer_correct": True},
    ]
    path.write_text(json.dumps(rows))
    return path


def test_audit_json_with_a_scripted_judge(tmp_path: Path) -> None:
    data = processbench(tmp_path / "processbench_t.json")
    reply = json.dumps({"erroneous_steps": [{"step": 1, "labels": ["calculation_error"], "reason": "1+1 is 2"}]})
    out = tmp_path / "report.json"
    res = runner.invoke(app, ["maple-audit", str(data), "--judge", "mock/j", "-J", f"responses={json.dumps([reply])}",
                              "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    m = doc["metrics"]
    # Flags step 1 everywhere: right on the erroneous solution, a false alarm on the error-free one.
    assert (m["acc_erroneous"], m["acc_error_free"], m["f1"]) == (1.0, 0.0, 0.0)
    assert doc["label_confusion"] == {"calculation_error": {"before": 0, "at": 1, "after": 0, "error_free": 1}}
    assert len(json.loads(out.read_text())["items"]) == 2


def test_audit_records_unusable_judge_output_as_unjudged(tmp_path: Path) -> None:
    data = processbench(tmp_path / "processbench_t.json")
    res = runner.invoke(app, ["maple-audit", str(data), "--judge", "mock/echo", "--json"])
    assert res.exit_code == 0, res.output
    m = json.loads(res.stdout)["metrics"]
    assert m["n_unjudged"] == 2 and m["acc_erroneous"] == 0.0 and m["judged_f1"] is None


def test_audit_missing_data_is_a_user_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["maple-audit", str(tmp_path / "nope.json"), "--judge", "mock/j"])
    assert res.exit_code == 2 and "no such audit data file" in res.output


def test_maple_rejects_bad_options_before_doing_anything(tmp_path: Path) -> None:
    def said(res: Any) -> str:
        return " ".join(res.output.replace("│", " ").split())

    res = runner.invoke(app, ["maple", str(tmp_path), "--formula", "inverse"])
    assert res.exit_code == 2 and "'inverse' is not one of 'printed', 'prose'" in said(res)
    res = runner.invoke(app, ["maple", str(tmp_path), "--variant", "inverse"])  # the older name still works
    assert res.exit_code == 2 and "'inverse' is not one of 'printed', 'prose'" in said(res)
    res = runner.invoke(app, ["maple", str(tmp_path), "--vr", "magic"])
    assert res.exit_code == 2 and "'magic' is not one of 'flow', 'judge', 'reasoneval'" in said(res)
    res = runner.invoke(app, ["maple", str(tmp_path), "--floor", "2"])
    assert res.exit_code == 2 and "--floor 2.0: out of range (allowed: greater than 0 and at most 1)" in said(res)
    res = runner.invoke(app, ["maple", str(tmp_path)])
    assert res.exit_code == 2 and "not a run directory" in res.output
    res = runner.invoke(app, ["maple", str(tmp_path), "--discover-labels", "many"])
    assert res.exit_code == 2 and "--discover-labels" in res.output
