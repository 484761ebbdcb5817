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


def _in_text(item: str, text: str) -> bool:
    if re.fullmatch(r"-?\d+(?:/\d+)?|[A-Za-z]\w*", item):
        return re.search(rf"(?<![\w.]){re.escape(item)}(?![\w.])", text) is not None
    return False


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
    for i, _ in enumerate(steps):
        graph.add_node(i)
    for j, later in enumerate(steps):
        used = _uses(later)
        for i in range(j):
            introduced = _introduced(steps[i])
            shared = (introduced & used) | {v for v in introduced - used if _in_text(v, later.text)}
            if shared:
                graph.add_edge(i, j, via=sorted(shared)[:5])
    return graph


def redundant_steps(graph: nx.DiGraph, steps: Sequence[StepFacts], finals: Sequence[int]) -> list[int]:
    """Steps with math from which no final step can be reached."""
    reaching: set[int] = set()
    for final in finals:
        reaching |= nx.ancestors(graph, final) | {final}
    return [i for i, s in enumerate(steps) if s.has_math and i not in reaching]
