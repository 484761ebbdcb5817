"""Answers that list several values: solution sets, systems, several points.

The rule (`EquivalenceConfig.list_order`, documented in docs/grading.md):

* a bare list (`1, -2`; `1; 2; 3`; `x = -2 or x = 1`; `\\{4, -1\\}`; `±3`) is a set by default:
  any order matches, each value once (`list_order="ordered"` compares position by position);
* a parenthesised tuple, a vector or a point is always ordered, and a list of points is a set of
  ordered points (`(11,7) or (7,11)` equals `(7,11), (11,7)` but not `(7,11)`);
* assignments to different names (`x = 2, y = 3`, a `cases` system) match by name, or, against a
  tuple, in the order they are written (`x = 2, y = 3` equals `(2, 3)`).

Items are compared by the caller's comparison (`same`), one pair at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from mathlens.analyze.grading.forms import is_tuple, items
from mathlens.analyze.readers.statements import split_equals, split_top_level

ListVerdict = tuple[Literal["equal", "different"], str]
Same = Callable[[str, str], bool]


def _named(values: list[str]) -> tuple[list[str], list[str] | None]:
    """Split `name = value` items: (values, names) with names None when they are not all named."""
    pairs = [split_equals(v) for v in values]
    if not all(len(p) == 2 and p[0].strip() and p[1].strip() and len(p[0].strip()) <= 12 for p in pairs):
        return values, None
    names = [p[0].strip() for p in pairs]
    vals = [p[1].strip() for p in pairs]
    if len(set(names)) == 1:
        return vals, None  # `x = -2 or x = 1`: one unknown, several solutions
    return vals, names


def tuple_entries(s: str) -> list[str]:
    """The entries of `(a, b)`, `<a, b>` or `\\langle a, b \\rangle`."""
    t = s.strip()
    inner = t[len("\\langle"): -len("\\rangle")] if t.startswith("\\langle") else t[1:-1]
    return [e.strip() for e in split_top_level(inner, ",")]


def _ordered(a: list[str], b: list[str], same: Same) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))


def _as_set(a: list[str], b: list[str], same: Same) -> bool:
    if len(a) != len(b):
        return False
    left = list(b)
    for x in a:
        hit = next((i for i, y in enumerate(left) if same(x, y)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def compare_lists(pred: str, ref: str, order: Literal["set", "ordered"], same: Same) -> ListVerdict | None:
    """Compare two answers when at least one is a list; None when neither is."""
    p_items, r_items = items(pred), items(ref)
    if len(p_items) < 2 and len(r_items) < 2:
        return None
    p_vals, p_names = _named(p_items)
    r_vals, r_names = _named(r_items)
    if p_names and r_names:
        if sorted(p_names) != sorted(r_names):
            return "different", "system"
        wanted = dict(zip(r_names, r_vals, strict=True))
        ok = all(same(v, wanted[n]) for n, v in zip(p_names, p_vals, strict=True))
        return ("equal" if ok else "different"), "system"
    for vals, names, other in ((p_vals, p_names, r_items), (r_vals, r_names, p_items)):
        if len(other) == 1 and is_tuple(other[0]) and len(vals) > 1:
            entries = tuple_entries(other[0])
            ok = _ordered(vals, entries, same) if vals is p_vals else _ordered(entries, vals, same)
            return ("equal" if ok else "different"), "tuple"
        if names and len(other) == len(vals):
            ok = _ordered(vals, other, same) if vals is p_vals else _ordered(other, vals, same)
            return ("equal" if ok else "different"), "system"
    if len(p_vals) != len(r_vals):
        for many, one in ((p_vals, r_vals), (r_vals, p_vals)):
            # `\\boxed{15\\frac{39}{40}}, or \\boxed{\\frac{639}{40}}`: one value written two ways
            if len(one) == 1 and len(many) <= 4 and all(same(v, many[0]) for v in many[1:]):
                ok = same(many[0], one[0]) if many is p_vals else same(one[0], many[0])
                return ("equal" if ok else "different"), "same_value"
        return "different", "list"
    ok = _ordered(p_vals, r_vals, same) if order == "ordered" else _as_set(p_vals, r_vals, same)
    return ("equal" if ok else "different"), ("list" if order == "ordered" else "set")
