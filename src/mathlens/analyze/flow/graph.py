"""The reasoning graph: steps as nodes, an edge i -> j when step j uses what step i introduced.

"Introduced" means a name step i defines (``A = -14``, ``g(x) = ...``) or a value or expression
it states as the result of a relation (the last side of ``... = 56``). Step j "uses" it when the
name, value or expression appears in j's parsed math, or, for names and numbers, in j's text
(so that a step whose math did not parse still links). ``∇f`` counts as a use of ``f_x``, ``f_y``
and ``f_z``. Small integers (|n| <= 10) are too common to be evidence of a dependency and are
ignored as values.

Final steps: the last step of each lettered part ((a), (b), ...) that has math, and the last step
that states a boxed answer or an "answer is" sentence (else the last step with math, else the
last step). A step with math from which no path leads to a final step is redundant. Steps
without math (framing sentences) are neither linked nor redundant.

Cost: items are looked up in an index (item -> steps that introduce it) and each step's text is
read once into a set of tokens, so building the graph is linear in the number of uses rather than
quadratic in the number of steps; a step keeps edges from its `MAX_PREDECESSORS` most recent
sources (and the graph records ``capped=True`` when one had more).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

_ANSWER = re.compile(r"\\boxed|\bfinal answer\b|\banswer is\b|\bthe answer\b|####", re.I)
_SMALL_INT = re.compile(r"^-?\d$|^-?10$")


@dataclass(frozen=True)
class StepFacts:
    """What the graph needs to know about one step."""

    text: str
    defines: tuple[str, ...]
    produces: tuple[str, ...]
    mentions: tuple[str, ...]
    has_math: bool
    label: str | None = None


def _introduced(step: StepFacts) -> set[str]:
    return {v for v in (*step.defines, *step.produces) if v and not _SMALL_INT.match(v)}


_PART = re.compile(r"^(?:part\s*)?\(?[a-hA-H]\)?$", re.I)


def _uses(step: StepFacts) -> set[str]:
    used = set(step.mentions)
    for name in step.mentions:
        if name.startswith("nabla_"):
            letter = name[len("nabla_"):]
            used |= {f"{letter}_x", f"{letter}_y", f"{letter}_z"}
    return used


#: Edges kept into one step, from its most recent sources.
MAX_PREDECESSORS = 32
_TEXT_ITEM = re.compile(r"-?\d+(?:/\d+)?|[A-Za-z]\w*")
_RUN = re.compile(r"[\w.]+")


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


def final_steps(steps: Sequence[StepFacts]) -> list[int]:
    """Every final step (see module notes), in order."""
    finals: set[int] = set()
    main = final_step(steps)
    if main is not None:
        finals.add(main)
    group: list[int] = []
    for i, step in enumerate(steps):
        if step.label and _PART.match(step.label) and group:
            with_math = [k for k in group if steps[k].has_math]
            if with_math:
                finals.add(with_math[-1])
            group = []
        group.append(i)
    if any(s.label and _PART.match(s.label) for s in steps):
        with_math = [k for k in group if steps[k].has_math]
        if with_math:
            finals.add(with_math[-1])
    return sorted(finals)


def final_step(steps: Sequence[StepFacts]) -> int | None:
    """Index of the step that gives the final answer (see module notes)."""
    if not steps:
        return None
    for i in range(len(steps) - 1, -1, -1):
        if _ANSWER.search(steps[i].text):
            return i
    for i in range(len(steps) - 1, -1, -1):
        if steps[i].has_math:
            return i
    return len(steps) - 1


def build_graph(steps: Sequence[StepFacts]) -> nx.DiGraph:
    """The dependency graph; each edge carries the shared items in its ``via`` attribute."""
    graph = nx.DiGraph()
    graph.graph["capped"] = False
    for i, _ in enumerate(steps):
        graph.add_node(i)
    sources: dict[str, list[int]] = {}  # item -> steps introducing it, in order
    for j, later in enumerate(steps):
        used = _uses(later)
        tokens = text_tokens(later.text)
        shared: dict[int, set[str]] = {}
        for item in used | (tokens & sources.keys()):
            if item not in used and not _TEXT_ITEM.fullmatch(item):
                continue
            for i in sources.get(item, ()):
                shared.setdefault(i, set()).add(item)
        if len(shared) > MAX_PREDECESSORS:
            graph.graph["capped"] = True
        for i in sorted(shared)[-MAX_PREDECESSORS:]:
            graph.add_edge(i, j, via=sorted(shared[i])[:5])
        for item in _introduced(later):
            sources.setdefault(item, []).append(j)
    return graph


def redundant_steps(graph: nx.DiGraph, steps: Sequence[StepFacts], finals: Sequence[int]) -> list[int]:
    """Steps with math from which no final step can be reached."""
    reaching: set[int] = set()
    for final in finals:
        reaching |= nx.ancestors(graph, final) | {final}
    return [i for i, s in enumerate(steps) if s.has_math and i not in reaching]
