"""Names made unique by numbering their repeats: a shared helper below every layer (like `errors.py`).

Two runs with one id, two source files with one stem, two exported tables whose ids collide: the
first keeps its name and each repeat gets its number, in the style its caller writes it.
"""

from __future__ import annotations

from collections.abc import Iterable


def occurrences(names: Iterable[str]) -> list[int]:
    """For each name, which occurrence of it this is (1 the first time it comes).

    >>> occurrences(["a", "b", "a", "a"])
    [1, 1, 2, 3]
    """
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(seen[name])
    return out
