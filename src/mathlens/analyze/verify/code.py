"""Code blocks in a solution: read as code, and the output written under them checked.

Models trained to reason with a Python interpreter write a fenced ```` ```python ```` block and then
an ```` ```output ```` block with what it printed. When no interpreter ran (a plain chat request),
the output is the model's own guess: on GSM8K the embedded model's code was right and its written
output wrong in 5 of its 18 wrong answers.

* **Reading.** The statements of a code block are Python, not prose: the names each step of the
  block assigns and reads come from its syntax tree (`ast`), so the reasoning graph links a step
  that uses ``total`` to the one that assigned it, whatever the names are made of (``savings``,
  ``cost_per_gumball``). The prose reader gets the steps with code and output blocks blanked out
  (`CodeReading.texts`).
* **Output.** Each line of an output block is a claim of the step it is in, checked against what
  the code prints. The code is never run: only straight-line arithmetic is worked out (assignments
  of numbers and names, ``+ - * / // % **``, ``round``, ``abs``, ``int``, ``float``, ``min``,
  ``max``, ``sum`` of a list written out, ``math.sqrt``/``floor``/``ceil``/``pi``/``e``, and
  ``print`` of numbers, strings and f-strings), with Python's own rules (``7 / 2`` is 3.5,
  ``7 // 2`` is 3, ``round(2.5)`` is 2). Anything else (a loop, a function, another import, a name
  never assigned) leaves the output undecided, with the reason. A line holds when its numbers equal
  those the print gives (within a relative 1e-9: ``55.0`` for ``54.99999999999999``) and the words
  around them match; a line worded otherwise, or an output with another number of lines, is
  undecided.

Bounds: 20,000 characters and 200 statements per block, integers of at most 4,096 bits
(``10**10**8`` is refused before it is computed).
"""

from __future__ import annotations

import ast
import builtins
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from mathlens.analyze.verify.results import ClaimCheck

MAX_BLOCK_CHARS = 20_000
MAX_STATEMENTS = 200
MAX_INT_BITS = 4_096
KIND = "code output"
METHOD = "the code block worked out"

#: a fenced block of Python (to its closing fence, or to the end of a response cut short)
_CODE = re.compile(r"```[ \t]*(?:python3?|py)[ \t]*\n(?P<body>.*?)(?:```|\Z)", re.S | re.I)
#: an output block right under a code block (blank space only between them)
_OUTPUT = re.compile(r"\s*```[ \t]*output[ \t]*\n(?P<body>.*?)(?:```|\Z)", re.S | re.I)
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_BUILTINS = frozenset(dir(builtins)) | {"math"}

Number = int | float


@dataclass
class StepCode:
    """What the code blocks put in one step: names assigned and read, statements, output claims."""

    defines: list[str] = field(default_factory=list)
    mentions: list[str] = field(default_factory=list)
    #: the numbers an output block states, keyed as the prose reader keys numbers ("2.75", "11/4")
    produces: list[str] = field(default_factory=list)
    statements: int = 0
    claims: list[ClaimCheck] = field(default_factory=list)


@dataclass(frozen=True)
class CodeReading:
    """The steps with code and output blocks blanked (for the prose reader), and by step index
    what the blocks put there."""

    texts: list[str]
    steps: dict[int, StepCode]


@dataclass(frozen=True)
class CodeBlock:
    """One fenced Python block of a text, and the output block written right under it (if any)."""

    code: str
    #: offsets into the text: the whole fenced block, and where its code starts
    span: tuple[int, int]
    code_at: int
    #: the output block's non-blank lines, its span and where its first line starts (None without one)
    output: tuple[str, ...] | None = None
    output_span: tuple[int, int] | None = None
    output_at: int | None = None


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced Python blocks of `text`, each with the output block under it.

    >>> [(b.code, b.output) for b in code_blocks("So:\\n```python\\nprint(2)\\n```\\n```output\\n2\\n```")]
    [('print(2)\\n', ('2',))]
    """
    out = []
    for m in _CODE.finditer(text):
        block = CodeBlock(m.group("body"), m.span(), m.start("body"))
        found = _OUTPUT.match(text, m.end())
        if found is not None and found.group("body").strip():
            body = found.group("body")
            lines = tuple(ln.strip() for ln in body.strip().splitlines() if ln.strip())
            block = replace(block, output=lines, output_span=found.span(),
                            output_at=found.start("body") + len(body) - len(body.lstrip()))
        out.append(block)
    return out


def printed_lines(code: str) -> list[str]:
    """The lines `code` prints, worked out as the module notes say (`Undecided` when it cannot be).

    >>> printed_lines("a = 7\\nprint(a / 2, a // 2)")
    ['3.5 3']
    """
    run = _Reading()
    try:
        run.block(code)
    except RecursionError:
        raise Undecided("expressions nested too deeply") from None
    return run.lines


def read_code(step_texts: Sequence[str]) -> CodeReading:
    """The code blocks of a solution given as steps (see the module notes).

    >>> reading = read_code(["```python\\nx = 20\\ny = 3 * x\\nprint(x + y)\\n```", "```output\\n90\\n```"])
    >>> reading.steps[0].defines, [(c.text, c.status, c.expected) for c in reading.steps[1].claims]
    (['x', 'y'], [('prints 90', 'invalid', '80')])
    >>> reading.steps[1].mentions, reading.texts
    (['x', 'y'], ['', ''])
    """
    texts = list(step_texts)
    joined = "\n".join(texts)
    if "```" not in joined:
        return CodeReading(texts, {})
    starts, offset = [], 0
    for text in texts:
        starts.append(offset)
        offset += len(text) + 1

    def step_of(at: int) -> int:
        return bisect_right(starts, at) - 1

    steps: dict[int, StepCode] = {}
    blanked: list[tuple[int, int]] = []
    for block in code_blocks(joined):
        blanked.append(block.span)
        _facts(block.code, block.code_at, step_of, steps)
        if block.output is None or block.output_span is None or block.output_at is None:
            continue
        blanked.append(block.output_span)
        at = steps.setdefault(step_of(block.output_at), StepCode())
        check = _check(block.code, list(block.output))
        at.claims.extend(check.claims)
        at.mentions.extend(n for n in check.printed if n not in at.mentions)
        keys = (k for n in _NUMBER.findall(" ".join(block.output)) for k in _number_keys(n))
        at.produces.extend(dict.fromkeys(k for k in keys if k not in at.produces))
    return CodeReading(_blank(texts, starts, blanked), steps)


def _number_keys(written: str) -> tuple[str, ...]:
    """A written number keyed as the prose reader may key it: as written, and as an exact fraction
    in lowest terms ("55.0" -> "55.0", "55"; "-1.25" -> "-1.25", "-5/4")."""
    try:
        exact = str(Fraction(written))
    except (ValueError, ZeroDivisionError):
        return (written,)
    return tuple(dict.fromkeys((written, exact)))


def _blank(texts: list[str], starts: list[int], spans: list[tuple[int, int]]) -> list[str]:
    """`texts` with the characters in `spans` (offsets into the texts joined by newlines) removed;
    a step left with nothing but blank space becomes ""."""
    out = []
    for text, start in zip(texts, starts, strict=True):
        end = start + len(text)
        cuts = sorted((max(a, start) - start, min(b, end) - start) for a, b in spans if a < end and b > start)
        if not cuts:
            out.append(text)
            continue
        kept, at = [], 0
        for a, b in cuts:
            kept.append(text[at:max(a, at)])
            at = max(at, b)
        kept.append(text[at:])
        out.append("\n".join(part.strip() for part in kept if part.strip()))
    return out


def _facts(body: str, body_at: int, step_of: Callable[[int], int], steps: dict[int, StepCode]) -> None:
    """Names assigned and read by each statement of a block, put in the step the statement starts in."""
    tree = _parse(body)
    if tree is None:
        return
    line_starts = [0]
    for line in body.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    for stmt in tree.body[:MAX_STATEMENTS]:
        at = steps.setdefault(step_of(body_at + line_starts[min(stmt.lineno - 1, len(line_starts) - 1)]), StepCode())
        at.statements += 1
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                into = at.defines if isinstance(node.ctx, ast.Store) else at.mentions
                if node.id not in _BUILTINS and node.id not in into:
                    into.append(node.id)


def _parse(body: str) -> ast.Module | None:
    """The block's syntax tree; for a block cut short, that of the longest run of whole lines that
    parses (at most 20 lines are dropped from the end)."""
    if len(body) > MAX_BLOCK_CHARS:
        return None
    lines = body.splitlines()
    for cut in range(min(len(lines), 20) + 1):
        try:
            return ast.parse("\n".join(lines[: len(lines) - cut]))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


@dataclass(frozen=True)
class _OutputCheck:
    claims: tuple[ClaimCheck, ...]
    printed: tuple[str, ...]


class Undecided(Exception):
    """The code does something this reading does not work out."""


def _check(code: str, written: list[str]) -> _OutputCheck:
    try:
        run = _Reading()
        run.block(code)
    except Undecided as exc:
        return _OutputCheck((_undecided(written, str(exc)),), ())
    except RecursionError:
        return _OutputCheck((_undecided(written, "expressions nested too deeply"),), ())
    printed = tuple(sorted(run.used))
    if len(run.lines) != len(written):
        n = len(run.lines)
        why = f"the code prints {n} line{'s' if n != 1 else ''}, the output has {len(written)}"
        return _OutputCheck((_undecided(written, why),), printed)
    return _OutputCheck(tuple(_line(got, said) for got, said in zip(run.lines, written, strict=True)), printed)


def _undecided(written: list[str], why: str) -> ClaimCheck:
    return ClaimCheck(text=f"prints {' / '.join(written)[:200]}", status="unverifiable", reason=why, kind=KIND)


def same_output(printed: str, written: str) -> bool | None:
    """Whether a written output line says what was printed: its numbers equal (within a relative
    1e-9) and the words around them the same; None when it is worded otherwise.

    >>> same_output("55.00000000000001", "55.0"), same_output("38", "54"), same_output("38", "38 dollars")
    (True, False, None)
    """
    got, said = _NUMBER.findall(printed), _NUMBER.findall(written)
    if _NUMBER.sub("#", printed).split() != _NUMBER.sub("#", written).split() or len(got) != len(said):
        return None
    return all(math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(got, said, strict=True))


def _line(got: str, said: str) -> ClaimCheck:
    text = f"prints {said[:200]}"
    same = same_output(got, said)
    if same is None:
        return ClaimCheck(text=text, status="unverifiable", kind=KIND,
                          reason=f"the code prints {got[:200]!r}, worded otherwise")
    if same:
        return ClaimCheck(text=text, status="valid", method=METHOD, kind=KIND)
    return ClaimCheck(text=text, status="invalid", expected=got[:200], method=METHOD, kind=KIND)


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs, "int": int, "float": float, "min": min, "max": max, "round": round,
    "math.sqrt": math.sqrt, "math.floor": math.floor, "math.ceil": math.ceil, "math.fabs": math.fabs,
}
_CONSTANTS = {"math.pi": math.pi, "math.e": math.e}


class _Reading:
    """Works out a block's statements in order: the names it assigns and the lines it prints."""

    def __init__(self) -> None:
        self.names: dict[str, Number] = {}
        self.lines: list[str] = []
        self.used: set[str] = set()  # names read by a print
        self._in_print = False

    def block(self, code: str) -> None:
        if len(code) > MAX_BLOCK_CHARS:
            raise Undecided(f"a code block longer than {MAX_BLOCK_CHARS} characters")
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise Undecided("the code does not parse as Python") from None
        if len(tree.body) > MAX_STATEMENTS:
            raise Undecided(f"more than {MAX_STATEMENTS} statements")
        for stmt in tree.body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            if all(a.name == "math" and a.asname is None for a in stmt.names) and not isinstance(stmt, ast.ImportFrom):
                return
            raise Undecided("an import other than math")
        if isinstance(stmt, ast.Assign):
            value = self.number(stmt.value) if not isinstance(stmt.value, ast.Tuple) else None
            for target in stmt.targets:
                self.assign(target, stmt.value, value)
            return
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            before = self.name(stmt.target.id)
            self.names[stmt.target.id] = self.binary(stmt.op, before, self.number(stmt.value))
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _called(stmt.value) == "print":
            self.print(stmt.value)
            return
        raise Undecided(f"a statement this reading does not work out ({type(stmt).__name__.lower()})")

    def assign(self, target: ast.expr, node: ast.expr, value: Number | None) -> None:
        if isinstance(target, ast.Name) and value is not None:
            self.names[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(node, ast.Tuple) and len(target.elts) == len(node.elts) \
                and all(isinstance(t, ast.Name) for t in target.elts):
            values = [self.number(e) for e in node.elts]
            for t, v in zip(target.elts, values, strict=True):
                self.names[t.id] = v  # type: ignore[attr-defined]
        else:
            raise Undecided("an assignment to something other than names")

    def print(self, call: ast.Call) -> None:
        if call.keywords:
            raise Undecided("print with keyword arguments")
        self._in_print = True
        try:
            parts = [self.text(a) for a in call.args]
        finally:
            self._in_print = False
        self.lines.extend(" ".join(parts).splitlines() or [""])

    def text(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(self.text(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            if node.conversion != -1:
                raise Undecided("a conversion in an f-string")
            spec = self.text(node.format_spec) if node.format_spec is not None else ""
            try:
                return format(self.number(node.value), spec)
            except ValueError:
                raise Undecided("a format this reading does not apply") from None
        return str(self.number(node))

    def name(self, name: str) -> Number:
        if name not in self.names:
            raise Undecided(f"{name} is used before it is assigned")
        if self._in_print:
            self.used.add(name)
        return self.names[name]

    def number(self, node: ast.expr) -> Number:
        if isinstance(node, ast.Constant):
            return self.checked(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.number(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.number(node.left), self.number(node.right))
        if isinstance(node, ast.Attribute) and _dotted(node) in _CONSTANTS:
            return _CONSTANTS[_dotted(node)]
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Undecided(f"an expression this reading does not work out ({type(node).__name__.lower()})")

    def call(self, node: ast.Call) -> Number:
        name = _called(node)
        if name is not None and name.split(".")[0] in self.names:
            raise Undecided(f"a call to {name}, which the code assigned a value to")
        if name == "sum" and len(node.args) == 1 and isinstance(node.args[0], ast.List | ast.Tuple) \
                and not node.keywords:
            total: Number = 0
            for e in node.args[0].elts:
                total = self.checked(total + self.number(e))
            return total
        fn = _FUNCTIONS.get(name or "")
        if fn is None or node.keywords:
            raise Undecided(f"a call to {name or 'a function'}")
        args = [self.number(a) for a in node.args]
        try:
            return self.checked(fn(*args))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError):
            raise Undecided(f"{name} fails on these values") from None

    def binary(self, op: ast.operator, a: Number, b: Number) -> Number:
        if isinstance(op, ast.Pow):
            if isinstance(a, int) and isinstance(b, int) and b > 0 and max(a.bit_length(), 1) * b > MAX_INT_BITS:
                raise Undecided(f"a power beyond {MAX_INT_BITS} bits")
            try:
                result = a**b
            except (OverflowError, ZeroDivisionError):
                raise Undecided("a power Python cannot work out") from None
            if isinstance(result, complex):
                raise Undecided("a complex power")
            return self.checked(result)
        fn = _BINARY.get(type(op))
        if fn is None:
            raise Undecided("an operator this reading does not work out")
        try:
            return self.checked(fn(a, b))
        except ZeroDivisionError:
            raise Undecided("a division by zero (the code would stop with an error)") from None
        except OverflowError:
            raise Undecided("a float overflow") from None

    @staticmethod
    def checked(value: object) -> Number:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Undecided("a value that is not a number")
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise Undecided(f"an integer beyond {MAX_INT_BITS} bits")
        return value


def _dotted(node: ast.expr) -> str:
    """``math.sqrt`` for an attribute of a name; "" for anything else (a call's result, a subscript)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def _called(call: ast.Call) -> str | None:
    return _dotted(call.func) or None
