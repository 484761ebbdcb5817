"""The `answers` analyzer over a small run on disk, through the analyzer registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathlens.analyze.grading.analyzer import ANSWERS
from mathlens.analyze.registry import run_one
from mathlens.errors import UserError
from support import grading_run as helpers


def test_answers_analyzer_writes_verdicts_and_compliance(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    summary = run_one(store, "answers")
    assert summary.status == "ok" and summary.summary is not None
    assert sum(group.records for group in summary.summary.summary) == 4
    doc = ANSWERS.read(store.root)
    assert doc is not None
    assert doc.summary.rules == {"latex": True, "markup": True}  # from the exam system role
    acc = {(s.configuration, s.variant): s.accuracy for s in doc.summary.summary}
    assert acc == {("baseline", "original"): 1.0, ("rag", "original"): 0.5}  # rag answers ln(e) with e
    by_key = {e.record.key: e for e in ANSWERS.entries(store.root)}
    wrong = next(e for e in by_key.values() if e.record.configuration == "rag" and e.record.question_id == "q1")
    assert wrong.status == "incorrect" and wrong.verdict is not None and wrong.verdict.predicted == "e"
    assert wrong.verdict.comparison is not None and wrong.verdict.comparison.reference_form is not None
    latex = next(e for e in by_key.values() if e.record.configuration == "baseline" and e.record.question_id == "q2")
    assert latex.format is not None
    assert latex.format.counts["latex_command"] == 1 and latex.format.counts["dollar_math"] == 1
    assert not latex.format.compliant
    (model,) = doc.summary.compliance
    assert model.responses == 4 and model.compliant == 3


def test_answer_options_are_validated(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    with pytest.raises(UserError, match=r"unknown analyzer option 'rel_tl'.*Did you mean 'rel_tol'"):
        run_one(store, "answers", {"rel_tl": 0.1})
    with pytest.raises(UserError, match=r"timeout_s"):
        run_one(store, "answers", {"timeout_s": "soon"})
    assert not ANSWERS.exists(store.root)  # nothing was written
