"""JSON read under limits: nesting measured on the raw bytes before anything parses them.

`json.loads` stops at Python's recursion limit, but other readers do not: a log nested 100,000
levels deep, handed to a third-party reader (Inspect's, built on a JSON parser without a depth
limit), can take tens of gigabytes. `nesting_depth` measures the depth of a JSON text without
parsing it (everything but quotes and brackets dropped, the rest counted with NumPy in
blocks), so a file can be refused before any reader sees it, in time linear in its size and
memory a small multiple of it.

`load_json` parses bytes with the depth checked first; `finite=True` refuses `NaN`, `Infinity`
and numbers too large for a float (`1e400`), which Python's `json` would accept.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# Everything but quotes and brackets is dropped before counting; escaped backslashes and escaped
# quotes are removed first, so every quote left opens or closes a string.
_NOT_COUNTED = bytes(b for b in range(256) if b not in b'"[]{}')
_QUOTE = ord('"')
_BLOCK = 1 << 22


@cache
def _steps() -> np.ndarray:
    """+1 for an opening bracket, -1 for a closing one, 0 for any other byte (NumPy is imported on
    first use: the item readers are loaded by light commands such as `show`, which read no JSON)."""
    import numpy as np

    step = np.zeros(256, dtype=np.int8)
    step[list(b"[{")] = 1
    step[list(b"]}")] = -1
    return step


class JsonLimitError(ValueError):
    """A JSON text that crosses a limit or holds a value refused here; `problem` says which."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def nesting_depth(raw: bytes | str) -> int:
    """The deepest nesting of arrays and objects in a JSON text (0 for a bare value).

    Brackets inside strings do not count; for text that is not valid JSON the figure is still an
    upper bound of what a parser would have to nest.

    >>> nesting_depth(b'{"a": [1, [2, "]]]"]], "b": {}}')
    3
    """
    import numpy as np

    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    kept = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_COUNTED)
    depth, deepest, inside = 0, 0, 0
    for start in range(0, len(kept), _BLOCK):
        chars = np.frombuffer(kept, dtype=np.uint8, count=min(_BLOCK, len(kept) - start), offset=start)
        # parity of the quotes seen so far: 1 inside a string (uint8 wraps, parity survives)
        strings = (np.cumsum(chars == _QUOTE, dtype=np.uint8) + inside) & 1
        steps = np.where(strings == 1, 0, _steps()[chars]).astype(np.int64)
        running = np.cumsum(steps) + depth
        deepest = max(deepest, int(running.max()))
        depth, inside = int(running[-1]), int(strings[-1])
    return deepest


def within_depth(raw: bytes | str, max_depth: int) -> bool:
    """Whether a JSON text nests at most `max_depth` levels (cheap when it has few brackets)."""
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return True
    return nesting_depth(data) <= max_depth


def _refuse_constant(name: str) -> float:
    raise JsonLimitError(f"the non-finite number {name} is not accepted")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"the number {text[:40]} is too large to be a finite number")
    return value


def load_json(raw: bytes | str, max_depth: int, *, finite: bool = False) -> Any:
    """Parse a JSON text whose nesting is at most `max_depth` (`JsonLimitError` otherwise).

    `json.JSONDecodeError` and `UnicodeDecodeError` pass through for the caller to locate.
    """
    if not within_depth(raw, max_depth):
        raise JsonLimitError(f"values nest {nesting_depth(raw):,} levels deep")
    hooks: dict[str, Callable[[str], Any]] = {}
    if finite:
        hooks = {"parse_constant": _refuse_constant, "parse_float": _finite_float}
    try:
        return json.loads(raw, **hooks)  # type: ignore[arg-type]
    except RecursionError:  # cannot happen below Python's recursion limit; kept as a last guard
        raise JsonLimitError("values nest too deeply to parse") from None
