"""Output-quality flags of one response, computed without a model.

Small models often produce output that is not an attempt at the question: a copy of the system
role or of the prompt until the token cap (a base model continuing its prompt), a loop, nothing at
all, or text in another script. Metrics computed on such output (robustness, phrase sensitivity,
rubric scores, MAPLE) describe the failure, not the model's reasoning, so every record is flagged
and the analyses leave degenerate responses out by default.

Flags and thresholds (`QualityConfig`; all checks run on the first and last `max_chars` = 20 000
characters of the response, in time linear in that window):

* `empty`: no letter or digit at all (nothing, whitespace, punctuation, control characters).
* `echo`: at least `echo_share` (70%) of the response's words lie inside a word 8-gram
  (`echo_ngram`) that also occurs in the system role or in the user prompt (either one alone, or
  both together: a base model often copies the role and then the question). A copy cut by the token
  cap, repeated, or with a few words changed still counts (a changed word uncovers only itself); a
  solution that restates the question or quotes a formula from it covers a small part of its own
  words. A response shorter than 8 words is an echo when it has `echo_min_words` (4) or more words
  and occurs word for word in the role or prompt.
* `repetition_loop`: one of the looping checks of `analyze/quality/detect.py` fires (a character
  run, a chunk repeated back to back, repeated word 4-grams, a line repeated; see its docstring),
  or one line (8+ characters once its step number or bullet is removed) appears 4 or more times
  under different step numbers ("1. Find x. 2. Find x. ...", which the plain line count misses).
* `wrong_script`: more than `script_share` (50%) of the response's words are in a script other
  than Latin (Greek letters and mathematical symbols count as math; single Latin letters are
  variables and do not count; a CJK character counts as one word), with at least
  `script_min_words` (5) such words, and the prompt itself is mostly Latin; or the text is mostly
  symbols (the `garbled` check of `detect.py`: under 60% letters, digits, spaces and math
  punctuation in 40+ characters).
* `truncated`: the finish reason is `length` (the token cap cut the response).
* `no_final_answer`: grading's `extract_final_answer` finds no stated answer (a boxed value, an
  answer line, "the answer is", a closing "therefore ..." or a last equation; see
  `analyze/quality/detect.py:has_final_answer`), searched in the last `max_chars` characters. In a
  response cut by the token cap only a marked answer the cut did not reach counts (a box, an
  answer line, "the answer is": `readers.answers.cut_short`); the rest is where the work stopped.

`degenerate` is `empty or echo or repetition_loop or wrong_script`; `truncated` and
`no_final_answer` alone are not degenerate, since a long real solution can be cut by the cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from mathlens.analyze.quality.checks import echo_match, is_empty, repeated_numbered_line, script_share, window
from mathlens.analyze.quality.detect import IncoherenceConfig, has_final_answer, incoherence
from mathlens.items.schema import Question
from mathlens.rounding import percent

#: The detect.py checks that mean "looping"; `garbled` means unreadable and feeds `wrong_script`.
LOOP_CHECKS = ("char_run", "period", "ngram", "line")
#: Flags that make a response degenerate, in the order `details` lists them.
DEGENERATE_FLAGS = ("empty", "echo", "repetition_loop", "wrong_script")


@dataclass(frozen=True)
class QualityConfig:
    """Thresholds of the quality flags (see the module docstring)."""

    max_chars: int = 20_000
    echo_ngram: int = 8
    echo_share: float = 0.7
    echo_min_words: int = 4
    script_share: float = 0.5
    script_min_words: int = 5
    max_source_chars: int = 50_000
    loop: IncoherenceConfig = field(default_factory=IncoherenceConfig)


class QualityFlags(BaseModel):
    """What is wrong with one response, if anything; `details` says why each flag is set."""

    empty: bool = False
    echo: bool = False
    repetition_loop: bool = False
    truncated: bool = False
    no_final_answer: bool = False
    wrong_script: bool = False
    details: list[str] = Field(default_factory=list)

    @property
    def degenerate(self) -> bool:
        """Empty, an echo, a loop or the wrong script: not an attempt at the question."""
        return self.empty or self.echo or self.repetition_loop or self.wrong_script

    def names(self) -> list[str]:
        """The flags that are set, degenerate ones first."""
        order = (*DEGENERATE_FLAGS, "truncated", "no_final_answer")
        return [n for n in order if getattr(self, n)]


def load_readers() -> None:
    """Import the answer readers the no-final-answer check uses (otherwise on its first call): they
    compile many patterns, tens of milliseconds that a caller may rather spend while it waits."""
    import mathlens.analyze.readers.answers  # noqa: F401


def _no_final_answer(text: str, question: Question | None, cfg: QualityConfig, truncated: bool) -> bool:
    from mathlens.analyze.readers.answers import STATED, cut_short, extract_final_answer

    tail = text if len(text) <= 2 * cfg.max_chars else text[-cfg.max_chars :]
    found = extract_final_answer(tail, question)
    parts = len(question.parts) if question is not None else 0
    if parts and len(found.parts) == parts and all(p.text and p.how in STATED for p in found.parts):
        # every part states its answer: the parts are the final answer, unless the cap cut the last
        return truncated and cut_short(found.parts[-1], tail) is not None
    if truncated and cut_short(found, tail) is not None:
        return True  # the cap cut the work before it marked an answer: what is read is where it stopped
    return not has_final_answer(found.how, found.text)


def quality_flags(response: str | None, *, system_role: str, prompt: str, finish_reason: str,
                  question: Question | None = None, config: QualityConfig | None = None) -> QualityFlags:
    """Flag one response (see the module docstring for each flag and its threshold).

    >>> f = quality_flags("Step 1: 2 + 3 = 5.\\nFinal answer: 5", system_role="Answer.",
    ...                   prompt="What is 2 + 3?", finish_reason="stop")
    >>> f.degenerate, f.names()
    (False, [])
    >>> quality_flags("", system_role="", prompt="q", finish_reason="stop").names()
    ['empty', 'no_final_answer']
    """
    cfg = config or QualityConfig()
    truncated = finish_reason == "length"
    details: list[str] = []
    text = response or ""
    if is_empty(text):
        details.append("empty: no letters or digits in the response")
        if truncated:
            details.append("truncated: the token cap cut the response")
        details.append("no_final_answer: no stated final answer")
        return QualityFlags(empty=True, truncated=truncated, no_final_answer=True, details=details)
    seen = window(text, cfg.max_chars)
    sources = {"system role": system_role[: cfg.max_source_chars], "prompt": prompt[: cfg.max_source_chars]}
    match = echo_match(seen, sources, cfg.echo_ngram, cfg.echo_min_words)
    echo = match is not None and match.share >= cfg.echo_share
    if echo and match is not None:
        details.append(f"echo: {percent(match.share)} of the response copies the {match.source}")
    hits = incoherence(seen, cfg.loop)
    loops = [f"{h.check}: {h.detail}" for h in hits if h.check in LOOP_CHECKS]
    if not any(h.check == "line" for h in hits):
        line = repeated_numbered_line(seen, cfg.loop.line_min_chars, cfg.loop.line_repeats)
        if line is not None:
            loops.append(f"numbered_line: {line[:40]!r} appears {cfg.loop.line_repeats}+ times under different "
                         "step numbers")
    if loops:
        details.append("repetition_loop: " + "; ".join(loops))
    wrong_script = False
    script = script_share(seen)
    if (script.foreign >= cfg.script_min_words and script.share > cfg.script_share
            and script_share(prompt[: cfg.max_chars]).share <= cfg.script_share):
        wrong_script = True
        details.append(f"wrong_script: {percent(script.share)} of the words are not in Latin script")
    garbled = next((h for h in hits if h.check == "garbled"), None)
    if garbled is not None:
        wrong_script = True
        details.append(f"wrong_script: {garbled.detail}")
    if truncated:
        details.append("truncated: the token cap cut the response")
    no_answer = _no_final_answer(text, question, cfg, truncated)
    if no_answer:
        details.append("no_final_answer: no stated final answer")
    return QualityFlags(echo=echo, repetition_loop=bool(loops), truncated=truncated, no_final_answer=no_answer,
                        wrong_script=wrong_script, details=details)
