"""Congruences, ``mod`` and remainders between whole numbers.

* ``56 \\equiv 6 \\pmod{17}``, ``7 \\cdot 5 ≡ 1 (mod 17)``: each link of the chain holds when
  the two sides are whole numbers that differ by a multiple of the modulus; with unknowns
  (``3x ≡ 1 (mod 19)``) it is a condition, left undecided.
* ``195 \\mod 19 = 5``, ``3^4 \\bmod 8 = 1``: a side ``A mod N`` is the remainder of A.
* ``1121 ÷ 243 = 4 remainder 149``, ``770 / 333 = 2 with a remainder of 104``, "the remainder
  when 2006 is divided by 7 is 4": stated in words around the math, checked by
  ``A = q·B + r`` with ``0 ≤ r < B``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import sympy

from mathlens.analyze.verify.claims import ClaimCheck
from mathlens.analyze.verify.text import TEXT_COMMAND, split_relations

#: Parses one side (text) to a SymPy value, or None when it does not parse.
SideReader = Callable[[str], sympy.Basic | None]

_CONGRUENT = re.compile(r"\\equiv(?![a-zA-Z])|≡")
# The modulus at the end of a congruence: "\pmod{17}", "\pmod 17", "(\mod 17)", "(mod 17)",
# "\mod 17", "\text{ (mod } 17)".
_MODULUS = re.compile(
    r"(?:\\pmod\s*\{([^{}]+)\}|\\pmod\s*([\w^]+)"
    r"|\(\s*(?:\\text\{\s*)?\\?(?:b?mod)\s*\}?\s*([^()]+?)\s*\)"
    r"|\\(?:b?mod)(?![a-zA-Z])\s*\{?([^{}=]+?)\}?|(?<![A-Za-z])mod\s+([\w^]+))\s*[.,;]?\s*$")
# "A \mod N" inside a side: the remainder of A.
_MOD_OPERATOR = re.compile(r"\\(?:b?mod)(?![a-zA-Z])|(?<![A-Za-z\\])mod(?![A-Za-z])")


def congruence(text: str) -> tuple[str, str] | None:
    """``(chain, modulus)`` of a congruence ``a ≡ b ≡ c (mod n)``, with ``≡`` written as ``=``;
    None when `text` is not one."""
    if not _CONGRUENT.search(text):
        return None
    m = _MODULUS.search(text)
    if m is None:
        return None
    modulus = next(g for g in m.groups() if g is not None)
    return _CONGRUENT.sub("=", text[:m.start()]), modulus


def has_mod_operator(text: str) -> bool:
    """True when a side uses ``mod`` as an operation (``195 \\mod 19``)."""
    return bool(_MOD_OPERATOR.search(text)) and not _CONGRUENT.search(text)


def _whole(value: sympy.Basic | None) -> int | None:
    if value is None or not getattr(value, "is_number", False):
        return None
    try:
        value = sympy.nsimplify(value) if not value.is_Rational else value
    except (TypeError, ValueError):
        return None
    return int(value) if value.is_Integer else None


def check_congruence(chain: str, modulus: str, latex: bool, read: SideReader) -> list[ClaimCheck]:
    """Each link of the congruence chain ``a = b = c`` modulo `modulus`."""
    n = _whole(read(modulus))
    sides, ops = split_relations(chain, latex=latex)
    if n is None or n <= 0 or any(op != "=" for op in ops) or len(sides) < 2:
        return []
    values = [read(side) for side in sides]
    out = []
    for k in range(len(ops)):
        label = f"{sides[k].strip()} ≡ {sides[k + 1].strip()} (mod {n})"
        a, b = _whole(values[k]), _whole(values[k + 1])
        if a is None or b is None:
            why = "a congruence in unknowns" if values[k] is not None and values[k + 1] is not None \
                else "a side could not be read"
            out.append(ClaimCheck(label, "unverifiable", reason=why))
        elif (a - b) % n == 0:
            out.append(ClaimCheck(label, "valid", method="congruence"))
        else:
            out.append(ClaimCheck(label, "invalid", str(a % n), "congruence", f"{a} leaves {a % n} modulo {n}"))
    return out


def check_mod_chain(text: str, latex: bool, read: SideReader) -> list[ClaimCheck]:
    """Each link of a chain whose sides may be ``A mod N`` (the remainder of A)."""
    sides, ops = split_relations(text, latex=latex)
    if any(op != "=" for op in ops) or not ops:
        return []
    values: list[int | None] = []
    for side in sides:
        parts = _MOD_OPERATOR.split(side)
        if len(parts) == 2:
            a, n = _whole(read(parts[0])), _whole(read(parts[1].strip(" {}")))
            values.append(a % n if a is not None and n is not None and n > 0 else None)
        elif len(parts) == 1:
            values.append(_whole(read(side)))
        else:
            values.append(None)
    out = []
    for k in range(len(ops)):
        label = f"{sides[k].strip()} = {sides[k + 1].strip()}"
        a, b = values[k], values[k + 1]
        if a is None or b is None:
            out.append(ClaimCheck(label, "unverifiable", reason="a remainder of something other than a whole number"))
        elif a == b:
            out.append(ClaimCheck(label, "valid", method="remainder"))
        else:
            out.append(ClaimCheck(label, "invalid", str(a), "remainder"))
    return out


_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)"
# A number that ends there (not the start of a decimal, a fraction or a product).
_END = r"(?!\d|\.\d|\s*[/^*×·\\+-])"
_DIVIDED = rf"{_NUMBER}\s*(?:÷|/|divided\s+by)\s*{_NUMBER}"
# "1121 ÷ 243 = 4 remainder 149", "770 / 333 = 2 with a remainder of 104", "10 ÷ 13 = 0 R 10".
_QUOTIENT_REMAINDER = re.compile(
    rf"(?<![\w.^/{{}}()]){_DIVIDED}\s*(?:=|is|gives|equals|yields)\s*{_NUMBER}\s*,?\s*"
    rf"(?:with\s+(?:a\s+)?|and\s+(?:a\s+)?|\(\s*)?(?:remainder|rem\.?|R)\b\.?\s*(?:of\s+|is\s+|=\s*|:\s*)?"
    rf"{_NUMBER}{_END}")
# "the remainder when 2006 is divided by 7 is 4".
_REMAINDER_WHEN = re.compile(
    rf"remainder\s+(?:when|of)\s+{_NUMBER}\s+(?:is\s+)?divided\s+by\s+{_NUMBER}\s*(?:is|=)\s*{_NUMBER}{_END}")


# "the GCD of 116 and 174 is 2", "the least common multiple of 4, 6 and 10 is 60",
# "\gcd(12, 18) = 6"; "we find that the GCD is 3" refers to the pair named before it.
_DIVISOR = r"(?:gcd|GCD|greatest common (?:divisor|factor)|GCF|HCF|highest common factor)"
_MULTIPLE = r"(?:lcm|LCM|least common multiple)"
_NUMBERS = rf"{_NUMBER}(?:\s*,\s*{_NUMBER})*(?:\s*,?\s*and\s+{_NUMBER})?"
_NAMED_OF = re.compile(rf"(?P<kind>{_DIVISOR}|{_MULTIPLE})(?:\s*\((?:GCD|GCF|LCM|HCF)\))?\s+of\s+(?:the\s+numbers\s+)?"
                       rf"(?P<args>{_NUMBERS})(?P<tail>\s*,?\s*(?:which\s+is|is|=|equals)\s*{_NUMBER}{_END})?")
_NAMED_LATER = re.compile(rf"(?:the\s+)?(?P<kind>{_DIVISOR}|{_MULTIPLE})\s+(?:is|=|equals)\s*{_NUMBER}{_END}")
_CALL = re.compile(rf"\\?(?:operatorname\{{)?(?P<kind>gcd|lcm|GCD|LCM)\}}?\s*\(\s*"
                   rf"(?P<args>{_NUMBER}(?:\s*,\s*{_NUMBER})+)\s*\)\s*=\s*{_NUMBER}{_END}")


def _integers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d{1,3}(?:,\d{3})+|\d+", text)]


def _gcd_claim(kind: str, args: list[int], stated: int) -> ClaimCheck:
    lcm = bool(re.match(_MULTIPLE, kind))
    value = int(sympy.ilcm(*args)) if lcm else int(sympy.igcd(*args))
    name = "lcm" if lcm else "gcd"
    label = f"{name}({', '.join(map(str, args))}) = {stated}"
    if value == stated:
        return ClaimCheck(label, "valid", method=name)
    return ClaimCheck(label, "invalid", str(value), name)


def divisor_claims(text: str) -> list[ClaimCheck]:
    """Greatest common divisors and least common multiples of whole numbers stated in a step."""
    flat = _flat(text)
    events = sorted([(m.start(), "of", m) for m in _NAMED_OF.finditer(flat)] +
                    [(m.start(), "later", m) for m in _NAMED_LATER.finditer(flat)] +
                    [(m.start(), "call", m) for m in _CALL.finditer(flat)], key=lambda e: e[0])
    out = []
    named: dict[bool, list[int]] = {}  # the numbers the last GCD (False) or LCM (True) was of
    covered = -1  # text already read as part of a "GCD of a and b is c" statement
    for start, kind, m in events:
        lcm = bool(re.match(_MULTIPLE, m.group("kind")))
        if kind == "of":
            args = _integers(m.group("args"))
            if len(args) < 2:
                continue
            named[lcm] = args
            covered = m.end()
            if m.group("tail"):
                out.append(_gcd_claim(m.group("kind"), args, _integers(m.group("tail"))[-1]))
        elif kind == "later":
            if start < covered or lcm not in named:
                continue
            out.append(_gcd_claim(m.group("kind"), named[lcm], _integers(m.group(0))[-1]))
        else:
            stated = _integers(flat[m.end("args"):m.end()])
            out.append(_gcd_claim(m.group("kind"), _integers(m.group("args")), stated[-1]))
    return out


def _flat(text: str) -> str:
    """The step's text with math delimiters and LaTeX spacing removed (words kept)."""
    text = TEXT_COMMAND.sub(r" \1 ", text)
    text = re.sub(r"\\[()\[\]]|\$|\*\*", " ", text)
    text = re.sub(r"\\div(?![a-zA-Z])", "÷", text)
    text = re.sub(r"\\(?:[,;:! ]|q?quad(?![a-zA-Z]))|~", " ", text)
    return re.sub(r"\\boxed\{([^{}]*)\}", r"\1", text)


def remainder_claims(text: str) -> list[ClaimCheck]:
    """Quotients and remainders stated in a step, each checked with ``A = q·B + r, 0 ≤ r < B``."""
    flat = _flat(text)
    out = []
    for m in _QUOTIENT_REMAINDER.finditer(flat):
        a, b, q, r = (int(g.replace(",", "")) for g in m.groups())
        label = f"{a} ÷ {b} = {q} remainder {r}"
        if b == 0:
            continue
        if a == q * b + r and 0 <= r < b:
            out.append(ClaimCheck(label, "valid", method="quotient and remainder"))
        else:
            out.append(ClaimCheck(label, "invalid", f"{a // b} remainder {a % b}", "quotient and remainder"))
    for m in _REMAINDER_WHEN.finditer(flat):
        a, b, r = (int(g.replace(",", "")) for g in m.groups())
        if b == 0:
            continue
        label = f"the remainder of {a} divided by {b} is {r}"
        out.append(ClaimCheck(label, "valid", method="remainder") if a % b == r else
                   ClaimCheck(label, "invalid", str(a % b), "remainder"))
    return out
