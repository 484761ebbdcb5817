"""The looping checks are linear-time and exact: `periodic_run` against a brute-force search, and the
unreadable-character count against the per-character rule it replaces."""

from __future__ import annotations

import random
import time

import pytest

from mathlens.analyze.quality.checks import periodic_run, script_share
from mathlens.analyze.quality.detect import _MATHISH, _UNREADABLE, incoherence

SPACES = set(" \t\n\r\f\v\u00a0")


def _brute(text: str) -> tuple[int, int] | None:
    """Leftmost start, then shortest chunk of 2-40 characters repeated 6+ times back to back whose
    chunk has two different non-space characters: by trying every start and length."""
    for s in range(len(text)):
        for p in range(2, 41):
            if s + 6 * p > len(text):
                break
            if all(text[s + i] == text[s + i + p] for i in range(5 * p)) and len(set(text[s:s + p]) - SPACES) > 1:
                return s, p
    return None


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        alphabet = rng.choice(["ab", "abc", "ab ", "a b\n", "xyz12 ", "é∑ 1"])
        parts = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                unit = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
                parts.append(unit * rng.randint(1, 8))
            else:
                parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 15))))
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("use_numpy", [True, False])
def test_periodic_run_finds_exactly_what_a_brute_force_search_finds(seed: int, use_numpy: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import mathlens.analyze.quality.checks as checks

    real = checks._shifted_differences
    monkeypatch.setattr(checks, "_shifted_differences", lambda text: real(text, use_numpy))
    found = 0
    for text in _texts(seed, 400):
        run = periodic_run(text)
        expected = _brute(text)
        assert ((run.start, run.unit) if run else None) == expected, text
        if run is not None:
            found += 1
            unit = text[run.start:run.start + run.unit]
            assert text[run.start:run.start + run.unit * run.repeats] == unit * run.repeats
            assert not text[run.start + run.unit * run.repeats:].startswith(unit)  # every repeat counted
    assert found > 50  # the generated texts hold loops as well as near misses


def test_loops_and_non_loops() -> None:
    assert periodic_run("x = 1; " + "so " * 7) is not None
    assert periodic_run("so " * 5 + "x") is None  # five times is not a loop
    assert periodic_run("-" * 500) is None and periodic_run("= " * 300) is None  # rules and layout
    assert periodic_run("Step 1: 2 + 3 = 5.\nStep 2: 5 * 2 = 10.\nFinal answer: 10") is None
    assert periodic_run("1 2 " * 6)  # "1 2 " has two different characters


@pytest.mark.parametrize("text", [
    ("We note that the value is 2 and so it holds. " * 1000)[:40000],  # a period of 46: just over the limit
    (("ab" * 5 + "c") * 4000)[:40000],
    "a " * 20000,
    "".join(random.Random(5).choice("0123456789") for _ in range(40000)),
])
def test_forty_thousand_characters_take_milliseconds(text: str) -> None:
    start = time.perf_counter()
    for _ in range(3):
        periodic_run(text)
        incoherence(text)
    assert (time.perf_counter() - start) / 3 < 1.0  # a budget with slack for a loaded machine


def test_unreadable_characters_are_counted_as_the_per_character_rule_does() -> None:
    rng = random.Random(7)
    chars = [chr(rng.randint(0, 0x10FFFF)) for _ in range(20000)] + [chr(c) for c in range(0x3000)]
    for ch in chars:
        assert (_UNREADABLE.fullmatch(ch) is None) == (ch.isalnum() or ch.isspace() or ch in _MATHISH), repr(ch)


def _script_share_per_character(text: str) -> tuple[int, int]:
    """The per-character counting `script_share` does for non-ASCII words, applied to every word."""
    import re

    from mathlens.analyze.quality.checks import _ideographic, _latin_or_math

    latin = foreign = 0
    for run in re.findall(r"[^\W_]+", text):
        letters = [ch for ch in run if ch.isalpha()]
        if not letters:
            continue
        foreign += sum(_ideographic(ch) for ch in letters)
        rest = [ch for ch in letters if not _ideographic(ch)]
        if rest:
            if all(_latin_or_math(ch) for ch in rest):
                latin += len(rest) >= 2
            else:
                foreign += 1
    return latin, foreign


def test_script_share_counts_as_the_per_character_rule() -> None:
    rng = random.Random(11)
    pieces = ["Step", "x2", "12", "ab3", "so", "x", "答案", "résumé", "Ωmega", "привет", "a1b", "ß", "9z", "𝑥𝑦"]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        got = script_share(text)
        assert (got.latin, got.foreign) == _script_share_per_character(text), text
    share = script_share("Step 1: x2 = 4, so x is 2 and the answer holds.")
    assert (share.latin, share.foreign) == (7, 0)  # Step, so, is, and, the, answer, holds (x, x2: one letter)
