"""The scorer audit on third-party data: GSM8K model solutions whose human `is_correct` labels are
imported as the source's verdicts (`-F score=MODEL.is_correct`).

The `source-agreement` analysis then measures mathlens's answer check against people. Its 2x2
table must be exactly what the labels and the answers analysis give when counted here directly,
and the agreement high. (The answer checker was developed against this file: the figure is
in-sample.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT
from mathlens.runs.store import RunStore
from support.cli import cli_ok
from support.gsm8k import solutions_and_items

ROWS = 300
MODELS = ("6b_verification", "175b_finetuning")


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_the_audit_of_human_labels_counts_what_the_labels_say(model: str, shared_data: Path, tmp_path: Path) -> None:
    rows, source, items = solutions_and_items(shared_data, tmp_path, ROWS)
    run = tmp_path / "run"
    cli_ok("import", str(source), "--format", "jsonl", "--items", str(items), "--items-format", "gsm8k",
         "-F", "question=question", "-F", f"response={model}.solution", "-F", f"score={model}.is_correct",
         "--model", model, "--out", str(run))
    cli_ok("analyze", str(run), "--only", "answers,source-agreement")
    questions = RunStore(run).questions()
    label = {r["question"]: r[model]["is_correct"] for r in rows}
    counts = [0, 0, 0, 0]  # both correct, only the people say correct, only mathlens, neither
    for entry in ANSWERS.entries(run):
        human = label[questions[(entry.record.exam_id, entry.record.question_id)].prompt_text()]
        mine = entry.status == "correct"
        counts[0 if human and mine else 1 if human else 2 if mine else 3] += 1
    doc = SOURCE_AGREEMENT.read(run)
    assert doc is not None
    (row,) = doc.summary.rows
    assert [row.both_correct, row.source_only, row.mathlens_only, row.both_incorrect] == counts
    assert row.compared == ROWS and not row.left_out
    assert row.agreement.estimate is not None and row.agreement.estimate >= 0.97
    assert row.kappa.estimate is not None and row.kappa.low is not None and row.kappa.low > 0.9
