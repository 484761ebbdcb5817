"""Word-level ablation: single content words of the prose, each removed on its own.

The calculus seed's §6.1 report ranks single words beside typed elements ("Important phrase:
directional  Impact: 0.477", "maximum  Impact: 0.373"). The typed elements of `elements.py` do not
cover such words, so this module adds the element type ``word``:

* candidates are the words of the **prose** only: math spans found by `segments.split_text`
  (LaTeX, Unicode or keyboard math, `\\text{...}` inside `$...$` included) are left alone;
* a word is letters, with inner hyphens or apostrophes (`x-axis`, `Newton's`), of at least
  `MIN_LETTERS` letters; part labels `(a)`, `(iii)` are not words;
* left out: the English function words of `data/stopwords.txt`, the instruction verbs of
  `KEYWORD_SYNONYMS` (those are `keyword` elements) and function names such as `sin`, `ln`;
* one element per distinct word (compared in lower case), whose edit removes every occurrence;
* at most `limit` words, the first ones in reading order, so the choice is deterministic and a
  resumed run plans the same variants.

Removing a word takes the blank after it (or before it, at the end of a line or before
punctuation) and re-capitalises a sentence whose first word it was.

    >>> [e.text for e in word_elements("Find the maximum rate of change of f at (1, 2).", limit=10)]
    ['maximum', 'rate', 'change']
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from mathlens.solve.ablation.elements import _LABEL, KEYWORD_SYNONYMS, Edit, Element, clauses
from mathlens.solve.ablation.segments import _MATH_WORDS, Span, split_text

#: Shortest word (in letters) that counts as a content word: `x`, `of`, `ln` never do.
MIN_LETTERS = 3
#: Words per question when the manifest does not say (`max_words`).
DEFAULT_MAX_WORDS = 10

_WORD = re.compile(r"(?<![\w'’-])[A-Za-z]+(?:[-'’][A-Za-z]+)*(?![\w'’-])")
_POSSESSIVE = re.compile(r"['’]s$", re.I)


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """The function words never ablated (package data `data/stopwords.txt`)."""
    text = resources.files("mathlens.solve.ablation").joinpath("data/stopwords.txt").read_text(encoding="utf-8")
    words = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return frozenset(w for w in words if w)


def is_content_word(word: str) -> bool:
    """Whether `word` (as written in the prompt) can be a word element.

    >>> is_content_word("directional"), is_content_word("the"), is_content_word("Find"), is_content_word("ln")
    (True, False, False, False)
    """
    low = word.lower()
    base = _POSSESSIVE.sub("", low)
    if sum(c.isalpha() for c in low) < MIN_LETTERS:
        return False
    return not (low in stop_words() or base in stop_words() or low in KEYWORD_SYNONYMS or low in _MATH_WORDS)


def _prose_words(text: str, spans: list[Span]) -> list[tuple[int, int]]:
    """(start, end) of every content word of the prose spans, in reading order."""
    out = []
    for sp in spans:
        if sp.kind != "prose":
            continue
        body = _LABEL.sub(lambda m: " " * len(m.group(0)), sp.text)  # part labels are not words
        for m in _WORD.finditer(body):
            if is_content_word(m.group(0)):
                out.append((sp.start + m.start(), sp.start + m.end()))
    return out


def _word_edit(text: str, start: int, end: int, sentence_starts: set[int]) -> Edit:
    """The splice removing one occurrence with one blank beside it."""
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    at_line_end = after >= len(text) or text[after] == "\n"
    if after > end and not at_line_end and text[after] not in ",.;:?!)":
        return Edit(start, after, capitalize_next=start in sentence_starts and text[start].isupper())
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    return Edit(before, end)


def word_elements(text: str, limit: int = DEFAULT_MAX_WORDS) -> list[Element]:
    """The first `limit` distinct content words of `text`'s prose, one `word` element each (see the
    module notes); every occurrence of a word is removed by its element."""
    if limit <= 0:
        return []
    spans = split_text(text)
    starts = {c.start for c in clauses(text, spans)}
    starts |= {m.end() + 1 for m in _LABEL.finditer(text)}
    found: dict[str, list[Edit]] = {}
    for start, end in _prose_words(text, spans):
        word = text[start:end].lower()
        if word not in found:
            if len(found) >= limit:
                continue
            found[word] = []
        edit = _word_edit(text, start, end, starts)
        edits = found[word]
        if edits and edit.start <= edits[-1].end:  # "rate rate": one splice over both
            edits[-1] = Edit(edits[-1].start, max(edits[-1].end, edit.end), capitalize_next=edits[-1].capitalize_next)
            continue
        edits.append(edit)
    return [Element("word", w, "remove", tuple(edits), False) for w, edits in found.items()]
