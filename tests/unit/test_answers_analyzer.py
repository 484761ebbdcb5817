"""The `answers` analyzer over a small run on disk, through the analyzer registry."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mathlens.analyze.registry import get_analyzer

_HELPERS = Path(__file__).with_name("grading_run_helpers.py")
_spec = importlib.util.spec_from_file_location("grading_run_helpers", _HELPERS)
assert _spec is not None and _spec.loader is not None
helpers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(helpers)


def test_answers_analyzer_writes_verdicts_and_compliance(tmp_path: Path) -> None:
    store = helpers.make_run(tmp_path)
    summary = get_analyzer("answers")(store, {})
    assert summary["status"] == "ok" and summary["records"] == 4
    data = store.read_analysis("answers")
    assert data["rules"] == {"latex": True, "markup": True}  # from the exam system role
    acc = {s["configuration"]: s["accuracy"] for s in data["summary"]}
    assert acc == {"baseline": 1.0, "rag": 0.5}  # rag answers ln(e) with e
    by_key = {r["key"]: r for r in data["records"]}
    wrong = next(r for k, r in by_key.items() if "|rag|" in k and "|q1|" in k)
    assert wrong["status"] == "incorrect" and wrong["verdict"]["predicted"] == "e"
    assert wrong["verdict"]["comparison"]["reference_form"] is not None
    latex = next(r for k, r in by_key.items() if "|baseline|" in k and "|q2|" in k)
    assert latex["format"]["counts"]["latex_command"] == 1 and latex["format"]["counts"]["dollar_math"] == 1
    assert not latex["format"]["compliant"]
    (model,) = data["compliance"]
    assert model["responses"] == 4 and model["compliant"] == 3
