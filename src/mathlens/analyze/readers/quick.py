"""Comparisons decided in the calling process, without SymPy and without a worker round trip.

Most answer pairs that reach the symbolic path are small expressions (`3pi/2` against
`\\frac{3\\pi}{2}`, `2 sin(x) cos(x)` against `sin(2x)`, `y = 2x + 3` against `2x + 3 = y`). For
those the verdict of the worker (`symbolic.compare_answers`) can be reached here, in microseconds,
by the same rules on a reading of the same text:

* the text is read as the worker reads it: LaTeX that the worker's fast path accepts goes through
  the same rewriting into keyboard notation (`latex_fast.to_plain`), keyboard notation through the
  same normalisation (`plain.normalize`); the resulting string is parsed here by a small grammar
  (numbers, one-letter names, `pi`, `e`, `+ - * / ^ !`, implicit products, brackets and the usual
  functions) into a tree of tuples. Anything outside that grammar is not read (None) and goes to
  the worker, so a verdict is only given where the reading is the worker's;
* two exact numbers (integers, fractions, decimals, integer powers, factorials) compare exactly;
* a decimal printed with enough digits against a constant uses `numeric.near_printed`;
* two constant expressions differ when their values differ by more than one part in a million
  (the worker's quick rejection); they are equal when they agree to 30 digits, evaluated again
  with `mpmath` at 50 digits;
* expressions in one to three letters: the worker's two numeric tests, on the same points drawn
  from the same seeds (three points that may reject, then twelve that accept);
* an equation against a bare value is different, after a `name =` left side is dropped as the
  worker does (`x = 2` against `2`); two linear-in-one-unknown polynomial equations are equal
  exactly when one is a constant multiple of the other, by exact polynomial arithmetic.

The evaluation is real floating point with guards: a square root or logarithm of a negative
number, a non-integer power of a negative number, a value above 1e12 or a result that lost digits
to cancellation makes the pair undecided (None), never a verdict. Every step is linear in the text,
texts over `MAX_CHARS` are not read, trees over `MAX_NODES` nodes are refused, and powers and
factorials are capped before they are computed: nothing here can run away, so no worker is needed.

    >>> decide("3pi/2", r"\\frac{3\\pi}{2}")[:2]
    ('equal', 'numeric')
    >>> decide("2 sin(x) cos(x)", "sin(2x)")[:2]
    ('equal', 'numeric_sampling')
    >>> decide("y = 2x + 3", "y = 2x - 3")[:2]
    ('different', 'equation')
"""

from __future__ import annotations

import functools
import math
import random
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mathlens.analyze.readers.numeric import DECIMAL_TEXT, near_printed
from mathlens.analyze.verify.latex_fast import LATEX_HINT, NOT_FAST, to_plain
from mathlens.analyze.verify.limits import DEFAULT_LIMITS, check_text
from mathlens.analyze.verify.plain_text import normalize
from mathlens.analyze.verify.text import NESTED_LIST, UNION, strip_delimiters

MAX_CHARS = 300
MAX_NODES = 200
MAX_DEPTH = 40
#: a verdict: (status, method, predicted form, reference form)
Decided = tuple[str, str, str, str]
Node = tuple[Any, ...]

# -- reading -----------------------------------------------------------------------------------
_RELATION_WORDS = re.compile(r"(?i)\b(?:or|and)\b|<|>|≤|≥|≠|\\(?:[lg]eq?|neq?|lor|[lg]t)(?![A-Za-z])")
# `\sin x`, `\ln 2`, `\cos \theta`, `\ln|x|`: a bare argument Math-Verify applies the function
# to, when nothing that could extend the argument follows it (the end of a brace group ends it).
_BARE_FUNCTIONS = "sin|cos|tan|sec|csc|cot|ln|sinh|cosh|tanh"
_BARE_CALL = re.compile(
    rf"\\({_BARE_FUNCTIONS})\s*"
    r"(\d+|[a-zA-Z](?![A-Za-z0-9])|\\(?:theta|alpha|beta|phi|pi)(?![A-Za-z])|\|[^|{}\\]{1,20}\||"
    r"\\[dt]?frac\{[^{}]{1,20}\}\{[^{}]{1,20}\})"
    rf"(?=\s*(?:$|[-+=)}}]|\\(?:{_BARE_FUNCTIONS})(?![A-Za-z])))")
_SPACING = re.compile(r"\\[,;:! ]")
_ROOT_INDEX = re.compile(r"\\sqrt\[\d+\]")
_MIXED_LATEX = re.compile(r"^([-+]?)(\d+)\s*\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}$")
_INFINITY = re.compile(r"^([-+]?)\s*(?:oo|\\infty|infty|infinity|inf|∞)$")

_FUNCTIONS = frozenset({"sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos",
                        "atan", "sinh", "cosh", "tanh", "ln", "log", "exp", "sqrt", "abs", "Abs"})
_GREEK = frozenset({"theta", "alpha", "beta", "phi", "mu", "sigma", "lambda_"})
_CALL_LETTERS = frozenset("fghFGHyuv")  # applied to brackets they are functions, not products
_TOKEN = re.compile(r"[ \t]*(?:(\d+(?:\.\d+)?|\.\d+)|([A-Za-z_]+)|([-+*/^()!=]))")
# After a number: Python would read `2e5`, `2e+5`, `2j` as one literal (and `0x1F`, `0b1`, `0o7`).
_NUMBER_SUFFIX = re.compile(r"[eE][-+]?\d|[jJ]")
_RADIX = ("x", "X", "o", "O", "b", "B")
_E_OR_I = re.compile(r"(?<![\\A-Za-z])[EI](?![A-Za-z])")
_CAPITAL = re.compile(r"(?<![\\A-Za-z])([A-Z])(?![A-Za-z])")
_NOT_PLAIN = re.compile(r"[\\'\"`$#@;,\[\]{}<>]")


class _Refuse(Exception):
    """The text or the pair is outside what this module decides."""


@dataclass(frozen=True)
class Reading:
    """One answer as read here: an expression (one side) or an equation (two sides)."""

    sides: tuple[Node, ...]
    names: frozenset[str]
    text: str


def _tokens(s: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    s = s.rstrip()
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None:
            raise _Refuse("character")
        num, name, op = m.groups()
        spaced = m.start(m.lastindex or 0) > pos
        if num is not None:
            if out and not spaced and out[-1][0] in ("num", "name"):
                raise _Refuse("glued number")  # `1.2.3`, `x2`
            if _NUMBER_SUFFIX.match(s, m.end()) or (num == "0" and s[m.end():m.end() + 1] in _RADIX):
                raise _Refuse("a Python literal suffix")
            out.append(("num", num))
        elif name is not None:
            if out and not spaced and out[-1][0] == "name":
                raise _Refuse("glued names")
            out.append(("name", name))
        else:
            out.append(("op", op))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over the tokens with Python's precedence (SymPy's parser inserts `*`
    for implicit products, so they bind like `*`; `-x^2` is `-(x^2)`, `2^3^2` is `2^9`)."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks = tokens
        self.i = 0
        self.depth = 0
        self.nodes = 0

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise _Refuse("unexpected end")
        self.i += 1
        return tok

    def expect(self, op: str) -> None:
        if self.take() != ("op", op):
            raise _Refuse(f"expected {op}")

    def node(self, *parts: Any) -> Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Refuse("too many nodes")
        return tuple(parts)

    def parse(self) -> tuple[Node, ...]:
        sides = [self.expr()]
        if self.peek() == ("op", "="):
            self.take()
            sides.append(self.expr())
        if self.peek() is not None:
            raise _Refuse("trailing tokens")
        return tuple(sides)

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refuse("nested too deeply")
        left = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = self.node("add" if op == "+" else "sub", left, self.term())
        self.depth -= 1
        return left

    def _starts_atom(self) -> bool:
        tok = self.peek()
        return tok is not None and (tok[0] in ("num", "name") or tok == ("op", "("))

    def term(self) -> Node:
        left = self.factor()
        while True:
            tok = self.peek()
            if tok in (("op", "*"), ("op", "/")):
                self.take()
                left = self.node("mul" if tok[1] == "*" else "div", left, self.factor())
            elif self._starts_atom():
                left = self.node("mul", left, self.factor())
            else:
                return left

    def factor(self) -> Node:
        tok = self.peek()
        if tok in (("op", "-"), ("op", "+")):
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _Refuse("nested too deeply")
            inner = self.factor()
            self.depth -= 1
            return self.node("neg", inner) if tok[1] == "-" else inner
        return self.power()

    def power(self) -> Node:
        base = self.postfix()
        if self.peek() == ("op", "^"):
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _Refuse("nested too deeply")
            exponent = self.factor()
            self.depth -= 1
            return self.node("pow", base, exponent)
        return base

    def postfix(self) -> Node:
        value = self.atom()
        if self.peek() == ("op", "!"):
            self.take()
            if self.peek() == ("op", "!"):
                raise _Refuse("double factorial")
            value = self.node("fact", value)
            if self.peek() == ("op", "!"):
                raise _Refuse("double factorial")
        return value

    def atom(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            return self.node("num", Fraction(text))
        if kind == "op":
            if text != "(":
                raise _Refuse(f"unexpected {text}")
            inner = self.expr()
            self.expect(")")
            return inner
        if text in _FUNCTIONS:
            return self.call(text)
        if text == "pi":
            return self.node("const", "pi")
        if text == "e":
            return self.node("const", "e")
        if text in _GREEK or len(text) == 1:
            if text in _CALL_LETTERS and self.peek() == ("op", "("):
                raise _Refuse("a function letter applied to brackets")
            return self.node("sym", text)
        raise _Refuse(f"name {text}")

    def call(self, name: str) -> Node:
        fn = "log" if name == "ln" else "abs" if name == "Abs" else \
            {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}.get(name, name)
        tok = self.peek()
        if tok == ("op", "^"):  # `sin^2(x)` is sin(x)^2
            self.take()
            kind, text = self.take()
            if kind != "num" or "." in text:
                raise _Refuse("a function power")
            self.expect("(")
            inner = self.expr()
            self.expect(")")
            return self.node("pow", self.node("call", fn, inner), self.node("num", Fraction(text)))
        if tok == ("op", "("):
            self.take()
            inner = self.expr()
            self.expect(")")
            return self.node("call", fn, inner)
        if tok is not None and tok[0] == "name" and tok[1] in _FUNCTIONS and self.peek(1) == ("op", "("):
            inner = self.atom()  # `ln Abs(x)`: applied to the call that follows
            if self.peek() in (("op", "^"), ("op", "!")):
                raise _Refuse("an applied call with a power")
            return self.node("call", fn, inner)
        raise _Refuse(f"{name} without brackets")


def _names(node: Node, out: set[str]) -> None:
    if node[0] == "sym":
        out.add(node[1])
    for part in node[1:]:
        if isinstance(part, tuple):
            _names(part, out)


def _mv_rewrite(body: str) -> str:
    """LaTeX the worker reads with Math-Verify, in the small part of it read alike here:
    `\\sin x` and `\\ln 2` become `\\sin(x)` and `\\ln(2)`; capital letters are lower-cased as
    Math-Verify does, except `E` and `I`, which it reads as a name and the imaginary unit."""
    body = _BARE_CALL.sub(lambda m: f"\\{m.group(1)}({m.group(2)})", body)
    if _E_OR_I.search(body):
        raise _Refuse("E or I in Math-Verify's reading")
    return _CAPITAL.sub(lambda m: m.group(1).lower(), body)


def _plain_of(text: str) -> str:
    """The keyboard-notation string the worker's plain reader would parse for `text`."""
    if LATEX_HINT.search(text):
        body = text.strip().strip("$").strip()
        if "\\langle" in body or "\\rangle" in body or "\\log" in body:
            raise _Refuse("not a single expression")
        if NOT_FAST.search(body):
            body = _mv_rewrite(body)
            # spacing commands and a root's index mean the same to Math-Verify and the fast path
            if NOT_FAST.search(_SPACING.sub(" ", _ROOT_INDEX.sub(r"\\sqrt", body))):
                raise _Refuse("Math-Verify's reading")
        plain = to_plain(body)
        if plain is None:
            raise _Refuse("LaTeX outside the fast path")
        text = plain
    s = strip_delimiters(text)
    if not s or check_text(s, DEFAULT_LIMITS) is not None or UNION.search(s):
        raise _Refuse("not read here")
    if _NOT_PLAIN.search(s):
        raise _Refuse("character")
    norm = normalize(s)
    if "zzq" in norm or "'" in norm or "|" in norm or "%" in norm or "!=" in norm:
        raise _Refuse("calculus notation")
    return norm


@functools.lru_cache(maxsize=2048)
def read(text: str) -> Reading | None:
    """The reading of one answer, or None when it is not read here (see the module docstring).

    Kept for the last 2048 texts: a reference is compared with every response to its question.
    """
    if len(text) > MAX_CHARS or NESTED_LIST.match(text) or _RELATION_WORDS.search(text):
        return None
    stripped = text.strip().strip("$").strip()
    mixed = _MIXED_LATEX.match(stripped)
    if mixed and int(mixed.group(3)) < int(mixed.group(4)) and int(mixed.group(4)):
        sign, whole, num, den = mixed.groups()
        value = int(whole) + Fraction(int(num), int(den))
        return Reading((("num", -value if sign == "-" else value),), frozenset(), text)
    try:
        sides = _Parser(_tokens(_plain_of(text))).parse()
    except (_Refuse, ValueError, ZeroDivisionError, RecursionError):
        return None
    found: set[str] = set()
    for side in sides:
        _names(side, found)
    return Reading(sides, frozenset(found), text)


_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4, "fact": 5}
_SIGNS = {"add": " + ", "sub": " - ", "mul": "*", "div": "/", "pow": "^"}


def show(node: Node) -> str:
    """A tree in keyboard notation, numbers folded (`10!/(3!7!)` shows as `120`)."""
    value = exact(node)
    if value is not None and node[0] != "num":
        node = ("num", value)
    op = node[0]
    if op == "num":
        return str(node[1])
    if op in ("sym", "const"):
        return str(node[1])
    if op == "call":
        return f"{node[1]}({show(node[2])})"

    def part(child: Node, right: bool = False) -> str:
        text = show(child)
        inner = _PRECEDENCE.get(child[0], 9)
        if child[0] == "num" and (child[1] < 0 or child[1].denominator != 1):
            inner = 2 if child[1] >= 0 else 3
        outer = _PRECEDENCE[op]
        tight = inner < outer or (right and inner == outer and op in ("sub", "div", "pow")) or \
            (op == "pow" and not right and inner == outer)
        return f"({text})" if tight else text

    if op == "neg":
        return "-" + part(node[1])
    if op == "fact":
        return part(node[1]) + "!"
    return part(node[1]) + _SIGNS[op] + part(node[2], right=True)


def shown(reading: Reading) -> str:
    """An answer as read here, in keyboard notation."""
    return " = ".join(show(side) for side in reading.sides)


def infinity(text: str) -> int | None:
    """+1 / -1 for an answer that is plus or minus infinity, else None."""
    m = _INFINITY.match(text.strip().strip("$").replace(" ", ""))
    if not m:
        return None
    return -1 if m.group(1) == "-" else 1


# -- evaluation --------------------------------------------------------------------------------
MAX_POWER = 4096
MAX_BITS = 20_000
MAX_FACTORIAL = 50


def exact(node: Node) -> Fraction | None:
    """The exact rational value of a tree of numbers, or None when it is not one (a symbol, a
    constant, a function, a non-integer power)."""
    try:
        return _exact(node)
    except (_Refuse, ZeroDivisionError, OverflowError, ValueError):
        return None


def _exact(node: Node) -> Fraction:
    op = node[0]
    if op == "num":
        value: Fraction = node[1]
        return value
    if op == "neg":
        return -_exact(node[1])
    if op in ("add", "sub", "mul", "div"):
        a, b = _exact(node[1]), _exact(node[2])
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        return a / b
    if op == "pow":
        base, exponent = _exact(node[1]), _exact(node[2])
        if exponent.denominator != 1 or abs(exponent.numerator) > MAX_POWER:
            raise _Refuse("power")
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(exponent.numerator) > MAX_BITS:
            raise _Refuse("power too large")
        return base ** exponent.numerator
    if op == "fact":
        n = _exact(node[1])
        if n.denominator != 1 or not 0 <= n.numerator <= MAX_FACTORIAL:
            raise _Refuse("factorial")
        return Fraction(math.factorial(n.numerator))
    raise _Refuse("not a number")


MAX_VALUE = 1e12


class _Real:
    """Real floating-point evaluation with the guards of the module docstring. `peak` is the
    largest magnitude met on the way, to detect cancellation."""

    def __init__(self, env: dict[str, float]) -> None:
        self.env = env
        self.peak = 0.0

    def value(self, node: Node) -> float:
        v = self._eval(node)
        if not math.isfinite(v) or abs(v) > MAX_VALUE:
            raise _Refuse("too large")
        return v

    def _seen(self, v: float) -> float:
        if not math.isfinite(v) or abs(v) > MAX_VALUE:
            raise _Refuse("too large")
        self.peak = max(self.peak, abs(v))
        return v

    def _eval(self, node: Node) -> float:
        op = node[0]
        if op == "num":
            return self._seen(float(node[1]))
        if op == "sym":
            return self.env[node[1]]
        if op == "const":
            return math.pi if node[1] == "pi" else math.e
        if op == "neg":
            return -self._eval(node[1])
        if op in ("add", "sub", "mul", "div"):
            a, b = self._eval(node[1]), self._eval(node[2])
            if op == "add":
                return self._seen(a + b)
            if op == "sub":
                return self._seen(a - b)
            if op == "mul":
                return self._seen(a * b)
            if b == 0 or abs(b) < 1e-12 * max(1.0, abs(a)):
                raise _Refuse("division by (nearly) zero")
            return self._seen(a / b)
        if op == "pow":
            return self._pow(node)
        if op == "fact":
            n = exact(node[1])
            if n is None or n.denominator != 1 or not 0 <= n.numerator <= MAX_FACTORIAL:
                raise _Refuse("factorial")
            return self._seen(float(math.factorial(n.numerator)))
        if op == "call":
            return self._call(node[1], self._eval(node[2]))
        raise _Refuse(op)

    def _pow(self, node: Node) -> float:
        a, b = self._eval(node[1]), self._eval(node[2])
        if a < 0:
            whole = exact(node[2])
            if whole is None or whole.denominator != 1:
                raise _Refuse("a non-integer power of a negative number")
        elif a == 0 and b <= 0:
            raise _Refuse("zero to a power that is not positive")
        try:
            return self._seen(a ** b)
        except (OverflowError, ZeroDivisionError) as exc:
            raise _Refuse("power") from exc

    def _call(self, fn: str, x: float) -> float:
        try:
            if fn in ("sin", "cos", "tan", "cot", "sec", "csc"):
                s, c = math.sin(x), math.cos(x)
                if fn in ("tan", "sec") and abs(c) < 1e-9:
                    raise _Refuse("a pole")
                if fn in ("cot", "csc") and abs(s) < 1e-9:
                    raise _Refuse("a pole")
                v = s if fn == "sin" else c if fn == "cos" else s / c if fn == "tan" else \
                    1 / c if fn == "sec" else c / s if fn == "cot" else 1 / s
            elif fn in ("arcsin", "arccos"):
                if not -1.0 <= x <= 1.0:
                    raise _Refuse("outside the real domain")
                v = math.asin(x) if fn == "arcsin" else math.acos(x)
            elif fn == "arctan":
                v = math.atan(x)
            elif fn in ("log", "sqrt"):
                if x < 0 or (fn == "log" and x == 0):
                    raise _Refuse("outside the real domain")
                v = math.log(x) if fn == "log" else math.sqrt(x)
            elif fn == "exp":
                v = math.exp(x)
            elif fn in ("sinh", "cosh", "tanh"):
                v = getattr(math, fn)(x)
            elif fn == "abs":
                v = abs(x)
            else:
                raise _Refuse(fn)
        except (OverflowError, ValueError) as exc:
            raise _Refuse("outside the real domain") from exc
        return self._seen(v)


@functools.cache
def _context() -> Any:
    """A private 50-digit mpmath context: its precision is never changed after this, so threads
    comparing answers at the same time cannot change each other's (as `mpmath.workdps` would)."""
    import mpmath

    ctx = mpmath.MPContext()
    ctx.dps = 50
    return ctx


def _mp(node: Node) -> Any:
    """The value at 50 digits (only for constant trees that the float evaluation accepted)."""
    mp = _context()
    op = node[0]
    if op == "num":
        return mp.mpf(node[1].numerator) / node[1].denominator
    if op == "const":
        return +mp.pi if node[1] == "pi" else mp.e
    if op == "neg":
        return -_mp(node[1])
    if op in ("add", "sub", "mul", "div"):
        a, b = _mp(node[1]), _mp(node[2])
        return a + b if op == "add" else a - b if op == "sub" else a * b if op == "mul" else a / b
    if op == "pow":
        whole = exact(node[2])
        base = _mp(node[1])
        return base ** whole.numerator if whole is not None and whole.denominator == 1 else base ** _mp(node[2])
    if op == "fact":
        n = exact(node[1])
        assert n is not None
        return mp.mpf(math.factorial(n.numerator))
    fn, x = node[1], _mp(node[2])
    table = {"sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "cot": mp.cot, "sec": mp.sec, "csc": mp.csc,
             "arcsin": mp.asin, "arccos": mp.acos, "arctan": mp.atan, "log": mp.log, "sqrt": mp.sqrt,
             "exp": mp.exp, "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "abs": abs}
    return table[fn](x)


def _constants_agree(p: Node, r: Node) -> bool:
    a, b = _mp(p), _mp(r)
    return bool(abs(a - b) <= _context().mpf(10) ** -30 * max(1, abs(a), abs(b)))


def _evaluate(node: Node, env: dict[str, float]) -> tuple[float, float]:
    ev = _Real(env)
    return ev.value(node), ev.peak


def evaluate_at(node: Node, env: dict[str, float]) -> float | None:
    """The real value of a tree at a point, or None when the guards refuse it."""
    try:
        value, peak = _evaluate(node, env)
        _guarded([(value, peak)])
        return value
    except (_Refuse, KeyError, ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def _guarded(values: list[tuple[float, float]]) -> None:
    """Refuse when cancellation could have eaten the digits the tolerance relies on."""
    scale = max(1.0, *(abs(v) for v, _ in values))
    if any(peak > 1e6 * scale for _, peak in values):
        raise _Refuse("cancellation")


def _points(symbols: list[str], seed: int, count: int) -> list[dict[str, float]]:
    """The worker's sample points: the same generator, seed and order of draws."""
    rng = random.Random(seed)
    return [{s: rng.uniform(0.3, 2.7) for s in symbols} for _ in range(count)]


# -- polynomials (equations) -------------------------------------------------------------------
Poly = dict[tuple[int, ...], Fraction]
MAX_TERMS = 300
MAX_DEGREE = 8


def _poly(node: Node, symbols: list[str]) -> Poly | None:
    try:
        return _poly_of(node, symbols)
    except _Refuse:
        return None


def _trim(p: Poly) -> Poly:
    out = {k: v for k, v in p.items() if v != 0}
    if len(out) > MAX_TERMS or any(sum(k) > MAX_DEGREE for k in out):
        raise _Refuse("polynomial too large")
    return out


def _poly_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            k = tuple(x + y for x, y in zip(ka, kb, strict=True))
            out[k] = out.get(k, Fraction(0)) + va * vb
    return _trim(out)


def _poly_of(node: Node, symbols: list[str]) -> Poly:
    zero = (0,) * len(symbols)
    value = exact(node)
    if value is not None:
        return _trim({zero: value})
    op = node[0]
    if op == "sym":
        powers = [0] * len(symbols)
        powers[symbols.index(node[1])] = 1
        return {tuple(powers): Fraction(1)}
    if op == "neg":
        return {k: -v for k, v in _poly_of(node[1], symbols).items()}
    if op in ("add", "sub"):
        a, b = _poly_of(node[1], symbols), _poly_of(node[2], symbols)
        sign = 1 if op == "add" else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, Fraction(0)) + sign * v
        return _trim(out)
    if op == "mul":
        return _poly_mul(_poly_of(node[1], symbols), _poly_of(node[2], symbols))
    if op == "div":
        d = exact(node[2])
        if d is None or d == 0:
            raise _Refuse("division by a polynomial")
        return {k: v / d for k, v in _poly_of(node[1], symbols).items()}
    if op == "pow":
        n = exact(node[2])
        if n is None or n.denominator != 1 or not 0 <= n.numerator <= MAX_DEGREE:
            raise _Refuse("power")
        base = _poly_of(node[1], symbols)
        out = {zero: Fraction(1)}
        for _ in range(n.numerator):
            out = _poly_mul(out, base)
        return out
    raise _Refuse("not a polynomial")


def _same_graph(p: tuple[Node, Node], r: tuple[Node, Node], names: list[str]) -> bool | None:
    """The worker's rule for two equations (`symbolic._same_graph`), by exact polynomial algebra."""
    if not names or len(names) > 6:
        return None
    dp = _poly(("sub", *p), names)
    dr = _poly(("sub", *r), names)
    if dp is None or dr is None:
        return None
    dp = {k: v for k, v in dp.items() if v}
    dr = {k: v for k, v in dr.items() if v}
    if not any(any(k) for k in dp) or not any(any(k) for k in dr):
        return None  # SymPy evaluates an equation with a constant difference to True or False
    for i, _ in enumerate(names):
        deg_p = max((k[i] for k in dp), default=0)
        deg_r = max((k[i] for k in dr), default=0)
        if deg_p == 1 and deg_r == 1:
            coef_p = [v for k, v in dp.items() if k[i] == 1]
            coef_r = [v for k, v in dr.items() if k[i] == 1]
            ground_p = all(sum(k) == 1 for k in dp if k[i] == 1)
            ground_r = all(sum(k) == 1 for k in dr if k[i] == 1)
            if ground_p and ground_r:
                scale = coef_r[0] / coef_p[0]
                keys = set(dp) | set(dr)
                return all(dp.get(k, Fraction(0)) * scale == dr.get(k, Fraction(0)) for k in keys)
    return None


# -- the decision ------------------------------------------------------------------------------

def _fold(node: Node) -> Node:
    if node[0] == "sym":
        return ("sym", node[1].lower())
    return tuple(_fold(x) if isinstance(x, tuple) else x for x in node)


def _is_name(node: Node) -> bool:
    return node[0] == "sym"


def _mentions(node: Node, name: str) -> bool:
    return node == ("sym", name) or any(isinstance(x, tuple) and _mentions(x, name) for x in node[1:])


def _align(p: tuple[Node, ...], r: tuple[Node, ...]) -> tuple[tuple[Node, ...], tuple[Node, ...]]:
    """`2 = x` is `x = 2`; a `name =` goes when the other side is not an equation
    (`symbolic.align`). A name that also appears on the right (`y = y + 1`) is refused: SymPy may
    evaluate such an equation to True or False before the worker compares it."""
    def first(v: tuple[Node, ...]) -> tuple[Node, ...]:
        return (v[1], v[0]) if len(v) == 2 and _is_name(v[1]) and not _is_name(v[0]) else v

    def named(v: tuple[Node, ...]) -> bool:
        if len(v) == 2 and _is_name(v[0]):
            if _mentions(v[1], v[0][1]):
                raise _Refuse("the name on both sides")
            return True
        return False

    p, r = first(p), first(r)
    # (Two equations whose left sides name different functions compare their right sides in the
    # worker; here the only such name is `y`, so that rule never applies.)
    if len(r) == 1 and named(p):
        return (p[1],), r
    if len(p) == 1 and named(r):
        return p, (r[1],)
    return p, r


def decide(pred: str, ref: str, rel_tol: float = 1e-6, min_digits: int = 6) -> Decided | None:
    """The verdict the worker would give on two answers, or None when it is not reached here."""
    sign_p, sign_r = infinity(pred), infinity(ref)
    if sign_p is not None or sign_r is not None:
        return _infinities(pred, ref, sign_p, sign_r)
    a, b = read(pred), read(ref)
    if a is None or b is None:
        return None
    try:
        return _decide(a, b, rel_tol, min_digits)
    except (_Refuse, KeyError, ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None


def _infinities(pred: str, ref: str, sign_p: int | None, sign_r: int | None) -> Decided | None:
    if sign_p is not None and sign_r is not None:
        return ("equal" if sign_p == sign_r else "different"), "infinity", pred, ref
    other = read(ref if sign_p is not None else pred)
    if other is None or other.names or len(other.sides) != 1:
        return None
    try:  # a finite constant is not infinity
        _evaluate(other.sides[0], {})
    except (_Refuse, KeyError, ZeroDivisionError, OverflowError, ValueError):
        return None
    return "different", "infinity", pred, ref


def _gaussian(node: Node) -> tuple[Fraction, Fraction]:
    """The exact value of a tree of numbers and `i` (the imaginary unit) as (real, imaginary)."""
    op = node[0]
    if op == "sym" and node[1] == "i":
        return Fraction(0), Fraction(1)
    value = exact(node)
    if value is not None:
        return value, Fraction(0)
    if op == "neg":
        re_, im = _gaussian(node[1])
        return -re_, -im
    if op in ("add", "sub", "mul", "div"):
        (a, b), (c, d) = _gaussian(node[1]), _gaussian(node[2])
        if op == "add":
            return a + c, b + d
        if op == "sub":
            return a - c, b - d
        if op == "mul":
            return a * c - b * d, a * d + b * c
        norm = c * c + d * d
        if norm == 0:
            raise _Refuse("division by zero")
        return (a * c + b * d) / norm, (b * c - a * d) / norm
    if op == "pow":
        n = exact(node[2])
        if n is None or n.denominator != 1 or abs(n.numerator) > 64:
            raise _Refuse("power")
        base = _gaussian(node[1])
        out = (Fraction(1), Fraction(0))
        for _ in range(abs(n.numerator)):
            out = (out[0] * base[0] - out[1] * base[1], out[0] * base[1] + out[1] * base[0])
        if n.numerator < 0:
            norm = out[0] ** 2 + out[1] ** 2
            if norm == 0:
                raise _Refuse("division by zero")
            out = (out[0] / norm, -out[1] / norm)
        return out
    raise _Refuse("not a complex number")


def _decide(a: Reading, b: Reading, rel_tol: float, min_digits: int) -> Decided | None:
    p, r = a.sides, b.sides
    names_p, names_r = a.names, b.names
    if any(n.lower() == "i" for n in names_p | names_r):
        # The worker tries `i` as a variable, then as the imaginary unit: for numbers in `i` the
        # second decides (an identity in a variable `i` also holds for the unit). A `z =` before
        # one side goes first, as the worker's alignment drops it.
        p, r = _align(p, r)
        left: set[str] = set()
        for side in (*p, *r):
            _names(side, left)
        if not left <= {"i"} or len(p) != 1 or len(r) != 1:
            return None
        same = _gaussian(p[0]) == _gaussian(r[0])
        return ("equal" if same else "different"), "imaginary_unit", shown(a), shown(b)
    if names_p != names_r and {n.lower() for n in names_p} == {n.lower() for n in names_r}:
        p, r = tuple(_fold(s) for s in p), tuple(_fold(s) for s in r)
        names_p = frozenset(n.lower() for n in names_p)
        names_r = frozenset(n.lower() for n in names_r)
    p, r = _align(p, r)
    forms = (shown(a), shown(b))
    if len(p) != len(r):
        return "different", "symbolic", *forms  # an equation is not a bare value
    found: set[str] = set()
    for side in (*p, *r):
        _names(side, found)
    names = sorted(found)  # the worker's symbols: those left after the alignment
    if len(p) == 2:
        graph = _same_graph((p[0], p[1]), (r[0], r[1]), names)
        if graph is None:
            return None
        return ("equal" if graph else "different"), "equation", *forms
    pe, re_ = p[0], r[0]
    if not names:
        return _constants(a.text, b.text, pe, re_, min_digits, forms)
    if len(names) > 3:
        return None
    for point in _points(names, 11, 3):  # the worker's quick rejection
        values = [_evaluate(pe, point), _evaluate(re_, point)]
        _guarded(values)
        if not _close(values[0][0], values[1][0], 1e-6):
            return "different", "symbolic", *forms
    for point in _points(names, 7, 12):  # the worker's agreement at random points
        values = [_evaluate(pe, point), _evaluate(re_, point)]
        _guarded(values)
        if not _close(values[0][0], values[1][0], rel_tol):
            return None
    return "equal", "numeric_sampling", *forms


def _constants(p_text: str, r_text: str, p: Node, r: Node, min_digits: int, forms: tuple[str, str]
               ) -> Decided | None:
    for text, other in ((p_text, r), (r_text, p)):
        if DECIMAL_TEXT.match(text):
            _evaluate(other, {})  # the guards first: the value at 50 digits is then safe to compute
            verdict = near_printed(text, complex(float(_mp(other))), min_digits)
            if verdict is not None:
                return ("equal" if verdict else "different"), "printed_precision", *forms
    x, y = exact(p), exact(r)
    if x is not None and y is not None:
        return ("equal" if x == y else "different"), "exact", *forms
    values = [_evaluate(p, {}), _evaluate(r, {})]
    _guarded(values)
    if not _close(values[0][0], values[1][0], 1e-6):
        return "different", "numeric", *forms
    if _constants_agree(p, r):
        return "equal", "numeric", *forms
    return None
