"""The individual output-quality checks: empty text, echo of the prompt, foreign script.

Each check is a plain, linear-time property of (a bounded window of) the text; `flags.py` combines
them with the looping checks of `analyze/quality/detect.py` and the final-answer search of grading.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

_ALNUM = re.compile(r"[^\W_]")
_NO_DIGITS = str.maketrans("", "", "0123456789")
_WORD = re.compile(r"[^\W_]+")


def window(text: str, max_chars: int) -> str:
    """`text` when it is at most 2·`max_chars` long, else its first and last `max_chars` characters.

    >>> window("abcd", 2)
    'abcd'
    >>> window("abcdefgh", 2).split()
    ['ab', 'gh']
    """
    if len(text) <= 2 * max_chars:
        return text
    return text[:max_chars] + "\n" + text[-max_chars:]


def is_empty(text: str | None) -> bool:
    """True when `text` has no letter or digit at all (nothing, whitespace, punctuation, NUL bytes).

    >>> is_empty(" ...\\n"), is_empty("0")
    (True, False)
    """
    return not text or _ALNUM.search(text) is None


def words(text: str) -> list[str]:
    """Lower-cased runs of letters and digits (`x^2 + 1` gives `x`, `2`, `1`)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class EchoMatch:
    """How much of a response is copied from each source, as shares of its words."""

    share: float
    source: str  # "system role", "prompt", or both joined with "and" when together they cover more
    n_words: int


def _shingles(tokens: list[str], k: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def _covered(tokens: list[str], source: set[tuple[str, ...]], k: int) -> int:
    """Words of `tokens` inside at least one k-gram that also occurs in the source (linear: a
    difference array marks each matching k-gram's span)."""
    marks = [0] * (len(tokens) + 1)
    for i in range(len(tokens) - k + 1):
        if tuple(tokens[i : i + k]) in source:
            marks[i] += 1
            marks[i + k] -= 1
    covered = running = 0
    for m in marks[:-1]:
        running += m
        covered += running > 0
    return covered


def _contains(haystack: list[str], needle: list[str]) -> bool:
    # Space-joined with sentinels: a whole-word contiguous match, in linear time.
    return f" {' '.join(needle)} " in f" {' '.join(haystack)} "


def echo_match(response: str, sources: dict[str, str], k: int, min_words: int) -> EchoMatch | None:
    """The share of `response`'s words that lie in a word k-gram also found in one of `sources`
    (name -> text); the best-covering source is named. A response shorter than k words counts as
    copied when it has at least `min_words` words and occurs word for word in a source.

    >>> m = echo_match("you are a student answer every question in full", {"prompt": "x",
    ...                "system role": "You are a student. Answer every question in full."}, 8, 4)
    >>> (round(m.share, 2), m.source)
    (1.0, 'system role')
    """
    tokens = words(response)
    if not tokens:
        return None
    best: EchoMatch | None = None
    union: set[tuple[str, ...]] = set()
    for name, text in sources.items():
        src = words(text)
        if len(tokens) < k:
            share = 1.0 if len(tokens) >= min_words and _contains(src, tokens) else 0.0
        else:
            grams = _shingles(src, k)
            union |= grams
            share = _covered(tokens, grams, k) / len(tokens)
        if best is None or share > best.share:
            best = EchoMatch(share=share, source=name, n_words=len(tokens))
    if len(tokens) >= k and len(sources) > 1:
        # A base model often copies the system role and then the question: count both together.
        share = _covered(tokens, union, k) / len(tokens)
        if best is not None and share > best.share:
            best = EchoMatch(share=share, source=" and ".join(sources), n_words=len(tokens))
    return best


def _latin_or_math(ch: str) -> bool:
    o = ord(ch)
    # Latin (basic, supplement, extended A/B, additional), Greek (math variables), letterlike
    # symbols and mathematical alphanumerics; everything else alphabetic is another script.
    return (o < 0x250 or 0x370 <= o < 0x400 or 0x1E00 <= o < 0x1F00 or 0x2100 <= o < 0x2150
            or 0x1D400 <= o < 0x1D800)


def _ideographic(ch: str) -> bool:
    o = ord(ch)
    # CJK ideographs, kana and hangul: one character is roughly one word.
    return 0x3040 <= o < 0x3100 or 0x3400 <= o < 0xA000 or 0xAC00 <= o < 0xD7B0 or 0xF900 <= o < 0xFB00


@dataclass(frozen=True)
class ScriptShare:
    """Words in Latin script (two letters or more: single letters are math variables) against words
    in other scripts (each CJK character counts as one word)."""

    latin: int
    foreign: int

    @property
    def share(self) -> float:
        """Share of foreign-script words (0 when there are no words)."""
        total = self.latin + self.foreign
        return self.foreign / total if total else 0.0


def script_share(text: str) -> ScriptShare:
    """Count Latin and foreign-script words of `text`.

    >>> script_share("Final answer: 12"), script_share("最终答案：12").foreign
    (ScriptShare(latin=2, foreign=0), 4)
    """
    latin = foreign = 0
    for run in _WORD.findall(text):
        if run.isascii():  # letters and digits only: Latin when it has two letters or more
            latin += len(run.translate(_NO_DIGITS)) >= 2
            continue
        letters = [ch for ch in run if ch.isalpha()]
        if not letters:
            continue
        ideo = sum(_ideographic(ch) for ch in letters)
        foreign += ideo
        rest = [ch for ch in letters if not _ideographic(ch)]
        if not rest:
            continue
        if all(_latin_or_math(ch) for ch in rest):
            latin += len(rest) >= 2
        else:
            foreign += 1
    return ScriptShare(latin=latin, foreign=foreign)


_LINE_LABEL = re.compile(r"^\s*(?:(?:step|line)\s*\d+\s*[:.)-]?|\d+\s*[.):-]|[-*•>]+)\s*", re.I)


def looping_line(lines: list[str], repeats: int, sentence_chars: int = 40) -> tuple[str, int] | None:
    """The line of `lines` that loops, with how often: a line of `sentence_chars`+ characters
    occurring `repeats` or more times, or a line occurring that often with the same line after it
    (`repeats` - 1 times at least: the line repeated back to back, or a block repeated). A short
    formulaic line before different work each time ("Calculate this:") does not loop.

    >>> looping_line(["Let me check.", "3 + 4 = 7"] * 4, 4)
    ('Let me check.', 4)
    >>> looping_line(["Calculate this:", "5 x 2 = 10", "Calculate this:", "6 x 2 = 12"] * 2, 4) is None
    True
    """
    counts: dict[str, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    often = {line for line, n in counts.items() if n >= repeats}
    if not often:
        return None
    for line in lines:
        if line in often and len(line) >= sentence_chars:
            return line, counts[line]
    pairs: dict[tuple[str, str], int] = {}
    for line, after in pairwise(lines):
        if line in often:
            pairs[(line, after)] = pairs.get((line, after), 0) + 1
    for (line, _), n in pairs.items():
        if n >= repeats - 1:
            return line, counts[line]
    return None


def repeated_numbered_line(text: str, min_chars: int, repeats: int) -> str | None:
    """A line that loops (`looping_line`) once its step number or bullet is removed, else None: the
    loop "1. Find x. 2. Find x. 3. Find x. ..." that a plain repeated-line count misses because the
    numbers differ.

    >>> repeated_numbered_line("1. Find x now\\n2. Find x now\\n3. Find x now", 8, 3)
    'Find x now'
    """
    lines = [line for line in (_LINE_LABEL.sub("", raw).strip() for raw in text.splitlines()) if len(line) >= min_chars]
    found = looping_line(lines, repeats)
    return found[0] if found is not None else None


@dataclass(frozen=True)
class PeriodicRun:
    """A chunk of text repeated back to back: where it starts, the chunk's length and how many times."""

    start: int
    unit: int
    repeats: int


def periodic_run(text: str, min_unit: int = 2, max_unit: int = 40, repeats: int = 6) -> PeriodicRun | None:
    """The first chunk of `min_unit`..`max_unit` characters repeated back to back `repeats` or more
    times ("ab ab ab ab ab ab"), whose chunk holds at least two different non-space characters (a
    rule of one character, or a run of one letter and spaces, is layout, not a loop); None when
    there is none. "First" is the leftmost start, then the shortest chunk.

    Time is linear in the text (for each chunk length, the text is compared with itself shifted by
    that length in whole-buffer operations), unlike a backtracking pattern such as `(.{2,40}?)\\1{5,}`.

    >>> periodic_run("x = 1; " + "so " * 7)
    PeriodicRun(start=6, unit=3, repeats=7)
    >>> periodic_run("-" * 80) is None, periodic_run("Step 1: x = 2. Step 2: y = 3.") is None
    (True, True)
    """
    n = len(text)
    top = min(max_unit, n // repeats)
    if top < min_unit:
        return None
    differences = _shifted_differences(text)
    best: PeriodicRun | None = None
    for p in range(min_unit, top + 1):
        need = (repeats - 1) * p  # equal pairs text[i] == text[i + p] in a row
        size = n - p
        end = size if best is None else min(size, best.start - 1 + need)  # must start left of the best
        if end < need:
            if best is not None:
                break
            continue
        diff = differences(p)
        stretch = b"\x00" * need
        pos = diff.find(stretch, 0, end)
        while pos != -1:
            unequal = _NONZERO.search(diff, pos)
            stop = unequal.start() if unequal is not None else size
            # one stretch holds rotations of one chunk (the same characters): check its first
            if len(set(text[pos : pos + p]) - _SPACES) > 1:
                best = PeriodicRun(start=pos, unit=p, repeats=(stop - pos + p) // p)
                break
            pos = diff.find(stretch, stop, end)
    return best


def _shifted_differences(text: str, use_numpy: bool | None = None) -> Callable[[int], bytes]:
    """A function of p giving one byte per position i < len(text) - p, zero exactly where
    text[i] == text[i + p].

    With NumPy already loaded (an analysis process) the characters are compared as an array; else
    (a light command such as `show`, which should not pay for importing NumPy) each byte plane of
    the UTF-32 text is shifted and XOR-ed as one big integer, the planes OR-ed together."""
    codes = text.encode("utf-32-le", "surrogatepass")
    if use_numpy if use_numpy is not None else "numpy" in sys.modules:
        import numpy as np

        arr = np.frombuffer(codes, dtype=np.uint32)
        return lambda p: (arr[p:] != arr[:-p]).tobytes()
    size = len(text)
    # the planes that are zero everywhere (all but the first for Latin-1 text) are left out
    planes = [plane for k in range(4) if (plane := codes[k::4]).strip(b"\x00") or k == 0]

    def differences(p: int) -> bytes:
        bits = 0
        for plane in planes:
            bits |= int.from_bytes(plane[p:], "little") ^ int.from_bytes(plane[:-p], "little")
        return bits.to_bytes(size - p, "little")

    return differences


_NONZERO = re.compile(b"[^\x00]")
_SPACES = frozenset(" \t\n\r\f\v\u00a0")
