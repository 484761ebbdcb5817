"""Numbers written in words: "three", "twenty-five", "one hundred and four", "two thousand".

`words_to_digits` replaces every run of English number words by its value in digits, so that
"So she has three apples left." states `3` and "The answer is twelve." is `12`. Only whole
cardinal numbers below a million are read; a run ends at anything that is not a number word, and
"and" joins only inside a run ("one hundred and four"). A lone "one" stays a word (it is as often a
pronoun, "this one"). Ordinals ("third") and fractions in words
("a half") are left as written.

`mixed_in_words` reads a whole number and a fraction in words as the mixed number it names:
"two and a half hours" is `2 1/2 hours`, "3 and three quarters" is `3 3/4`. Only a fraction in
words joins so: "3 and 1/2" stays as written, as it lists two numbers as often ("the roots are 3
and 1/2").

    >>> words_to_digits("He has twenty-five marbles and one hundred and four stickers.")
    'He has 25 marbles and 104 stickers.'
    >>> mixed_in_words("It takes one and a half hours, or 2 and three quarters with the stop.")
    'It takes 1 1/2 hours, or 2 3/4 with the stop.'
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


_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
                 "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "eighth": 8, "eighths": 8,
                 "tenth": 10, "tenths": 10}
_NUMERATORS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "seven": 7, "nine": 9}
_MIXED_WORDS = re.compile(
    # at most five number words before "and": the cost stays linear in the text
    rf"(?i)\b(\d+|{_WORD}(?:(?:[\s-]+|\s+and\s+){_WORD}){{0,4}})\s+and\s+({'|'.join(_NUMERATORS)})[\s-]+"
    rf"({'|'.join(sorted(_DENOMINATORS, key=len, reverse=True))})\b")


def mixed_in_words(text: str) -> str:
    """`text` with each whole number and fraction in words written as a mixed number (see the
    module docstring); a fraction that is not proper ("and five halves") is left as written."""
    def mixed(m: re.Match[str]) -> str:
        whole = m.group(1) if m.group(1).isdigit() else _value(m.group(1))
        num, den = _NUMERATORS[m.group(2).lower()], _DENOMINATORS[m.group(3).lower()]
        plural = m.group(3).lower().endswith("s")
        if whole is None or num >= den or plural != (num > 1):
            return m.group(0)
        return f"{whole} {num}/{den}"
    return _MIXED_WORDS.sub(mixed, text)
