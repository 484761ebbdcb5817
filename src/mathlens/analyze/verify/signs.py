"""``a ± b``: one written expression with two values, read with the upper and the lower sign.

Every ``±`` of an expression takes the same sign and every ``∓`` the other one, as in the
quadratic formula ``(-b ± √(b² - 4ac)) / 2a``. `PlusMinus` holds the two readings; a relation
between two ± expressions holds when it holds for each sign, and a ± expression compared with a
single value is left undecided.
"""

from __future__ import annotations

import re
from typing import Any

import sympy

#: A ± or ∓ sign in plain text (LaTeX ``\pm``/``\mp`` are rewritten to these first).
SIGN = re.compile("[±∓]")
_LATEX_SIGN = re.compile(r"\\(pm|mp)(?![a-zA-Z])")


class PlusMinus(sympy.Tuple):
    """The two values of an expression written with ``±``: (upper sign, lower sign)."""

    def _sympystr(self, printer: Any) -> str:
        upper, lower = (printer._print(a) for a in self.args)
        return f"±({upper}, {lower})"


def latex_signs(text: str) -> str:
    """``\\pm`` and ``\\mp`` as the characters ± and ∓."""
    return _LATEX_SIGN.sub(lambda m: "±" if m.group(1) == "pm" else "∓", text)


def readings(text: str) -> tuple[str, str]:
    """The text with the upper signs and with the lower signs."""
    upper = text.replace("±", "+").replace("∓", "-")
    lower = text.replace("±", "-").replace("∓", "+")
    return upper, lower
