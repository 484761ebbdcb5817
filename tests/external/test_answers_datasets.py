"""Answer checking on third-party data: GSM8K human labels and MATH500 reference answers."""

from __future__ import annotations

import json
from pathlib import Path

from mathlens.analyze.grading.equivalence import check_answer, equivalent
from mathlens.analyze.readers.answers import extract_final_answer
from mathlens.items.loaders import load_items
from mathlens.items.schema import Question


def test_gsm8k_human_labels_agree(shared_data: Path) -> None:
    lines = (shared_data / "gsm8k_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    agree = total = 0
    for n, line in enumerate(lines):
        row = json.loads(line)
        reference = extract_final_answer(row["ground_truth"]).text
        assert reference, row["ground_truth"][-40:]
        question = Question(id=f"q{n}", text=row["question"], answers=[reference])
        for key in ("6b_finetuning", "175b_verification"):
            total += 1
            agree += (check_answer(row[key]["solution"], question).status == "correct") == row[key]["is_correct"]
    assert agree / total >= 0.99


def test_math500_boxed_answers_equal_their_answer_field(shared_data: Path) -> None:
    exam = load_items(str(shared_data / "math500_test.jsonl"), fmt="math")
    misses = []
    for q in exam.questions:
        assert q.solution is not None
        found = extract_final_answer(q.solution)
        assert found.how == "boxed", q.id
        if not equivalent(found.text or "", q.answers[0]).equal:
            misses.append(q.id)
    assert len(misses) <= 5, misses


def test_gsm8k_loader_references_check_as_correct(shared_data: Path) -> None:
    exam = load_items(str(shared_data / "gsm8k_test.jsonl"), fmt="gsm8k", limit=100)
    for q in exam.questions:
        assert q.solution is not None
        # the reference solution, ended with its own answer line, must check as correct
        assert check_answer(f"{q.solution}\nFinal answer: {q.answers[0]}", q).status == "correct", q.id


def test_processbench_solutions_agree_with_their_final_answer_labels(shared_data: Path) -> None:
    # Real solutions by open models (ProcessBench) whose problem is a GSM8K test question: the
    # verdict on the whole solution against GSM8K's answer agrees with `final_answer_correct`.
    refs = {json.loads(line)["question"].strip(): json.loads(line)["answer"].split("####")[-1].strip()
            for line in (shared_data / "gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()}
    rows = json.loads((shared_data / "processbench_gsm8k.json").read_text(encoding="utf-8"))
    agree = total = 0
    for row in rows[:200]:
        reference = refs.get(row["problem"].strip())
        if reference is None:
            continue
        total += 1
        verdict = check_answer("\n\n".join(row["steps"]), Question(id=row["id"], text=row["problem"],
                                                                  answers=[reference]))
        agree += (verdict.status == "correct") == bool(row["final_answer_correct"])
    assert total >= 150 and agree / total >= 0.97, (agree, total)
