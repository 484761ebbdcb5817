"""Load user-written YAML/JSON data files (rubrics, label sets, ...) into pydantic models.

Errors name the file, the line and the field, the same way item files do (items/errors.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from mathlens.items.errors import ItemFileError, from_validation
from mathlens.items.jsonread import JsonLimitError, load_json
from mathlens.items.limits import ITEM_NESTING, ITEM_YAML_BYTES
from mathlens.items.readers import check_values, load_yaml, read_text

T = TypeVar("T", bound=BaseModel)


def load_model_file(path: Path | str, model_cls: type[T], kind: str) -> T:
    """Read `path` (YAML, or JSON when it ends in .json) as `model_cls`.

    A missing file, a syntax error or a schema error is a `UserError` (`ItemFileError` with line and
    field for the last two); the size, nesting, alias, finiteness and duplicate-key limits of items/readers.py apply;
    `kind` names the file in messages ("no such rubric file").
    """
    path = Path(path)
    text = read_text(path, ITEM_YAML_BYTES, kind)
    node: yaml.Node | None = None
    if path.suffix == ".json":
        try:
            data = load_json(text, ITEM_NESTING.value, finite=True)
        except json.JSONDecodeError as exc:
            raise ItemFileError(path, exc.lineno, None, f"not valid JSON ({exc.msg})") from None
        except JsonLimitError as exc:
            nest = f", more than {ITEM_NESTING.phrase}" if exc.problem.startswith("values nest") else ""
            raise ItemFileError(path, None, None, exc.problem + nest) from None
        check_values(path, data)
    else:
        data, node = load_yaml(path, text)
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        if node is None:
            try:
                node = yaml.compose(text)  # JSON is read as YAML here only to find line numbers
            except (yaml.YAMLError, RecursionError):
                node = None
        raise from_validation(path, exc, node=node) from None
