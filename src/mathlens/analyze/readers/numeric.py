"""Numbers as answers are written: separators, decimal commas, currency, percentages, mixed numbers.

`read_number` turns one answer into a `NumberForm` (the exact value and how it was printed), and
`numbers_equal` compares two of them:

* integers and fractions compare exactly (`99999999999` is not `100000000000`);
* a decimal printed with at least `min_digits` significant digits matches any value within one
  unit of its last printed place (`1.414214` and `1.414213` are `sqrt(2)` rounded and cut);
  a shorter decimal must be exact (`0.333` is not `1/3`, `1.41` is not `sqrt(2)`);
* `25%`, `25 pct`, `25 percent`, `25\\%` equal `25` and `0.25`;
* a repeating decimal (`0.\\overline{3}`, `1.2\\overline{34}`, `0.\\dot{6}`) is its exact fraction.

    >>> read_number("1.234,5").value
    Fraction(2469, 2)
    >>> read_number("3 1/2").value
    Fraction(7, 2)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction

from mathlens.analyze.readers.normalize import strip_text_wrappers, to_number

_CURRENCY = re.compile(r"^(?:\\\$|\$|US\$|USD|EUR|GBP|€|£|¥|Rs\.?)\s*|\s*(?:USD|EUR|GBP|€|dollars?)\s*$")
_PERCENT = re.compile(r"\s*(?:\\%|%|\\text\{\s*%?\s*(?:percent(?:age)?|pct)\s*\}|percent(?:age(?:\s+points?)?)?|pct)"
                      r"\s*\.?$", re.I)
_MIXED = re.compile(r"^([-+−]?)(\d+)\s+(\d+)\s*/\s*(\d+)(?:\s+[A-Za-z]{2,}\.?)*$")
_GROUPED_SPACES = re.compile(r"^[-+−]?\d{1,3}(?:(?: |\\,|\u2009|\u202f)\d{3})+(?:\.\d+)?$")
_DECIMAL_COMMA = re.compile(r"^[-+−]?\d+,\d+$")
_DOT_THOUSANDS = re.compile(r"^[-+−]?\d{1,3}(?:\.\d{3})+,\d+$")
_DECIMAL = re.compile(r"[-+−]?(\d*)\.(\d+)")
#: a decimal literal and nothing else (`0.3333`, `-1.41`): `near_printed` reads it against an exact value
DECIMAL_TEXT = re.compile(r"^\s*[-+]?\d*\.\d+\s*$")
_REPEATING = re.compile(r"^([-−])?(\d*)\.(\d*)\\(?:overline|dot)\s*\{(\d{1,12})\}$")


@dataclass(frozen=True)
class NumberForm:
    """A number and how it was printed: `places` is None for an integer or fraction."""

    value: Fraction
    places: int | None = None
    digits: int = 0
    percent: bool = False


def _places(text: str) -> tuple[int | None, int]:
    """Decimal places and significant digits of the first decimal literal in `text`."""
    m = _DECIMAL.search(text.replace(",", ""))
    if not m:
        return None, 0
    whole, frac = m.group(1).lstrip("0"), m.group(2)
    digits = len(whole) + len(frac) if whole else len(frac.lstrip("0"))
    return len(frac), digits


@functools.lru_cache(maxsize=2048)
def read_number(text: str, decimal_comma: bool = True) -> NumberForm | None:
    """The number an answer states, or None when it is not a plain number.

    With `decimal_comma`, `3,5` and `1.234,5` read as decimals (the caller switches it off when
    a comma may separate list items).
    """
    t = strip_text_wrappers(text).strip().rstrip(".").strip()
    if len(t) > 2 and t.startswith("$") and t.endswith("$"):
        t = t.strip("$").strip()
    if len(t) > 80:
        return None
    percent = bool(_PERCENT.search(t))
    t = _PERCENT.sub("", t).strip()
    t = _CURRENCY.sub("", t).strip()
    t = t.replace("{,}", ",").replace("\\!", "").replace("−", "-")
    repeating = _REPEATING.match(t)
    if repeating:  # `0.\overline{3}`, `1.2\overline{34}`, `0.\dot{6}`: exact
        sign, whole, fixed, cycle = repeating.groups()
        value = int(whole or 0) + Fraction(int(fixed or 0), 10 ** len(fixed)) + Fraction(
            int(cycle), (10 ** len(cycle) - 1) * 10 ** len(fixed))
        return NumberForm(-value if sign else value, None, 0, percent)
    mixed = _MIXED.match(t)
    if mixed:
        sign, whole, num, den = mixed.groups()
        if int(den) and int(num) < int(den):
            value = int(whole) + Fraction(int(num), int(den))
            return NumberForm(-value if sign in "-−" and sign else value, None, 0, percent)
    if _GROUPED_SPACES.match(t):
        t = re.sub(r" |\\,|\u2009|\u202f", "", t)
    elif decimal_comma and _DOT_THOUSANDS.match(t):
        t = t.replace(".", "").replace(",", ".")
    elif decimal_comma and _DECIMAL_COMMA.match(t) and not re.match(r"^[-+−]?\d{1,3},\d{3}$", t):
        t = t.replace(",", ".")
    if re.match(r"^[-+]?\d+(?:\.\d+)?[eE][-+]?\d+$", t):
        return NumberForm(Fraction(t.lower().split("e")[0]) * Fraction(10) ** int(t.lower().split("e")[1]))
    read = to_number(t)
    if read is None:
        return None
    places, digits = _places(t)
    return NumberForm(read, places, digits, percent)


def _close(a: NumberForm, b: NumberForm, min_digits: int) -> bool:
    if a.value == b.value:
        return True
    printed = [f for f in (a, b) if f.places is not None and f.digits >= min_digits]
    if not printed:
        return False
    places = min(f.places for f in printed if f.places is not None)
    return abs(a.value - b.value) <= Fraction(1, 10**places)


def numbers_equal(a: NumberForm, b: NumberForm, min_digits: int = 6) -> bool:
    """Equal numbers under the printed-precision rule; a percentage also matches its fraction."""
    if _close(a, b, min_digits):
        return True
    if a.percent != b.percent:
        pa = NumberForm(a.value / 100, None) if a.percent else a
        pb = NumberForm(b.value / 100, None) if b.percent else b
        return pa.value == pb.value
    return False


def near_printed(text: str, value: complex, min_digits: int = 6) -> bool | None:
    """Does `value` round or cut to the decimal `text`? None when `text` is not such a decimal."""
    form = read_number(text)
    if form is None or form.places is None or form.digits < min_digits or abs(value.imag) > 1e-12:
        return None
    return abs(float(form.value) - value.real) <= 10.0 ** (-form.places) * (1 + 1e-9)
