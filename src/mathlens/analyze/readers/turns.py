"""Where a response's own answer ends: text a model writes after its turn is over is not its answer.

Models run on past their answer in a few recognisable ways, and the answer is read only from the
text before the first of them:

* a chat-template marker: `<|im_end|>`, `<|im_start|>`, `<|eot_id|>`, `</s>`, `<end_of_turn>`,
  `[INST]`, `<|user|>`, `<|endoftext|>`... (a marker before any content, such as a leading
  `<|im_start|>assistant`, is skipped);
* a new speaker: a line opening with `Human:`, `User:`, `USER:`, `### Instruction`, `### Human`...;
* the next question of a few-shot prompt: a line opening with `Question:`, `Q:`, `Problem 2.`,
  `### Question 2`, `Exercise:`, `Next question:`, `Now try this one:`... This one counts only when
  the text before it already gives an answer (`has_answer`), so a response that restates the
  question first ("Problem: find x ... Solution: x = 2") keeps everything.

`visible_text` also blanks the characters that change how text looks without being text (zero-width
spaces and joiners, bidirectional overrides, NUL and other control characters), keeping every
other character at its offset, so that positions found in the cleaned text are positions in the
response.

    >>> t = "So the answer is 4.<|im_end|>\\n<|im_start|>user\\nAnd 3+3?"
    >>> t[:own_turn_end(t, lambda s: True)]
    'So the answer is 4.'
"""

from __future__ import annotations

import re
from collections.abc import Callable

_CHAT_MARKER = re.compile(
    r"<\|(?:im_end|im_start|eot_id|eom_id|start_header_id|end_header_id|end_of_text|endoftext|end|user|"
    r"assistant|system|begin_of_text)\|>|</s>|<s>|<(?:end|start)_of_turn>|\[/?INST\]|<｜[^｜>]{1,30}｜>|"
    r"<\|(?:User|Assistant)\|>")
_SPEAKER = re.compile(
    r"(?m)^[ \t]*(?:#{2,4}[ \t]*(?:Instruction|Human|User|Input)\b[^\n]*$|"
    r"(?:Human|User|USER|HUMAN|Student|STUDENT)[ \t]*:)")
_NEXT_QUESTION = re.compile(
    r"(?im)^[ \t>*#]*(?:(?:question|problem|exercise)(?:[ \t]*\d+)?[ \t]*[:.)]|(?:question|problem)[ \t]+\d+\b|"
    r"q[ \t]*\d*[ \t]*:|next[ \t]+(?:question|problem)\b|"
    r"now[ \t]+(?:try|solve|do|answer)[ \t]+(?:this|these|the[ \t]+following|another|the[ \t]+next|one[ \t]+more)\b|"
    r"example[ \t]*\d+[ \t]*[:.])")
_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u00ad\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTENT = re.compile(r"[A-Za-z0-9]")


def visible_text(text: str) -> str:
    """`text` with invisible and control characters replaced by spaces (offsets unchanged)."""
    return _INVISIBLE.sub(" ", text)


def own_turn_end(text: str, has_answer: Callable[[str], bool], max_headers: int = 20) -> int:
    """The offset where the response's own turn ends (`len(text)` when it does not run on).

    `has_answer(prefix)` says whether a prefix already states an answer; it decides whether a
    next-question header ends the turn (only the first `max_headers` headers are tried, so the
    cost stays linear in the text).
    """
    end, start = len(text), 0
    for m in _CHAT_MARKER.finditer(text):
        segment = text[start : m.start()]
        if _CONTENT.search(segment) and not _ROLE_ONLY.fullmatch(segment):
            end = m.start()
            break
        start = m.end()  # markers before any content open the response's own turn
    for m in _SPEAKER.finditer(text, start, end):
        if _CONTENT.search(text, start, m.start()):
            end = m.start()
            break
    for i, m in enumerate(_NEXT_QUESTION.finditer(text, start, end)):
        if i >= max_headers:
            break
        if _CONTENT.search(text, start, m.start()) and has_answer(text[: m.start()]):
            return m.start()
    return end


#: what may stand between a leading marker and the response's content: a role name
_ROLE_ONLY = re.compile(r"(?i)\s*(?:assistant|model|gpt|bot|ai)?\s*:?\s*")
