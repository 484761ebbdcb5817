"""Judge-free detectors of incoherent output and of a missing solution: the output-quality flags
(`flags.py`) use them, and so do two MAPLE labels ("incoherent output", "no solution").

Small models loop ("the the the ...", one line over and over, a digit run to the token cap); a
judge model is not needed to see that, and a weak judge often misses it. Each check below is a
plain property of the text with a threshold chosen to leave ordinary solutions alone; every hit
says which check fired and where, so a reader can see why a step was labelled.

Checks (any one flags a text as incoherent):

* `char_run`: one non-space character repeated `char_run` (30) or more times in a row.
* `period`: a chunk of 2-40 characters repeated back to back 6 or more times ("ababab...").
* `ngram`: in a text of at least 24 words, more than half of the word 4-grams repeat an earlier one.
* `line`: one line of 8+ characters appearing 4 or more times with the same line after it (back to
  back, or a block repeated: `checks.looping_line`), or one line of 40+ characters (a sentence)
  appearing 4 or more times.
  A short formulaic line before different work each time ("Calculate this:", "Substituting the
  given values:") is how some models lay out every step, not a loop.
* `garbled`: in a text of 40+ characters, under 60% of the characters are letters, digits,
  spaces or common math punctuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mathlens.rounding import percent

_MATHISH = set("+-*/^=<>()[]{}.,;:!?'\"|\\$%&_~#@`")
#: a character that is not a letter, digit, space or common math punctuation (`str.isalnum` and
#: `str.isspace` are what `\w` and `\s` match, `_` included)
_UNREADABLE = re.compile(r"[^\w\s+\-*/^=<>()\[\]{}.,;:!?'\"|\\$%&~#@`]")


@dataclass(frozen=True)
class IncoherenceConfig:
    """Thresholds of the incoherence checks (see the module docstring)."""

    char_run: int = 30
    ngram_min_words: int = 24
    ngram_share: float = 0.5
    line_repeats: int = 4
    line_min_chars: int = 8
    line_sentence_chars: int = 40
    garbled_min_chars: int = 40
    garbled_share: float = 0.6


@dataclass(frozen=True)
class Hit:
    """One check that fired: which one, and a short excerpt of what it saw."""

    check: str
    detail: str


def _char_run(text: str, limit: int) -> Hit | None:
    m = re.search(r"(\S)\1{" + str(limit - 1) + ",}", text)
    return Hit("char_run", f"{m.group(1)!r} repeated {len(m.group(0))} times") if m else None


def _period(text: str) -> Hit | None:
    # Whitespace runs and rules made of one character are handled elsewhere (or are layout); the
    # search is linear in the text (`periodic_run`), never a backtracking pattern. Imported here:
    # the quality package imports this module.
    from mathlens.analyze.quality.checks import periodic_run

    run = periodic_run(text)
    if run is None:
        return None
    unit = text[run.start : run.start + run.unit]
    return Hit("period", f"{unit[:20]!r} repeated {run.repeats} times")


def repeated_ngram_share(words: list[str], n: int = 4) -> float:
    """Share of the word n-grams of `words` that repeat an earlier n-gram (0 when there are none)."""
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    repeats = 0
    for g in grams:
        if g in seen:
            repeats += 1
        seen.add(g)
    return repeats / len(grams)


def _ngram(text: str, cfg: IncoherenceConfig) -> Hit | None:
    words = text.lower().split()
    if len(words) < cfg.ngram_min_words:
        return None
    share = repeated_ngram_share(words)
    return Hit("ngram", f"{percent(share)} of word 4-grams repeat") if share > cfg.ngram_share else None


def _line(text: str, cfg: IncoherenceConfig) -> Hit | None:
    # Imported here: the quality package imports this module.
    from mathlens.analyze.quality.checks import looping_line

    lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= cfg.line_min_chars]
    found = looping_line(lines, cfg.line_repeats, cfg.line_sentence_chars)
    return Hit("line", f"{found[0][:40]!r} appears {found[1]} times") if found is not None else None


def _garbled(text: str, cfg: IncoherenceConfig) -> Hit | None:
    if len(text) < cfg.garbled_min_chars:
        return None
    ok = len(text) - sum(1 for _ in _UNREADABLE.finditer(text))
    share = ok / len(text)
    return Hit("garbled", f"only {percent(share)} readable characters") if share < cfg.garbled_share else None


def incoherence(text: str, cfg: IncoherenceConfig | None = None) -> list[Hit]:
    """Every incoherence check that fires on `text` (empty when the text looks like prose or math).

    >>> [h.check for h in incoherence("so " * 40)]
    ['period', 'ngram']
    >>> incoherence("Step 1: 2 + 3 = 5. Final answer: 5")
    []
    """
    cfg = cfg or IncoherenceConfig()
    checks = (
        _char_run(text, cfg.char_run),
        _period(text),
        _ngram(text, cfg),
        _line(text, cfg),
        _garbled(text, cfg),
    )
    return [h for h in checks if h is not None]


#: How grading's answer extraction found an answer that the solution itself states as its result
#: (the looser fall-backs - last statement, last number, whole text - do not count).
STATED_ANSWER = ("boxed", "answer_line", "answer_is", "therefore", "last_equation")
#: An extracted "answer" longer than this is prose (or a loop), not an answer.
MAX_ANSWER_WORDS = 12


def has_final_answer(how: str, answer: str | None) -> bool:
    """True when the solution states a final answer (see `STATED_ANSWER`, `MAX_ANSWER_WORDS`).

    >>> has_final_answer("answer_line", "5"), has_final_answer("last_number", "5")
    (True, False)
    >>> has_final_answer("therefore", "so " * 20)
    False
    """
    if how not in STATED_ANSWER or answer is None or not answer.strip():
        return False
    return len(answer.split()) <= MAX_ANSWER_WORDS


def is_no_solution(text: str | None, has_final_answer: bool) -> bool:
    """True when a solution gives no final answer (or is empty): the "no solution" label."""
    return not (text or "").strip() or not has_final_answer
