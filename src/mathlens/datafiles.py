"""Load user-written YAML/JSON data files (rubrics, label sets, ...) into pydantic models.

Errors name the file, the line and the field, the same way item files do (items/errors.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mathlens.errors import UserError
from mathlens.items.errors import ItemFileError, from_validation

T = TypeVar("T", bound=BaseModel)


def load_model_file(path: Path | str, model_cls: type[T], kind: str) -> T:
    """Read `path` (YAML, or JSON when it ends in .json) as `model_cls`.

    A missing file, a syntax error or a schema error is a `UserError` (`ItemFileError` with line and
    field for the last two); `kind` names the file in messages ("no such rubric file").
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such {kind} file") from None
    is_json = path.suffix == ".json"
    try:
        data = json.loads(text) if is_json else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ItemFileError(path, exc.lineno, None, f"not valid JSON ({exc.msg})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ItemFileError(path, line, None, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        try:
            node = yaml.compose(text)  # JSON is read as YAML here only to find line numbers
        except yaml.YAMLError:
            node = None
        raise from_validation(path, exc, node=node) from None
