"""Layout of a reasoning graph (steps as nodes, dependencies as edges) for inline SVG.

A layered layout: a step's column is one more than the deepest step it depends on (longest path
from a step with no dependencies), so a straight chain reads left to right and steps that do not
depend on each other stack in one column. Wide graphs wrap into bands of `max_cols` columns.
Edges that skip columns within a band arc above the nodes they pass, so they never run through a
node. Only edges from an earlier to a later step are laid out (the analysis defines edges that way;
anything else is listed as ignored rather than drawn as a loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

LEVEL_FILL = {"low": "#cfe8cf", "medium": "#fbe0a6", "high": "#f3aaa2"}
UNKNOWN_FILL = "#e3e3ee"
REDUNDANT_FILL = "#eeeeee"
NODE_W, NODE_H = 78.0, 36.0
COL_GAP, ROW_GAP, BAND_GAP = 40.0, 16.0, 40.0
MARGIN = 14.0


@dataclass(frozen=True)
class StepNode:
    """What the layout needs to know about one step."""

    index: int
    label: str
    text: str
    level: str | None = None
    verification: str | None = None  # valid | invalid | unverifiable | None
    redundant: bool = False


@dataclass(frozen=True)
class PlacedNode:
    index: int
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str
    stroke_width: float
    dashed: bool
    label: str
    mark: str
    title: str
    css: str


@dataclass(frozen=True)
class PlacedEdge:
    source: int
    target: int
    path: str


@dataclass(frozen=True)
class GraphLayout:
    width: float
    height: float
    nodes: tuple[PlacedNode, ...]
    edges: tuple[PlacedEdge, ...]
    ignored_edges: tuple[tuple[int, int], ...] = ()


def layers(indices: Sequence[int], edges: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Column of each step: 0 without dependencies, else 1 + the deepest column among its sources."""
    known = set(indices)
    preds: dict[int, list[int]] = {i: [] for i in indices}
    for a, b in edges:
        if a in known and b in known and a < b:
            preds[b].append(a)
    col: dict[int, int] = {}
    for i in sorted(indices):  # sources of i are all smaller, so already placed
        col[i] = 1 + max((col[p] for p in preds[i]), default=-1)
    return col


def _node_style(step: StepNode) -> tuple[str, str, float, bool, str, str]:
    fill = LEVEL_FILL.get(step.level or "", UNKNOWN_FILL)
    stroke, width, dashed, mark, css = "#555555", 1.2, False, "", "node"
    if step.verification == "valid":
        mark = "✓"
    elif step.verification == "unverifiable":
        mark = "?"
    if step.redundant:
        fill, stroke, dashed, css = REDUNDANT_FILL, "#9a9a9a", True, "node redundant"
    if step.verification == "invalid":
        stroke, width, mark, css = "#c0142a", 3.0, "✗", css + " invalid"
    return fill, stroke, width, dashed, mark, css


def layout_graph(steps: Sequence[StepNode], edges: Sequence[tuple[int, int]], max_cols: int = 8) -> GraphLayout:
    """Place steps and route edges; see the module docstring for the rules."""
    if not steps:
        return GraphLayout(width=0, height=0, nodes=(), edges=())
    by_index = {s.index: s for s in steps}
    col = layers(list(by_index), edges)
    n_cols = max(col.values()) + 1
    per_col: dict[int, list[int]] = {}
    for i in sorted(by_index):
        per_col.setdefault(col[i], []).append(i)
    band_rows = [0] * ((n_cols + max_cols - 1) // max_cols)
    for c, members in per_col.items():
        band_rows[c // max_cols] = max(band_rows[c // max_cols], len(members))
    band_top = [MARGIN + 14.0]  # room for arcs above the first band
    for rows in band_rows[:-1]:
        band_top.append(band_top[-1] + rows * (NODE_H + ROW_GAP) + BAND_GAP + 14.0)
    pos: dict[int, tuple[float, float]] = {}
    for c, members in per_col.items():
        band = c // max_cols
        x = MARGIN + (c % max_cols) * (NODE_W + COL_GAP)
        for r, i in enumerate(members):
            pos[i] = (x, band_top[band] + r * (NODE_H + ROW_GAP))
    nodes = []
    for i in sorted(by_index):
        s = by_index[i]
        fill, stroke, width, dashed, mark, css = _node_style(s)
        x, y = pos[i]
        title = f"Step {s.label}: {s.text}"
        nodes.append(PlacedNode(index=i, x=x, y=y, w=NODE_W, h=NODE_H, fill=fill, stroke=stroke,
                                stroke_width=width, dashed=dashed, label=s.label, mark=mark,
                                title=title[:400], css=css))
    placed, ignored = [], []
    for a, b in edges:
        if a not in pos or b not in pos or a >= b:
            ignored.append((a, b))
            continue
        placed.append(PlacedEdge(source=a, target=b, path=_route(pos[a], pos[b], col[a], col[b], max_cols)))
    width = MARGIN * 2 + min(n_cols, max_cols) * (NODE_W + COL_GAP) - COL_GAP
    height = band_top[-1] + band_rows[-1] * (NODE_H + ROW_GAP) - ROW_GAP + MARGIN
    return GraphLayout(width=width, height=height, nodes=tuple(nodes), edges=tuple(placed),
                       ignored_edges=tuple(ignored))


def _route(src: tuple[float, float], dst: tuple[float, float], c_src: int, c_dst: int, max_cols: int) -> str:
    """An SVG path from the source's right side to the target's left side (or top, across bands)."""
    (x1, y1), (x2, y2) = src, dst
    if c_src // max_cols != c_dst // max_cols:
        sx, sy = x1 + NODE_W / 2, y1 + NODE_H
        tx, ty = x2 + NODE_W / 2, y2
        mid = (sy + ty) / 2
        return f"M{sx:.1f},{sy:.1f} C{sx:.1f},{mid:.1f} {tx:.1f},{mid:.1f} {tx:.1f},{ty:.1f}"
    sx, sy = x1 + NODE_W, y1 + NODE_H / 2
    tx, ty = x2, y2 + NODE_H / 2
    if c_dst - c_src <= 1:
        dx = (tx - sx) / 2
        return f"M{sx:.1f},{sy:.1f} C{sx + dx:.1f},{sy:.1f} {tx - dx:.1f},{ty:.1f} {tx:.1f},{ty:.1f}"
    # skip edge: leave from the top, arc over the columns in between, enter the target's top
    sx, sy = x1 + NODE_W * 0.65, y1
    tx, ty = x2 + NODE_W * 0.35, y2
    lift = min(y1, y2) - 10.0 - 3.0 * (c_dst - c_src)
    return f"M{sx:.1f},{sy:.1f} C{sx:.1f},{lift:.1f} {tx:.1f},{lift:.1f} {tx:.1f},{ty:.1f}"
