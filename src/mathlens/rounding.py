"""Numbers as people read them: rounded half up, from the decimal a float stands for.

Python's own formatting rounds a float half to even on its binary value, so 5 of 8 (0.625)
prints as "62%" and 0.125 as "12%", where a reader who divides by hand writes 63 % and 13 %.
These helpers round the shortest decimal that gives the float back (`repr`), half up: 0.625 is
63 %, 57/200 (0.285) is 29 %, 2/3 is 67 %. Every percentage and fixed-point figure that mathlens
prints or writes into a page goes through them, so the same share reads the same everywhere.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def fixed(value: float, digits: int = 0) -> str:
    """`value` with `digits` decimals, rounded half up ("nan" and "inf" as Python writes them).

    >>> fixed(62.5), fixed(0.125, 2), fixed(-2.5), fixed(88.75, 1), fixed(3.0, 2)
    ('63', '0.13', '-3', '88.8', '3.00')
    """
    if not math.isfinite(value):
        return f"{value}"
    step = Decimal(1).scaleb(-digits)
    text = f"{Decimal(repr(float(value))).quantize(step, rounding=ROUND_HALF_UP)}"
    return "0" + text[2:] if text.startswith("-0") and not any(c in "123456789" for c in text) else text


def percent(share: float, digits: int = 0) -> str:
    """A share (0 to 1) as a percentage, rounded half up.

    >>> percent(5 / 8), percent(1 / 8), percent(57 / 200), percent(2 / 3), percent(0.95), percent(1 / 3, 1)
    ('63%', '13%', '29%', '67%', '95%', '33.3%')
    """
    if not math.isfinite(share):
        return f"{share}"
    return fixed(float(Decimal(repr(float(share))) * 100), digits) + "%"
