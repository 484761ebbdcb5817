"""Import and compare on third-party data: two models' GSM8K solutions with human `is_correct` labels.

The solutions of two models are imported as two runs (a JSONL file with dotted field mapping,
matched to the GSM8K test questions by their text), their final answers analysed, and the runs
compared. The human labels give the expected verdicts and the expected discordant pairs of
McNemar's test, so this checks import, matching, answer checking and pairing end to end against
labels mathlens did not produce. (The answer checker was developed against this file, so the
agreement figure is in-sample.)
"""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import binomtest

from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.runs.store import RunStore
from support.cli import cli_ok
from support.gsm8k import solutions_and_items

ROWS = 200
MODELS = ("6b_finetuning", "175b_verification")


def test_imported_gsm8k_solutions_match_the_human_labels_and_compare(shared_data: Path, tmp_path: Path) -> None:
    rows, source, items = solutions_and_items(shared_data, tmp_path, ROWS)
    label = {r["question"]: r for r in rows}
    runs = []
    for model in MODELS:
        run = tmp_path / model
        cli_ok("import", str(source), "--format", "jsonl", "--items", str(items), "--items-format", "gsm8k",
             "-F", "question=question", "-F", f"response={model}.solution", "--model", model, "--out", str(run))
        imported = RunStore(run).manifest().imported
        assert imported is not None and imported.records == ROWS
        cli_ok("analyze", str(run), "--only", "answers")
        questions = RunStore(run).questions()
        agree = 0
        for entry in ANSWERS.entries(run):
            text = questions[(entry.record.exam_id, entry.record.question_id)].prompt_text()
            correct = entry.verdict is not None and entry.verdict.correct
            agree += correct == label[text][model]["is_correct"]
        assert agree / ROWS >= 0.99, (model, agree)
        runs.append(run)

    report = json.loads(cli_ok("compare", str(runs[0]), str(runs[1]), "--json"))
    (comparison,) = report["comparisons"]
    assert comparison["pairing"]["paired"] == ROWS
    accuracy = next(m for m in comparison["metrics"] if m["metric"] == "accuracy")
    b = sum(r[MODELS[0]]["is_correct"] and not r[MODELS[1]]["is_correct"] for r in rows)
    c = sum(not r[MODELS[0]]["is_correct"] and r[MODELS[1]]["is_correct"] for r in rows)
    # discordant pairs within the checker's disagreement with the labels (at most 1% of each side)
    assert abs(accuracy["b"] - b) <= 2 and abs(accuracy["c"] - c) <= 2
    expected_p = binomtest(accuracy["b"], accuracy["b"] + accuracy["c"], 0.5).pvalue
    assert abs(accuracy["p_value"] - expected_p) < 1e-9
    assert accuracy["significant"] is (c > b)  # the 175B verifier beats the 6B fine-tune on these labels
