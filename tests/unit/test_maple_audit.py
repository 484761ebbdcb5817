"""Judge audit metrics on hand-made cases, the data loaders, and a scripted audit run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.maple.audit import (
    audit_metrics,
    harmonic_f1,
    label_confusion,
    load_audit_data,
    predicted_first_error,
    run_audit,
)
from mathlens.analyze.maple.judge import JudgedStep, StepJudgement
from mathlens.analyze.maple.labels import default_labels
from mathlens.errors import UserError

CASES = yaml.safe_load((Path(__file__).resolve().parents[1] / "cases" / "maple" / "audit.yaml").read_text())
FIELDS = (
    "acc_erroneous",
    "acc_error_free",
    "f1",
    "judged_acc_erroneous",
    "judged_acc_error_free",
    "judged_f1",
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_metrics_on_hand_made_cases(name: str) -> None:
    case = CASES[name]
    m = audit_metrics(case["human"], case["predicted"])
    for field in FIELDS:
        expected, got = case[field], getattr(m, field)
        assert (got is None) if expected is None else got == pytest.approx(expected), field
    assert m.erroneous_outcomes == case["erroneous_outcomes"]
    assert m.error_free_outcomes == case["error_free_outcomes"]
    assert m.n_unjudged == sum(p is None for p in case["predicted"])


def test_harmonic_f1() -> None:
    assert harmonic_f1(0.5, 0.5) == 0.5
    assert harmonic_f1(1.0, 0.0) == 0.0
    assert harmonic_f1(None, 1.0) is None


def judged(*steps: tuple[int, list[str]]) -> StepJudgement:
    return StepJudgement(status="ok", steps=[JudgedStep(step=s, labels=lab) for s, lab in steps])


def test_predicted_first_error_is_zero_based_lowest_step() -> None:
    assert predicted_first_error(judged((4, ["a"]), (2, ["b"]))) == 1
    assert predicted_first_error(judged()) == -1
    assert predicted_first_error(StepJudgement(status="unjudged")) is None


def test_label_confusion_positions() -> None:
    pairs = [
        (2, judged((1, ["calc"]), (3, ["calc", "method"]), (4, ["method"]))),  # before, at, at, after
        (-1, judged((2, ["calc"]))),  # error-free solution
        (0, StepJudgement(status="unjudged")),
    ]
    assert label_confusion(pairs) == {
        "calc": {"before": 1, "at": 1, "after": 0, "error_free": 1},
        "method": {"before": 0, "at": 1, "after": 1, "error_free": 0},
    }


def write_processbench(path: Path, n: int) -> None:
    rows = [
        {
            "id": f"pb-{i}",
            "problem": f"p{i}",
            "steps": ["s1", "s2", "s3"],
            "label": (i % 3) - 1,
            "final_answer_correct": i % 3 == 0,
        }
        for i in range(n)
    ]
    path.write_text(json.dumps(rows))


def test_loaders(tmp_path: Path) -> None:
    pb = tmp_path / "processbench_x.json"
    write_processbench(pb, 9)
    samples = load_audit_data(pb)
    assert [s.first_error for s in samples[:3]] == [-1, 0, 1] and samples[0].source == "processbench"
    bbm = tmp_path / "bbm.jsonl"
    bbm.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "input": "1+1 =",
                    "steps": ["1+1 = 3", "So 3"],
                    "target": "2",
                    "answer": "3",
                    "mistake_index": 0,
                },
                {"input": "2+2 =", "steps": ["2+2 = 4"], "target": "4", "answer": "4", "mistake_index": None},
            ]
        )
        + "\n"
    )
    b = load_audit_data(bbm)
    assert [(s.first_error, s.reference_answer) for s in b] == [(0, "2"), (-1, "4")]
    limited = load_audit_data(pb, limit=4, seed=1)
    assert len(limited) == 4 and limited == load_audit_data(pb, limit=4, seed=1)


def test_loader_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such audit data"):
        load_audit_data(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "no steps"}]))
    with pytest.raises(UserError, match="not ProcessBench"):
        load_audit_data(bad)


async def test_scripted_audit_run(tmp_path: Path, mock_model: Any) -> None:
    pb = tmp_path / "processbench_x.json"
    write_processbench(pb, 3)  # labels -1, 0, 1
    samples = load_audit_data(pb)
    # The judge always flags step 2 (index 1): right only for the third sample.
    flag2 = json.dumps({"erroneous_steps": [{"step": 2, "labels": ["calculation_error"], "reason": "r"}]})
    metrics, confusion, items = await run_audit(samples, mock_model(responses=[flag2]), default_labels())
    assert [i.predicted_first_error for i in items] == [1, 1, 1]
    assert metrics.acc_erroneous == 0.5 and metrics.acc_error_free == 0.0 and metrics.f1 == 0.0
    assert confusion == {"calculation_error": {"before": 0, "at": 1, "after": 1, "error_free": 1}}
