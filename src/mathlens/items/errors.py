"""Readable load errors: file, line and field, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mathlens.errors import UserError


class ItemFileError(UserError):
    """A malformed item file. The message names the file, the line and the field."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, problem: str) -> None:
        where = f"{path}"
        if line is not None:
            where += f":{line}"
        what = f" field '{field}'" if field else ""
        super().__init__(f"{where}:{what} {problem}".replace(": ", ": ", 1))
        self.path = str(path)
        self.line = line
        self.field = field
        self.problem = problem


def loc_to_field(loc: tuple[Any, ...]) -> str:
    """`("questions", 2, "points")` -> `"questions[2].points"`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def yaml_line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Follow a pydantic error location through a composed YAML node tree; 1-based line."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if node is None:
            break
        nxt: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if getattr(key, "value", None) == part:
                    nxt = value
                    best = key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
            best = nxt.start_mark.line + 1
        node = nxt
    return best


def from_validation(path: Path | str, exc: ValidationError, node: yaml.Node | None = None,
                    line: int | None = None, prefix: tuple[Any, ...] = ()) -> ItemFileError:
    """The first pydantic error as an `ItemFileError` (the message counts the others)."""
    errors = exc.errors()
    first = errors[0]
    loc = tuple(prefix) + tuple(first["loc"])
    at_line = line if line is not None else yaml_line(node, loc)
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return ItemFileError(path, at_line, loc_to_field(loc) or None, f"{first['msg']}{more}")
