"""Where sentences end in a block of prose: the rule of spaCy's `sentencizer`, without spaCy.

The flow segmenter splits a long block into sentences (rule 5 of `segment`). The rule it follows
is the one spaCy's blank English pipeline applies with its rule-based ``sentencizer``; spaCy
itself is not imported (its start-up, which brings in its numerical back end, cost 2-2.5 s of a
process on this hardware: more than analysing a megabyte of prose once it is loaded).

The rule, on the words of the text (runs of non-space characters):

- A word is read as spaCy's English tokenizer cuts it: leading punctuation and quotes come off as
  tokens of their own, and so do trailing ones; a trailing period comes off after a digit, a
  lower-case letter, punctuation, a quote, ``%²-+`` or two capital letters (``A.`` and ``x.`` stay
  whole, as do the abbreviations of `ABBREVIATIONS`); a run of two or more periods is an ellipsis,
  never a sentence end; a period between a lower-case and a capital letter splits the word.
- A token that is one of `TERMINALS` (``.``, ``!``, ``?`` and their counterparts in other scripts)
  ends the sentence; the next sentence starts at the first token after it that is neither
  punctuation nor a terminal. Any white space other than one plain space between two words is a
  token too (a line break, two spaces), so a new sentence can start there.

Linear in the length of the text. `tests/cases/flow/sentences.yaml` holds the cases by phenomenon;
where spaCy is installed (the `dev` extra) the test checks that it splits each case the same way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

#: Tokens that end a sentence (spaCy's sentencizer's default list, by code point).
TERMINALS = frozenset(
    "!.?\u0589\u061f\u06d4\u0700\u0701\u0702\u07f9\u0964\u0965\u104a\u104b\u1362\u1367\u1368\u166e"
    "\u1735\u1736\u1803\u1809\u1944\u1945\u1aa8\u1aa9\u1aaa\u1aab\u1b5a\u1b5b\u1b5e\u1b5f\u1c3b\u1c3c"
    "\u1c7e\u1c7f\u203c\u203d\u2047\u2048\u2049\u2e2e\u2e3c\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877"
    "\ua8ce\ua8cf\ua92f\ua9c8\ua9c9\uaa5d\uaa5e\uaa5f\uaaf0\uaaf1\uabeb\ufe52\ufe56\ufe57\uff01\uff0e"
    "\uff1f\uff61\u3002"
)
_PUNCT = "…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪"
_QUOTES = "'\"”“`‘´’‚„»«「」『』（）〔〕【】《》〈〉〈〉⟦⟧"
#: Characters the tokenizer cuts off the ends of a word one at a time (punctuation and quotes).
_AFFIX = frozenset(_PUNCT + _QUOTES + "§%=—–°")
#: What may stand before a period that comes off a word (besides a digit or a lower-case letter).
_BEFORE_PERIOD = frozenset(_PUNCT + _QUOTES + "%²-+")
_ABBREVIATED = (
    "Adm. Ak. Ala. Apr. Ariz. Ark. Aug. Bros. Calif. Co. Colo. Conn. Corp. D.C. Dec. Del. Dr. E.G. "
    "E.g. Feb. Fla. Ga. Gen. Gov. I.E. I.e. Ia. Id. Ill. Inc. Ind. Jan. Jr. Jul. Jun. Kan. Kans. Ky. "
    "La. Ltd. Mar. Mass. Md. Messrs. Mich. Minn. Miss. Mo. Mont. Mr. Mrs. Ms. Mt. N.C. N.D. N.H. "
    "N.J. N.M. N.Y. Neb. Nebr. Nev. Nov. Oct. Okla. Ore. Pa. Ph.D. Prof. Rep. Rev. S.C. Sen. Sep. "
    "Sept. St. Tenn. Va. Wash. Wis. a.m. p.m. co. e.g. i.e. v.s. vs. °C. °F. °K. °c. °f. °k. ä. ö. ü."
)
#: Words kept whole with their period: English abbreviations, and one lower-case letter with a period.
ABBREVIATIONS = frozenset(
    _ABBREVIATED.split()
    + [f"{c}." for c in "abcdefghijklmnopqrstuvwxyz"]
    + [f"{h}{m}" for h in range(1, 13) for m in ("a.m.", "p.m.")]
)
#: What the tokenizer cuts off the front of a word as a token of punctuation.
_PREFIX_PUNCT = frozenset(c for c in _AFFIX if unicodedata.category(c).startswith("P"))
#: A period after a degree sign and a scale comes off (the sign is a token of its own: ``30 °C.``).
_DEGREES = ("°C.", "°c.", "°F.", "°f.", "°K.", "°k.")
_WORD = re.compile(r"\S+")
#: Where the tokenizer splits inside a word (``km/h``, ``a:b``, ``well-known``, ``x,y``).
_INFIX = re.compile(r"(?<=[^\W_])[/:<>=](?=[^\W\d_])|(?<=[^\W\d_])(?:[-–—~,])(?=[^\W\d_])")
_INFIX_PERIOD = re.compile(r"(?<=[^\W\d_])\.(?=[^\W\d_])")


def _punct(c: str) -> bool:
    return unicodedata.category(c).startswith("P")


def _period_comes_off(core: str) -> bool:
    """Does the tokenizer cut the final period off `core` (which ends with one)?"""
    if len(core) == 1:
        return True
    before = core[-2]
    if (before.isdigit() and before.isascii()) or (before.isalpha() and before.islower()) or before in _BEFORE_PERIOD:
        return True
    return len(core) >= 3 and before.isupper() and core[-3].isupper()


def _abbreviation(core: str) -> bool:
    """Is `core` (or its last part after an infix such as ``km/h.``, ``a:b.``) kept whole?"""
    return core.endswith(".") and (core in ABBREVIATIONS or _INFIX.split(core)[-1] in ABBREVIATIONS)


def _ends(word: str) -> bool:
    """Does `word` end a sentence: is one of the tokens cut off its end a terminal?"""
    if word[-1] not in TERMINALS and word[-1] not in _AFFIX:
        return False
    head = 0
    while head < len(word) - 1 and word[head] in _AFFIX and word[head] not in TERMINALS:
        head += 1
    core, ends = word, False
    while len(core) > head and not _abbreviation(core[head:]):
        last = core[-1]
        if last == "." and len(core) - head >= 2 and core[-2] == ".":
            core = core.rstrip(".")  # an ellipsis: punctuation, never an end
        elif last in TERMINALS and (last != "." or _period_comes_off(core[head:]) or core.endswith(_DEGREES)):
            ends, core = True, core[:-1]
        elif last in _AFFIX:
            core = core[:-1]
        else:
            break
    return ends


def _starts(word: str) -> int | None:
    """Where a sentence would start in `word`: after the punctuation the tokenizer cuts off its
    front (None when nothing but punctuation is left)."""
    if word[0].isalnum():
        return 0
    i = 0
    while i < len(word):
        if word.startswith("..", i):
            while i < len(word) and word[i] == ".":
                i += 1
        elif word[i] in _PREFIX_PUNCT:
            i += 1
        else:
            break
    rest = word[i:]
    if not rest or all(_punct(c) or c in TERMINALS for c in rest):
        return None
    return i


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of `text`, in order, covering every word.

    >>> text = "It holds. So x = 2! Then (see above) we stop."
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['It holds.', 'So x = 2!', 'Then (see above) we stop.']
    >>> text = "Take e.g. the point A. Then 5 km/h. Stop."
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['Take e.g. the point A. Then 5 km/h. Stop.']
    """
    spans: list[tuple[int, int]] = []
    start: int | None = None  # where the sentence being read starts
    last = 0  # the end of the last token read
    seen_end = False
    for a, b, word in _tokens(text):
        at = 0 if word is None else _starts(word)
        if start is None:
            start = a  # the first token starts the first sentence, whatever it is
        elif seen_end and at is not None:
            spans.append((start, a + at if at else last))
            start, seen_end = a + at, False
        if word is not None and _ends(word):
            seen_end = True
        last = b
    if start is not None:
        spans.append((start, last))
    return spans


def _tokens(text: str) -> Iterator[tuple[int, int, str | None]]:
    """The words of `text` (cut where a period splits them) and its white-space tokens (word None):
    any run of white space but a single plain space after a word, less that first plain space."""
    prev = 0
    for m in _WORD.finditer(text):
        yield from _space(text, prev, m.start(), first=prev == 0)
        for a, b in _pieces(text, m.start(), m.end()):
            yield a, b, text[a:b]
        prev = m.end()
    yield from _space(text, prev, len(text), first=prev == 0)


def _space(text: str, a: int, b: int, *, first: bool) -> Iterator[tuple[int, int, None]]:
    gap = text[a:b]
    if not gap or (gap == " " and not first):
        return
    if gap.startswith(" ") and not first:
        a += 1
    yield a, b, None


def _pieces(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """A word cut where a period stands between a lower-case and a capital letter (``end.Then``):
    the tokenizer makes that period a token of its own."""
    if text.find(".", a + 1, b - 1) < 0:
        return [(a, b)]
    out: list[tuple[int, int]] = []
    for m in _INFIX_PERIOD.finditer(text, a, b):
        if text[m.start() - 1].islower() and text[m.end()].isupper():
            out += [(a, m.start()), (m.start(), m.end())]
            a = m.end()
    out.append((a, b))
    return out
