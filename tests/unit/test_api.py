"""The library (`mathlens.api`, and `mathlens.<name>`): light to import, the same checks as the
analyses and the command line, runs as typed documents and data frames."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mathlens
from mathlens import api
from mathlens.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ROOT / "tests" / "cases" / "importing" / "formats"


def test_import_mathlens_loads_nothing_else() -> None:
    code = ("import sys, mathlens; print([m for m in sys.modules if m.startswith(('mathlens.', 'sympy', 'pandas', "
            "'numpy', 'pydantic', 'spacy', 'typer'))])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_package_attributes_are_the_api() -> None:
    assert mathlens.check_answer is api.check_answer and mathlens.open_run is api.open_run
    assert mathlens.AnswerVerdict.__name__ == "AnswerVerdict" and mathlens.Flow.__name__ == "FlowResult"
    assert {"check_answer", "verify_steps", "flow", "open_run"} <= set(dir(mathlens))
    # completion in a notebook offers the library, not the package module's own imports
    assert not {"importlib", "annotations"} & set(dir(mathlens))
    assert set(dir(mathlens)) == set(mathlens.__all__)
    with pytest.raises(AttributeError, match="no attribute 'chek_answer'"):
        _ = mathlens.chek_answer  # type: ignore[attr-defined]


@pytest.mark.parametrize(("response", "reference", "status"), [
    # the same value written another way
    ("The answer is 12.0", "12", "correct"), ("so x = 1/2", "0.5", "correct"), ("$\\boxed{\\frac{3}{6}}$", "1/2",
                                                                              "correct"),
    ("The roots are 3 and -2.", ["{-2, 3}"], "correct"),
    # a different value
    ("9 - 4 = 15", "5", "incorrect"), ("The answer is 0.51", "1/2", "incorrect"),
    # several accepted answers: any one
    ("It diverges.", ["diverges", "does not converge"], "correct"),
])
def test_check_answer_is_the_analysis_check(response: str, reference: str | list[str], status: str) -> None:
    from mathlens.analyze.grading.equivalence import check_answer as internal
    from mathlens.items.schema import Question

    got = mathlens.check_answer(response, reference)
    assert got.status == status
    refs = [reference] if isinstance(reference, str) else reference
    assert got == internal(response, Question(id="q", text="(question)", answers=refs))


def test_check_answer_multiple_choice_by_label_or_list() -> None:
    by_list = mathlens.check_answer("Answer: (C)", "12", choices=["10", "11", "12"])
    by_map = mathlens.check_answer("Answer: (C)", "12", choices={"A": "10", "B": "11", "C": "12"})
    assert by_list.status == by_map.status == "correct" and by_list.choice is not None
    assert mathlens.check_answer("Answer: (A)", "12", choices=["10", "11", "12"]).status == "incorrect"


def test_check_answer_with_a_reference_per_part_is_the_exam_check() -> None:
    from mathlens.analyze.grading.equivalence import check_answer as internal
    from mathlens.items.schema import Part, Question

    response = "(b) 12\n(a) 5"
    got = mathlens.check_answer(response, {"a": "5", "b": ["12", "twelve"]})
    assert got.status == "correct" and [(p.label, p.status) for p in got.parts] == [("a", "correct"), ("b", "correct")]
    exam = Question(id="q", text="(question)", parts=[Part(label="a", text="part (a)", answers=["5"]),
                                                      Part(label="b", text="part (b)", answers=["12", "twelve"])])
    assert got == internal(response, exam)
    wrong = mathlens.check_answer("(a) 5\n(b) 13", {"a": "5", "b": "12"})
    assert wrong.status == "incorrect" and [p.status for p in wrong.parts] == ["correct", "incorrect"]
    missing = mathlens.check_answer("(a) 5", {"a": "5", "b": "12"})
    assert missing.status != "correct" and missing.parts[1].status != "correct"


def test_verify_steps_agrees_with_the_flow_analysis() -> None:
    solution = "Step 1: 3 * 4 = 12.\nStep 2: 12 + 5 = 18.\nStep 3: so the answer is 18."
    checks = mathlens.verify_steps(solution)
    assert [c.verdict for c in checks][:2] == ["valid", "invalid"]
    assert checks[1].claims[0].expected == "17" and checks[1].invalid and checks[1].confidence == "high"
    assert solution[checks[1].start:checks[1].end] == checks[1].text
    flowed = mathlens.flow(solution)
    assert [s.verdict for s in flowed.steps] == [c.verdict for c in checks]
    assert flowed.first_invalid_step == 1


def test_verify_steps_uses_the_question_definitions() -> None:
    with_q = mathlens.verify_steps("f(2) = 9", question="f(x) = x^2 + 5")
    assert with_q[0].verdict == "valid"
    assert mathlens.verify_steps("f(2) = 8", question="f(x) = x^2 + 5")[0].verdict == "invalid"
    assert mathlens.verify_steps("") == [] and mathlens.verify_steps("   ") == []


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mathlens.analyze.registry import run_analyzers
    from mathlens.runs.importing.importer import ImportRequest, import_run
    from mathlens.runs.store import RunStore

    out = tmp_path_factory.mktemp("api") / "run"
    root = import_run(ImportRequest(source=FORMATS / "inspect_match_audit.json", items=[], out=out,
                                    reader="mathlens")).root
    run_analyzers(RunStore(root), ["answers", "source-agreement"])
    return root


def test_open_run_reads_records_questions_and_typed_documents(run_dir: Path) -> None:
    from mathlens.analyze.grading.answer_records import ANSWERS, AnswersSummary

    run = mathlens.open_run(run_dir)
    assert len(list(run.records())) == 7 and len(run.questions()) == 7
    assert run.analyses() == ["answers", "source-agreement"]
    answers = run.analysis("answers")
    assert isinstance(answers.summary, AnswersSummary) and answers.spec is ANSWERS
    assert run.analysis(ANSWERS).summary == answers.summary
    assert {e.record.question_id for e in answers.entries()} == {q.id for q in run.questions()}


def test_frames_flatten_entries_with_the_record_first(run_dir: Path) -> None:
    run = mathlens.open_run(run_dir)
    frame = run.frame("answers")
    assert list(frame.columns[:7]) == ["key", "model", "configuration", "exam_id", "question_id", "variant", "repeat"]
    assert "verdict.predicted" in frame.columns and len(frame) == 7
    row = frame.set_index("question_id").loc["half"]
    entry = next(e for e in run.analysis("answers").entries() if e.record.question_id == "half")
    assert entry.verdict is not None and row["verdict.predicted"] == entry.verdict.predicted
    audit = run.frame("source-agreement")
    assert sorted(audit[audit["agree"] == False]["question_id"]) == ["add", "half", "minus"]  # noqa: E712
    records = run.frame("records")
    assert len(records) == 7 and json.loads(json.dumps(records["source_scores"].iloc[0]))[0]["scorer"] == "match"


def test_missing_and_unknown_documents_and_non_runs_are_named(run_dir: Path, tmp_path: Path) -> None:
    run = mathlens.open_run(run_dir)
    with pytest.raises(UserError, match=r"has no flow analysis: run `mathlens analyze .*`"):
        run.analysis("flow")
    with pytest.raises(UserError, match="Did you mean 'answers'"):
        run.frame("answer")
    with pytest.raises(UserError, match="manifest"):
        mathlens.open_run(tmp_path)


def test_documents_lists_every_document_a_run_can_hold() -> None:
    found: set[str] = set()
    for path in (ROOT / "src" / "mathlens" / "analyze").rglob("*.py"):
        for match in re.finditer(r'= DocumentSpec\(\s*"([^"]+)"', path.read_text(encoding="utf-8")):
            found.add(match.group(1))
    # `compare` is written into the folder `mathlens compare --out` names, not into a run
    assert set(api.DOCUMENTS) == found - {"compare"}
    for name in api.DOCUMENTS:
        assert api.document_spec(name).name == name


@pytest.mark.slow
def test_a_type_checker_sees_the_types_of_the_package_attributes(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy comes with the dev extra")
    use = tmp_path / "use.py"
    use.write_text("import mathlens\n"
                   "reveal_type(mathlens.check_answer('2', '2'))\n"
                   "reveal_type(mathlens.open_run('r').analysis('answers').summary)\n"
                   "mathlens.verify_steps(3)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           str(use)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert 'Revealed type is "mathlens.analyze.grading.verdicts.AnswerVerdict"' in done.stdout
    assert 'Revealed type is "mathlens.analyze.grading.answer_records.AnswersSummary"' in done.stdout
    assert 'Argument 1 to "verify_steps" has incompatible type "int"; expected "str"' in done.stdout
