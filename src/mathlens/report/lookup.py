"""Tolerant readers for analysis documents.

Each analysis writes its own JSON shape into `RUN/analysis/<name>.json`. The report reads those
files as plain JSON so that it keeps working when an analysis adds fields, and so that a run
written by an older version still renders. These helpers find per-record entries and numbers
without assuming more of the shape than a section needs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

#: Field names under which analyses list their per-record (per-response) results.
LIST_KEYS = ("records", "responses", "results", "solutions", "grades", "scores", "entries", "per_record", "items")
#: Field names that carry the run-record key of an entry.
KEY_FIELDS = ("key", "record_key", "response_key", "record")


def entries(doc: Any, keys: Iterable[str] = LIST_KEYS) -> list[dict[str, Any]]:
    """The list of per-record dicts in `doc`: the document itself when it is a list, else the first
    list-of-dicts found under one of `keys`."""
    if isinstance(doc, list):
        return [d for d in doc if isinstance(d, dict)]
    if isinstance(doc, dict):
        for k in keys:
            val = doc.get(k)
            if isinstance(val, list) and any(isinstance(d, dict) for d in val):
                return [d for d in val if isinstance(d, dict)]
            if isinstance(val, dict) and val and all(isinstance(v, dict) for v in val.values()):
                # a mapping record-key -> entry
                return [{"key": kk, **v} for kk, v in val.items()]
    return []


def entry_key(entry: Mapping[str, Any]) -> str | None:
    """The run-record key an entry belongs to, if it names one."""
    for f in KEY_FIELDS:
        val = entry.get(f)
        if isinstance(val, str):
            return val
    return None


def index_by_key(doc: Any, keys: Iterable[str] = LIST_KEYS) -> dict[str, list[dict[str, Any]]]:
    """Per-record entries of an analysis document, by record key, in file order (an analysis may hold
    several entries for one record, e.g. repeated judge runs; entries without a key are left out)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in entries(doc, keys):
        k = entry_key(e)
        if k is not None:
            out.setdefault(k, []).append(e)
    return out


def first(mapping: Any, *names: str, default: Any = None) -> Any:
    """The value of the first of `names` present (and not None) in `mapping`; dotted names descend."""
    if not isinstance(mapping, Mapping):
        return default
    for name in names:
        cur: Any = mapping
        for part in name.split("."):
            if not isinstance(cur, Mapping) or part not in cur:
                cur = None
                break
            cur = cur[part]
        if cur is not None:
            return cur
    return default


def num(value: Any) -> float | None:
    """A finite float, or None for anything else (missing, text, NaN, infinity, booleans)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def num_of(mapping: Any, *names: str) -> float | None:
    """`num(first(mapping, *names))`, also accepting a `{"estimate": x, ...}` dict (a CI)."""
    val = first(mapping, *names)
    if isinstance(val, Mapping):
        val = first(val, "estimate", "value", "mean")
    return num(val)


def ci_of(mapping: Any, *names: str) -> tuple[float, float] | None:
    """A (low, high) interval stored as `{"low", "high"}`, a two-item list, or `<name>_low/_high` fields."""
    for name in names:
        val = first(mapping, name)
        if isinstance(val, Mapping):
            lo, hi = num(first(val, "low", "lo", "lower")), num(first(val, "high", "hi", "upper"))
            if lo is not None and hi is not None:
                return lo, hi
        if isinstance(val, list | tuple) and len(val) == 2:
            lo, hi = num(val[0]), num(val[1])
            if lo is not None and hi is not None:
                return lo, hi
        lo, hi = num(first(mapping, f"{name}_low", f"{name}_ci_low")), num(first(mapping, f"{name}_high",
                                                                                   f"{name}_ci_high"))
        if lo is not None and hi is not None:
            return lo, hi
    return None


def scalar_items(mapping: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The (key, value) pairs of `mapping` whose values are scalars (for a generic summary table)."""
    return [(k, v) for k, v in mapping.items() if v is None or isinstance(v, str | int | float | bool)]


def is_ci(value: Any) -> bool:
    """Whether `value` looks like a stored confidence interval (`estimate`, `low`, `high`)."""
    return isinstance(value, Mapping) and "estimate" in value and ("low" in value or "high" in value)


def flatten(mapping: Mapping[str, Any], prefix: str = "", depth: int = 2) -> dict[str, Any]:
    """Scalar fields of `mapping`, with intervals split into `name`, `name low`, `name high` and other
    nested mappings as dotted names (down to `depth` levels); lists are left out."""
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        name = f"{prefix}{k}"
        if is_ci(v):
            out[name] = num(v.get("estimate"))
            out[f"{name} low"] = num(v.get("low"))
            out[f"{name} high"] = num(v.get("high"))
            if v.get("n") is not None and f"{prefix}n" not in mapping:
                out[f"{name} n"] = v.get("n")
        elif isinstance(v, Mapping):
            if depth > 0:
                out.update(flatten(v, f"{name}.", depth - 1))
        elif v is None or isinstance(v, str | int | float | bool):
            out[name] = v
    return out
