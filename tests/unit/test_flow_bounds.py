"""Bounds of the flow analysis on hostile text: what is read, what is not, and that it says so."""

from __future__ import annotations

from mathlens.analyze.flow import analyze_solution, segment_steps
from mathlens.analyze.flow.segment import MAX_STEP_CHARS, UNREAD_SENTENCE
from mathlens.analyze.verify.checker import has_checkable, verify_steps


def test_only_the_first_pieces_of_an_over_long_sentence_are_read() -> None:
    text = "Step 1: " + " + ".join(["\\frac{1}{2}"] * 3000) + " = 1500"
    steps = segment_steps(text)
    assert len(steps) > UNREAD_SENTENCE + 1
    assert [s.cut for s in steps[:UNREAD_SENTENCE]] == [False] * UNREAD_SENTENCE
    assert all(s.cut for s in steps[UNREAD_SENTENCE:])
    result = analyze_solution(text)
    unread = [s for s in result.steps if any("not checked" in n for n in s.notes)]
    assert len(unread) == len(steps) - UNREAD_SENTENCE
    assert all(not s.claims for s in unread)


def test_a_long_paragraph_of_a_real_solution_is_still_read_whole() -> None:
    sentence = "So 2 + 3 = 5 and 4 * 6 = 24 and 7 - 1 = 6 and " * 30 + "9 / 3 = 4."
    assert len(sentence) > MAX_STEP_CHARS and len(sentence) < UNREAD_SENTENCE * MAX_STEP_CHARS
    steps = segment_steps(sentence)
    assert not any(s.cut for s in steps)
    result = analyze_solution(sentence)
    assert result.steps[-1].verdict == "invalid"  # the slip at the very end is still found


def test_prose_without_math_skips_the_worker_but_keeps_the_chain_rules() -> None:
    assert not has_checkable("We note that the value is 2 and so it holds.")
    assert has_checkable("the remainder when 2006 is divided by 7 is 4")
    steps = verify_steps(["Let A = 2 + 3 = 5.", "We now think about it.", "Then A * 4 = 21."])
    assert [s.verdict for s in steps] == ["valid", "none", "invalid"]
    # an equation stated two steps back is no longer fresh: "x = 3" is not checked against it
    later = verify_steps(["Solve 2x + 1 = 7.", "We think.", "So x = 4."])
    fresh = verify_steps(["Solve 2x + 1 = 7.", "So x = 4."])
    assert [c.status for c in fresh[-1].claims] == ["definition", "invalid"]
    assert [c.status for c in later[-1].claims] == ["definition"]
