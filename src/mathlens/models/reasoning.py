"""Reasoning traces: the part of a reply a reasoning model thinks aloud, kept apart from the answer.

Reasoning models return their trace in one of three ways: inline, between ``<think>`` and
``</think>`` (DeepSeek-R1 and Qwen3 style, also what llama.cpp returns for them by default); in a
separate ``reasoning_content`` (or ``reasoning``) field of an OpenAI-compatible reply (vLLM with a
reasoning parser, llama.cpp's server with ``--reasoning-format``); or in Ollama's ``thinking``
field. Whatever the source, a record keeps the trace in ``reasoning`` and the visible answer in
``response``, and analyses read the one they need.

    >>> s = split_reasoning("<think>2+2 is 4</think>The answer is 4.")
    >>> (s.reasoning, s.visible, s.unterminated)
    ('2+2 is 4', 'The answer is 4.', False)
    >>> split_reasoning("no trace here").reasoning is None
    True
    >>> split_reasoning("<think>still thinking when the cap hit").unterminated
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the tags that open and close an inline trace (``<thinking>`` is used by a few fine-tunes)
_OPEN = re.compile(r"^\s*<(think|thinking|reasoning)>", re.IGNORECASE)


@dataclass(frozen=True)
class SplitReply:
    """A reply cut into its trace (None: the reply had none) and the visible answer."""

    reasoning: str | None
    visible: str
    #: the trace was opened and never closed: the visible answer is empty (a cap or a stop cut it)
    unterminated: bool = False


def split_reasoning(text: str) -> SplitReply:
    """Split an inline ``<think>…</think>`` trace off the start of ``text``.

    Only a trace at the start counts (after whitespace): a solution that merely mentions the tag
    later is left whole. Some servers strip the opening tag and return ``…</think>answer``; a closing
    tag with no opening one before it is read the same way. Linear time in ``len(text)``.
    """
    opened = _OPEN.match(text)
    if opened is None:
        close = re.search(r"</(think|thinking|reasoning)>", text, re.IGNORECASE)
        if close is None or re.search(r"<(think|thinking|reasoning)>", text[:close.start()], re.IGNORECASE):
            return SplitReply(None, text)
        return SplitReply(text[:close.start()].strip(), text[close.end():].strip())
    tag = opened.group(1)
    rest = text[opened.end():]
    close = re.search(rf"</{tag}>", rest, re.IGNORECASE)
    if close is None:
        return SplitReply(rest.strip(), "", unterminated=True)
    return SplitReply(rest[:close.start()].strip(), rest[close.end():].strip())
