"""The reasoning graph: steps as nodes, an edge i -> j when step j uses what step i introduced.

"Introduced" means a name step i defines (``A = -14``, ``g(x) = ...``), a name or expression it
states a result for (the left side of ``f_x = 2xy``, ``∇f = <2xy, x^2>``, ``||w|| = sqrt(2)``), or
a value or expression it states as the result of a relation (the last side of ``... = 56``, and
each entry of a stated point or vector ``<-8, 1>``). Step j "uses" it when the name, value or
expression appears in j's parsed math (an entry of a tuple j mentions counts), or, for names and
numbers, in j's text (so that a step whose math did not parse still links); a function at a number stated
as a result (``F(0) = 0``) is found in later text as written (``F(2) - F(0)``), and a derivative
at a point uses the derivative. ``∇f`` counts as a use of ``f_x``, ``f_y`` and ``f_z``, and
``f_x``, ``f_xy`` and ``∇f`` as a use of ``f``; a derivative, integral or limit of an expression
uses the expression (``Derivative(x**2 + 3*x, x)`` after ``A = x^2 + 3x``). Solving goes on
from the latest equation in the same unknown: a step that states, rewrites or solves an equation
in x, or gives x a value, uses the latest earlier step with an equation in x (``2x + 6 = 14``,
then ``2x = 8``, then ``x = 4``). Small
integers (|n| <= 10) are too common to be evidence of a dependency and are ignored as values,
except together: a step that states a tuple (``∇f = (-8, 1)``) whose every entry is a result stated
before (``f_x(-1, 4) = -8``, ``f_y(-1, 4) = 1``), one of them neither 0 nor ±1, uses the steps that
stated its small entries.

Answer steps restate: a step that gives the answer (``Final answer: ...``, ``\\boxed``, "the
answer is") also links to the latest earlier step that mentions each expression it restates
(``9/sqrt(2)`` stated inside a chain that produced nothing else, a vector, a root), except bare
names and small numbers. An answer step that still links to nothing (its math did not parse, or it
says "see above") leaves the last step with math before it final as well.

Final steps: the answer step (the last step that states a boxed answer or an "answer is" /
"Final answer" sentence, else the last step with math, else the last step), the last step with
math of each lettered part ((a), (b), ...), and, when the question has k parts and the solution does
not label them, the last k steps with math before the answer step that no later step uses (each
answers a part; an answer line that restates every part leaves no such step). A truly redundant
step in such a solution is therefore only found when there are more dead ends than parts.

A step that states something (a definition, a result, a relation) from which no path leads to a
final step is redundant: nothing that reaches the answer depends on it. Steps that state nothing
(framing sentences, a heading that names a variable, "the derivative is 6x" said in words) are
never redundant: no later step can be seen to use them, so the graph cannot tell. These rules
make the redundant set depend on what the steps say, not on how they are laid out (numbered,
``Step k:``, paragraphs, display LaTeX, with or without a closing answer line): see
``tests/cases/flow/redundancy_layouts.yaml``.

Cost: items are looked up in an index (item -> steps that introduce it) and each step's text is
read once into a set of tokens, so building the graph is linear in the number of uses rather than
quadratic in the number of steps; a step keeps edges from its `MAX_PREDECESSORS` most recent
sources (and the graph records ``capped=True`` when one had more).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

_ANSWER = re.compile(r"\\boxed|\bfinal answer\b|\banswer is\b|\bthe answer\b|####", re.I)
_SMALL_INT = re.compile(r"^-?\d$|^-?10$")
#: entries that say nothing about which tuple a step uses
_TRIVIAL = re.compile(r"^-?[01]$")
#: the left side of a claim that names what the step states a result for
_CLAIM_NAME = re.compile(r"^((?:norm\()?[A-Za-z][\w']*(?:\([^=<>]*\))?\)?) = ")
#: a question's part labels: "(a) ...", "(b) ..."
_QUESTION_PART = re.compile(r"(?:^|\s)\(([a-h])\)\s", re.I)


class StepGraph:
    """A directed graph of steps: the few operations the flow analysis needs, without networkx
    (whose import alone costs a third of a second at every start-up)."""

    def __init__(self) -> None:
        self.graph: dict[str, Any] = {}
        self._succ: dict[int, dict[int, dict[str, Any]]] = {}
        self._pred: dict[int, dict[int, dict[str, Any]]] = {}

    def add_node(self, node: int) -> None:
        """Add `node` (no-op when present)."""
        self._succ.setdefault(node, {})
        self._pred.setdefault(node, {})

    def add_edge(self, source: int, target: int, **data: Any) -> None:
        """Add the edge ``source -> target`` with its data (``via``)."""
        self.add_node(source)
        self.add_node(target)
        self._succ[source][target] = data
        self._pred[target][source] = data

    def predecessors(self, node: int) -> Iterator[int]:
        """The steps `node` uses directly."""
        return iter(self._pred.get(node, {}))

    def in_degree(self, node: int) -> int:
        """How many steps `node` uses."""
        return len(self._pred.get(node, {}))

    def out_degree(self, node: int) -> int:
        """How many steps use `node`."""
        return len(self._succ.get(node, {}))

    def edges(self, data: bool = False) -> list[Any]:
        """Every edge as ``(source, target)``, or ``(source, target, data)`` with `data`."""
        return [(a, b, d) if data else (a, b) for a, targets in self._succ.items() for b, d in targets.items()]

    def ancestors(self, node: int) -> set[int]:
        """Every step from which `node` can be reached (not `node` itself)."""
        seen: set[int] = set()
        todo = list(self._pred.get(node, {}))
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(self._pred.get(k, {}))
        seen.discard(node)
        return seen


@dataclass(frozen=True)
class StepFacts:
    """What the graph needs to know about one step (`claims`: the text of each checked relation)."""

    text: str
    defines: tuple[str, ...]
    produces: tuple[str, ...]
    mentions: tuple[str, ...]
    has_math: bool
    label: str | None = None
    claims: tuple[str, ...] = ()
    #: the unknowns of the equations the step states, rewrites or solves (``kx = (x+2)^2``: k, x)
    unknowns: tuple[str, ...] = ()


#: names in a printed claim that are functions or constants, not unknowns
_NOT_UNKNOWNS = frozenset({"sqrt", "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "sinh",
                           "cosh", "tanh", "log", "exp", "Abs", "pi", "E", "I", "oo", "zoo", "nan", "floor",
                           "ceiling", "factorial", "binomial", "Rational", "Derivative", "Integral", "Limit",
                           "Sum", "Subs", "Mod", "gcd", "lcm", "re", "im", "sign", "at"})
_CLAIM_NAME_TOKEN = re.compile(r"[A-Za-z_]\w*")


def equation_unknowns(equations: Iterable[str]) -> tuple[str, ...]:
    """The unknowns of a step's equations, from the printed claims the checker read as equations
    (`ClaimCheck.is_equation`)."""
    names: set[str] = set()
    for text in equations:
        names |= set(_CLAIM_NAME_TOKEN.findall(text.split(" (")[0])) - _NOT_UNKNOWNS
    return tuple(sorted(names))


def components(item: str) -> list[str]:
    """The entries of a tuple key ``(a, b)`` (top level only); ``[]`` for anything else.

    >>> components("(2*x*y, x**2)"), components("(-8, 1)"), components("sqrt(2)")
    (['2*x*y', 'x**2'], ['-8', '1'], [])
    """
    if not (item.startswith("(") and item.endswith(")")):
        return []
    parts, depth, start = [], 0, 1
    for k, ch in enumerate(item[1:-1], start=1):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return []  # "(a)*(b)": the brackets do not enclose the whole key
        elif ch == "," and depth == 0:
            parts.append(item[start:k].strip())
            start = k + 1
    if not parts:
        return []
    parts.append(item[start:-1].strip())
    return [p for p in parts if p]


#: an operator applied to an expression: ``Subs(expr, x, a)``, ``Derivative(expr, x)``, ...
_OPERATOR = re.compile(r"^(?:Subs|Derivative|Integral|Limit)\(")
#: a name derived from a function's name: a partial derivative (``f_x``, ``f_xy``) or a gradient
_DERIVED_NAME = re.compile(r"^(?:nabla_([A-Za-z])|([A-Za-z])_[a-z]{1,3})$")


def _with_components(items: set[str]) -> set[str]:
    """`items` with the entries of every tuple among them, and the expression an operator is
    applied to (``Subs(expr, x, a)``: a derivative at a point uses the derivative;
    ``Derivative(x**2*y, x)`` uses ``x**2*y``)."""
    out = set(items)
    todo = list(items)
    while todo:
        item = todo.pop()
        head = _OPERATOR.match(item)
        inner = components(item[head.end() - 1:]) if head else []
        for part in [*components(item), *inner[:1]]:
            if part not in out:
                out.add(part)
                todo.append(part)
    return out


def _claimed_names(step: StepFacts) -> set[str]:
    """Left sides the step states a result for (``f_x``, ``nabla_f``, ``norm(w)``)."""
    out = set()
    for claim in step.claims:
        m = _CLAIM_NAME.match(claim)
        if m:
            out.add(m.group(1))
    return out


def _introduced(step: StepFacts) -> set[str]:
    items = _with_components({*step.defines, *step.produces}) | _claimed_names(step)
    return {v for v in items if v and not _SMALL_INT.match(v)}


_PART = re.compile(r"^(?:part\s*)?\(?[a-hA-H]\)?$", re.I)


def _uses(step: StepFacts) -> set[str]:
    used = _with_components(set(step.mentions))
    for name in step.mentions:
        if name.startswith("nabla_"):
            letter = name[len("nabla_"):]
            used |= {f"{letter}_x", f"{letter}_y", f"{letter}_z"}
        derived = _DERIVED_NAME.match(name)
        if derived:  # f_x and ∇f are worked out from f
            used.add(derived.group(1) or derived.group(2))
    return used


#: Edges kept into one step, from its most recent sources.
MAX_PREDECESSORS = 32
_TEXT_ITEM = re.compile(r"-?\d+(?:/\d+)?|[A-Za-z]\w*")
_RUN = re.compile(r"[\w.]+")
#: a function at a number, as a claim's left side: "F(0)", "g(2)"
_CALL = re.compile(r"^[A-Za-z]\w*\(-?[\d.]+(?:,\s*-?[\d.]+)*\)$")
#: the most such items looked for in later text (keeps the graph linear in the steps)
MAX_CALLS = 64
#: a bare name: too common to show that an answer restates a step
_BARE_NAME = re.compile(r"^[A-Za-z]\w*$")


def _in_text(item: str, text: str) -> bool:
    """Whether a name or number stands on its own in `text` (not inside a longer word or number)."""
    if _TEXT_ITEM.fullmatch(item):
        return re.search(rf"(?<![\w.]){re.escape(item)}(?![\w.])", text) is not None
    return False


def text_tokens(text: str) -> set[str]:
    """Every name or number `_in_text` can find in `text`, from one pass over it.

    >>> sorted(text_tokens("so x-3 = -3, y = 1/2 and 2.5"))
    ['-3', '1', '1/2', '2', '3', 'and', 'so', 'x', 'y']
    """
    out: set[str] = set()
    runs = list(_RUN.finditer(text))
    for k, m in enumerate(runs):
        run = m.group(0)
        out.add(run)
        a = m.start()
        negative = a > 0 and text[a - 1] == "-" and (a < 2 or not _word_char(text[a - 2]))
        if negative:
            out.add("-" + run)
        nxt = runs[k + 1] if k + 1 < len(runs) else None
        if nxt is not None and nxt.start() == m.end() + 1 and text[m.end()] == "/":
            out.add(f"{run}/{nxt.group(0)}")
            if negative:
                out.add(f"-{run}/{nxt.group(0)}")
    return {t for t in out if _TEXT_ITEM.fullmatch(t)}


def _word_char(ch: str) -> bool:
    return ch == "." or ch.isalnum() or ch == "_"


def question_parts(question: str | None) -> int:
    """How many lettered parts ``(a)``, ``(b)``, ... a question has (0 when it has none or one).

    >>> question_parts("For f = x^2 y, (a) find ∇f (b) the rate at (1, 2)"), question_parts("Find f'(x).")
    (2, 0)
    """
    if not question:
        return 0
    letters = {m.group(1).lower() for m in _QUESTION_PART.finditer(" " + question)}
    return len(letters) if len(letters) > 1 else 0


def answer_step(steps: Sequence[StepFacts]) -> int | None:
    """The step that states the answer in words or a box, if any."""
    for i in range(len(steps) - 1, -1, -1):
        if _ANSWER.search(steps[i].text):
            return i
    return None


def final_steps(steps: Sequence[StepFacts], graph: StepGraph | None = None, parts: int = 0) -> list[int]:
    """Every final step (see module notes), in order.

    Without `graph` only the answer step and the last step of each lettered part are found (the
    rules that need links, an answer step that links to nothing and unlabeled parts, are skipped).
    """
    finals: set[int] = set()
    main = final_step(steps)
    if main is not None:
        finals.add(main)
    group: list[int] = []
    labelled = any(s.label and _PART.match(s.label) for s in steps)
    for i, step in enumerate(steps):
        if step.label and _PART.match(step.label) and group:
            with_math = [k for k in group if steps[k].has_math]
            if with_math:
                finals.add(with_math[-1])
            group = []
        group.append(i)
    if labelled:
        with_math = [k for k in group if steps[k].has_math]
        if with_math:
            finals.add(with_math[-1])
    if graph is None or main is None:
        return sorted(finals)
    if graph.in_degree(main) == 0 and (main == answer_step(steps) or not steps[main].has_math):
        before = [k for k in range(main) if steps[k].has_math]
        if before:
            finals.add(before[-1])
    if parts > 1 and not labelled:
        sinks = [k for k in range(main) if steps[k].has_math and graph.out_degree(k) == 0]
        finals.update(sinks[-parts:])
    return sorted(finals)


def final_step(steps: Sequence[StepFacts]) -> int | None:
    """Index of the step that gives the final answer (see module notes)."""
    if not steps:
        return None
    found = answer_step(steps)
    if found is not None:
        return found
    for i in range(len(steps) - 1, -1, -1):
        if steps[i].has_math:
            return i
    return len(steps) - 1


def build_graph(steps: Sequence[StepFacts]) -> StepGraph:
    """The dependency graph; each edge carries the shared items in its ``via`` attribute."""
    graph = StepGraph()
    graph.graph["capped"] = False
    for i, _ in enumerate(steps):
        graph.add_node(i)
    sources: dict[str, list[int]] = {}  # item -> steps introducing it, in order
    seen: dict[str, int] = {}  # item -> latest step mentioning or introducing it
    answer = answer_step(steps)
    calls: list[str] = []  # claimed values of a function at a point ("F(0)"), found in later text
    # stated tuples of numbers ("<-8, 1>") -> their entries: a step that uses every entry (small
    # ones included, which are too common to count alone) uses the tuple
    tuples: dict[str, frozenset[str]] = {}
    # unknown -> the latest step stating an equation in it: solving an equation goes on from the
    # equation before it in the same unknown ("kx = (x+2)^2", then "-x^2 + (k-4)x - 4 = 0")
    equations: dict[str, int] = {}
    # small integers stated as results ("f_y(-1, 4) = 1") -> the latest step stating each: too
    # common to link alone, they link a later tuple whose every entry is a stated result
    small_results: dict[str, int] = {}
    for j, later in enumerate(steps):
        used = _uses(later)
        introduced = _introduced(later)
        tokens = text_tokens(later.text)
        shared: dict[int, set[str]] = {}
        for item in used | (tokens & sources.keys()):
            if item not in used and not _TEXT_ITEM.fullmatch(item):
                continue
            for i in sources.get(item, ()):
                shared.setdefault(i, set()).add(item)
        for item, parts in tuples.items():  # "64 = (-8)^2 and 1 = 1^2" uses <-8, 1> entry by entry
            if item not in shared_items(shared) and parts <= (used | tokens):
                for i in sources.get(item, ()):
                    shared.setdefault(i, set()).add(item)
        for item in used | introduced:  # "∇f = (-8, 1)" after "f_x(-1, 4) = -8" and "f_y(-1, 4) = 1"
            entries = components(item)
            if len(entries) >= 2 and any(not _TRIVIAL.match(p) for p in entries) \
                    and all(p in sources or p in small_results for p in entries):
                for p in entries:
                    if p in small_results:
                        shared.setdefault(small_results[p], set()).add(p)
        for name in {*later.unknowns, *later.defines}:  # a value found for an unknown solves its equation
            if name in equations:
                shared.setdefault(equations[name], set()).add(f"equation in {name}")
        compact = later.text.replace(" ", "")
        for item in calls:
            if item in compact:
                for i in sources[item]:
                    shared.setdefault(i, set()).add(item)
        if j == answer:
            for item in used:
                restated = seen.get(item)
                if restated is not None and not _BARE_NAME.match(item) and not _SMALL_INT.match(item):
                    shared.setdefault(restated, set()).add(item)
        if len(shared) > MAX_PREDECESSORS:
            graph.graph["capped"] = True
        for i in sorted(shared)[-MAX_PREDECESSORS:]:
            graph.add_edge(i, j, via=sorted(shared[i])[:5])
        for item in introduced:
            sources.setdefault(item, []).append(j)
            entries = components(item)
            if len(entries) >= 2 and len(tuples) < MAX_CALLS and any(not _TRIVIAL.match(p) for p in entries) \
                    and all(_TEXT_ITEM.fullmatch(p) for p in entries):
                tuples[item] = frozenset(entries)
            if _CALL.match(item) and item not in calls and len(calls) < MAX_CALLS:
                calls.append(item)
        for item in used | introduced:
            seen[item] = j
        for value in later.produces:
            if _SMALL_INT.match(value):
                small_results[value] = j
        for name in later.unknowns:
            equations[name] = j
    return graph


def shared_items(shared: dict[int, set[str]]) -> set[str]:
    """Every item already linking the step to some earlier one."""
    return {item for items in shared.values() for item in items}


def redundant_steps(graph: StepGraph, steps: Sequence[StepFacts], finals: Sequence[int]) -> list[int]:
    """Steps that state something from which no final step can be reached (see module notes)."""
    reaching: set[int] = set()
    for final in finals:
        reaching |= graph.ancestors(final) | {final}
    return [i for i, s in enumerate(steps)
            if s.has_math and (s.defines or s.produces or s.claims) and i not in reaching]
