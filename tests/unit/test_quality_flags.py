"""Output-quality flags, driven by the case table tests/cases/quality/flags.yaml, plus the likely
cause, the run-level warning and bounded time on hostile input."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from mathlens.analyze.quality import (
    DEGENERATE_FLAGS,
    QualityFlags,
    degenerate_warning,
    flag_counts,
    flags_raised,
    likely_cause,
    quality_flags,
)
from mathlens.items.schema import Part, Question
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE

TABLE = yaml.safe_load((Path(__file__).resolve().parents[1] / "cases" / "quality" / "flags.yaml")
                       .read_text(encoding="utf-8"))
DEFAULTS: dict[str, Any] = TABLE.pop("defaults")
ALL_FLAGS = (*DEGENERATE_FLAGS, "truncated", "no_final_answer")


def _cases() -> list[Any]:
    return [pytest.param(case, id=f"{group}-{i}") for group, cases in TABLE.items() for i, case in enumerate(cases)]


def _flags(case: dict[str, Any]) -> QualityFlags:
    return quality_flags(case["response"], system_role=case.get("system_role", DEFAULTS["system_role"]),
                         prompt=case.get("prompt", DEFAULTS["prompt"]),
                         finish_reason=case.get("finish_reason", DEFAULTS["finish_reason"]))


@pytest.mark.parametrize("case", _cases())
def test_flag_cases(case: dict[str, Any]) -> None:
    flags = _flags(case)
    expected = set(case["flags"])
    assert {f for f in ALL_FLAGS if getattr(flags, f)} == expected, flags.details
    assert flags.degenerate is case["degenerate"]
    if "detail" in case:
        assert any(case["detail"] in d for d in flags.details), flags.details
    # every flag that is set says why
    assert {d.split(":")[0] for d in flags.details} == expected


def test_every_flag_has_positive_and_negative_cases() -> None:
    results = [(_flags(c), c) for cases in TABLE.values() for c in cases]
    for name in ALL_FLAGS:
        assert any(getattr(f, name) for f, _ in results), name
        assert any(not getattr(f, name) for f, _ in results), name
    assert sum(len(v) for v in TABLE.values()) >= 40


def test_the_project_system_role_copied_by_a_base_model_is_an_echo() -> None:
    # What the embedded base model does: continue the role text, with small slips, to the cap.
    copy = EXAM_SYSTEM_ROLE.replace("undergraduate", "graduate").replace("in full", "completely")
    flags = quality_flags(copy + "\n" + copy[:300], system_role=EXAM_SYSTEM_ROLE, prompt="Find f'(2) for f(x) = x^3.",
                          finish_reason="length")
    assert flags.echo and flags.degenerate and flags.truncated
    assert any("system role" in d for d in flags.details)


def test_stored_flags_round_trip_and_degenerate_is_derived() -> None:
    flags = QualityFlags(echo=True, truncated=True, details=["echo: 90% of the response copies the prompt"])
    again = QualityFlags.model_validate_json(flags.model_dump_json())
    assert again == flags and again.degenerate
    assert not QualityFlags(truncated=True, no_final_answer=True).degenerate


def test_likely_cause_names_the_dominant_failure() -> None:
    echo, loop, empty = QualityFlags(echo=True), QualityFlags(repetition_loop=True), QualityFlags(empty=True)
    assert "copy the prompt or system role" in likely_cause([echo, echo, echo, loop])
    assert "base (not instruction-tuned)" in likely_cause([echo, echo, QualityFlags()])
    assert likely_cause([loop, loop, echo]).startswith("most responses loop")
    assert "empty" in likely_cause([empty, empty])
    assert "not in Latin script" in likely_cause([QualityFlags(wrong_script=True)])
    # a minority failure is named as the most common one, with its count
    minority = likely_cause([loop, QualityFlags(), QualityFlags()])
    assert "1 of 3" in minority and "loop" in minority
    assert "token cap" in likely_cause([QualityFlags(truncated=True), QualityFlags(truncated=True)])
    assert "no dominant failure" in likely_cause([QualityFlags()])


def test_warning_only_above_half() -> None:
    echo, ok = QualityFlags(echo=True), QualityFlags()
    assert degenerate_warning([echo, ok]) is None  # exactly half: no warning
    assert degenerate_warning([]) is None and degenerate_warning([None, None]) is None
    warning = degenerate_warning([echo, echo, ok, None])
    assert warning is not None and warning.startswith("2 of 3 responses (67%) are degenerate")
    assert "copy the prompt or system role" in warning


def test_flag_counts() -> None:
    counts = flag_counts([QualityFlags(echo=True, repetition_loop=True, truncated=True), QualityFlags(),
                          QualityFlags(no_final_answer=True), None])
    assert counts == {"flagged": 3, "degenerate": 1, "empty": 0, "echo": 1, "repetition_loop": 1,
                      "wrong_script": 0, "truncated": 1, "no_final_answer": 1}
    # in words, as `show` and the sample note print them: raised flags only, in the counted order
    assert flags_raised(counts) == "echo 1, repetition loop 1, truncated 1, no final answer 1"
    assert flags_raised(flag_counts([QualityFlags(), None])) == ""


HOSTILE = {
    "one character": "a" * 1_000_000,
    "nested parentheses": "(" * 500_000 + ")" * 500_000,
    "nul bytes": "\0" * 1_000_000,
    "role repeated": (EXAM_SYSTEM_ROLE + "\n") * 2_500,
    "near-periodic": "".join(f"x{i % 97}y{i % 89} " for i in range(150_000)),
    "braces and boxes": "\\boxed{" * 100_000 + "}" * 100_000,
    "cjk": "梯度" * 500_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_bounded_time_on_a_megabyte(name: str) -> None:
    text = HOSTILE[name]
    assert len(text) >= 700_000
    start = time.perf_counter()
    flags = quality_flags(text, system_role=EXAM_SYSTEM_ROLE, prompt=text[:200_000], finish_reason="length")
    elapsed = time.perf_counter() - start
    # Generous bound (slow shared machines); an unbounded quadratic stage would take minutes here.
    assert elapsed < 10, f"{name}: {elapsed:.1f}s"
    assert flags.truncated and flags.degenerate


def test_many_unclosed_boxes_stay_fast() -> None:
    # Under the examined window, so the final-answer search sees all of it: each box once scanned
    # to the end of the text would be quadratic.
    text = "\\boxed{" * 5_000
    start = time.perf_counter()
    flags = quality_flags(text, system_role="", prompt="q", finish_reason="length")
    assert time.perf_counter() - start < 5
    assert flags.no_final_answer and flags.truncated


_TWO_PARTS = Question(id="p", text="f(x) = x^3 - 6x^2 + 9x + 2.",
                      parts=[Part(label="a", text="critical numbers?", answer="x = 1, x = 3"),
                             Part(label="b", text="local maximum?", answer="(1, 6)")])
_SECTION = ("Work.\n### Final answer\n\nThe critical numbers are:\n\\[ x = 1 \\quad \\text{and} \\quad x = 3 \\]"
            "\n\nThe local maximum is at:\n\\[ (1, 6) \\]")


@pytest.mark.parametrize(("response", "finish", "flagged"), [
    (_SECTION, "stop", False),  # every part answered in the answer section: a final answer is stated
    ("(a) The critical numbers are x = 1 and x = 3.\n(b) The maximum is at the point (1, 6).", "stop", False),
    ("(a) We first need f'(x), and then\n(b) we check the sign on both sides of each", "stop", True),
    ("(a) Critical numbers: x = 1 and x = 3.\n(b) Now f(1) = 1 - 6 + 9 + 2 and then", "length", True),
])
def test_a_question_with_parts_states_its_final_answer_in_its_parts(response: str, finish: str,
                                                                   flagged: bool) -> None:
    """With graded parts, the parts the answer check reads are the final answer when each is stated
    (the flag is then set only when the token cap cut the last part's work); otherwise the flag
    follows the reading of the whole response."""
    flags = quality_flags(response, system_role="Answer.", prompt="q", finish_reason=finish, question=_TWO_PARTS)
    assert flags.no_final_answer is flagged, flags.details
