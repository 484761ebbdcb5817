"""Numbers written in words: "three", "twenty-five", "one hundred and four", "two thousand".

`words_to_digits` replaces every run of English number words by its value in digits, so that
"So she has three apples left." states `3` and "The answer is twelve." is `12`. Only whole
cardinal numbers below a million are read; a run ends at anything that is not a number word, and
"and" joins only inside a run ("one hundred and four"). A lone "one" stays a word (it is as often a
pronoun, "this one"). Ordinals ("third") and fractions in words
("a half") are left as written.

    >>> words_to_digits("He has twenty-five marbles and one hundred and four stickers.")
    'He has 25 marbles and 104 stickers.'
"""

from __future__ import annotations

import re

_UNITS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * (i + 2)
         for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])}
_SCALES = {"hundred": 100, "thousand": 1000}
_WORD = r"(?:" + "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True)) + r")"
_RUN = re.compile(rf"(?i)\b{_WORD}(?:(?:[\s-]+|\s+and\s+){_WORD})*\b")


def _value(run: str) -> int | None:
    total = current = 0
    for word in re.split(r"[\s-]+", run.lower()):
        if word == "and":
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total += max(current, 1) * 1000
            current = 0
        else:
            return None
    return total + current


def words_to_digits(text: str) -> str:
    """`text` with each run of number words written in digits (see the module docstring)."""
    def digits(m: re.Match[str]) -> str:
        if m.group(0).lower() == "one":
            return m.group(0)  # a lone "one" is as often a pronoun ("this one") as a number
        value = _value(m.group(0))
        return m.group(0) if value is None else str(value)
    return _RUN.sub(digits, text)
