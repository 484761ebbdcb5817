"""Report sections and table exporters compute nothing: every figure comes from the analysis that owns it.

A figure (a mean, a share, an interval, a count over entries) is computed once, by its analysis,
and stored in that analysis's document; the page and the exported tables only select and render
it. This test reads the source of every report section (`SECTIONS`) and every table builder of
the exporter and refuses what computing would need there:

- importing `statistics`, `math`, `numpy` or `collections.Counter`, or a function (not a model
  class) from `mathlens.stats`;
- calling `sum`, `statistics`-style means, `Counter`, `abs`, `divmod`, `pow`;
- arithmetic: `-`, `*`, `/`, `//`, `**`, `%`, `+` with a number, and augmented assignment
  (`x += ...`) of anything but text or a literal sequence.

Three kinds of arithmetic are layout, not figures, and are let through: column positions inside
`range(...)`, `n + 1` / `n - 1` (a 1-based number shown, or the index it names), and `/` joining
a path with a string.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from pydantic import BaseModel

from mathlens.report.registry import SECTIONS

SRC = Path(__file__).resolve().parents[2] / "src" / "mathlens"
#: the exporter's modules that turn documents into tables (the rest write files in a format)
EXPORT_BUILDERS = ("agreement", "calculus", "maple", "tutoring")
FILES = [SRC / "report" / "sections" / f"{name}.py" for name in SECTIONS] + [
    SRC / "report" / "export" / f"{name}.py" for name in EXPORT_BUILDERS]

ARITHMETIC = (ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod)
BANNED_MODULES = ("statistics", "math", "numpy")
BANNED_CALLS = {"sum", "mean", "fmean", "stdev", "median", "bootstrap_ci", "Counter", "abs", "divmod", "pow"}


def _is_text_or_sequence(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.IfExp):
        return _is_text_or_sequence(node.body) and _is_text_or_sequence(node.orelse)
    return isinstance(node, ast.List | ast.Tuple | ast.ListComp | ast.GeneratorExp | ast.JoinedStr)


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _is_one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1 and not isinstance(node.value, bool)


def _layout_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside `range(...)` calls: column positions."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            for arg in node.args:
                inside.update(id(n) for n in ast.walk(arg))
    return inside


def _stats_import_is_a_model(module: str, name: str) -> bool:
    found = getattr(importlib.import_module(module), name, None)
    return inspect.isclass(found) and issubclass(found, BaseModel)


def computations(source: str) -> list[str]:
    """What in `source` computes (line: what), by the rules of the module notes."""
    tree = ast.parse(source)
    layout = _layout_nodes(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in BANNED_MODULES or alias.name.startswith("mathlens.stats"):
                    what = f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in BANNED_MODULES:
                what = f"from {module} import"
            elif module == "collections" and any(a.name == "Counter" for a in node.names):
                what = "from collections import Counter"
            elif module.startswith("mathlens.stats"):
                functions = [a.name for a in node.names if not _stats_import_is_a_model(module, a.name)]
                what = f"from {module} import {', '.join(functions)}" if functions else None
        elif isinstance(node, ast.BinOp) and id(node) not in layout:
            if isinstance(node.op, ast.Div) and (_is_text_or_sequence(node.left) or _is_text_or_sequence(node.right)):
                continue  # a path joined with a name
            if isinstance(node.op, ast.Mod) and _is_text_or_sequence(node.left):
                continue  # %-formatting
            if isinstance(node.op, ast.Add | ast.Sub) and _is_one(node.right):
                continue  # a 1-based number shown, or the index it names
            if isinstance(node.op, ARITHMETIC) or (isinstance(node.op, ast.Add)
                                                  and (_is_number(node.left) or _is_number(node.right))):
                what = f"arithmetic ({type(node.op).__name__})"
        elif isinstance(node, ast.AugAssign) and not _is_text_or_sequence(node.value):
            what = f"augmented assignment ({type(node.op).__name__})"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BANNED_CALLS:
            what = f"call to {node.func.id}()"
        if what is not None:
            found.append(f"{getattr(node, 'lineno', '?')}: {what}")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_module_computes_nothing(path: Path) -> None:
    assert computations(path.read_text(encoding="utf-8")) == [], path


COMPUTING = {
    "import statistics\n": "import statistics",
    "from mathlens.stats.bootstrap import bootstrap_ci\n": "bootstrap_ci",
    "from collections import Counter\n": "Counter",
    "x = sum(e.total for e in entries)\n": "sum",
    "x = 100 * e.share\n": "Mult",
    "x = e.earned / e.possible\n": "Div",
    "x = e.percent - avg\n": "Sub",
    "x = e.total + 0.5\n": "Add",
    "for e in entries:\n    n += e.count\n": "augmented",
}
RENDERING = [
    "from mathlens.stats.bootstrap import CI\n",
    "s = 'a'\ns += f' ± {sd:.3f}'\n",
    "rows = []\nrows += [(a, b)]\n",
    "label = f'repeat {r.repeat + 1}'\n",
    "text = steps[s.step - 1]\n",
    "path = root / 'analysis' / f'{name}.jsonl'\n",
    "decimals = {i: 1 for i in range(2, 2 + len(codes))}\n",
]


@pytest.mark.parametrize(("source", "word"), COMPUTING.items())
def test_the_check_finds_computing(source: str, word: str) -> None:
    found = computations(source)
    assert len(found) == 1 and word in found[0], found


@pytest.mark.parametrize("source", RENDERING)
def test_the_check_lets_rendering_through(source: str) -> None:
    assert computations(source) == []


def test_every_section_and_builder_is_read() -> None:
    assert all(p.is_file() for p in FILES)
    assert len(FILES) == len(SECTIONS) + len(EXPORT_BUILDERS)
