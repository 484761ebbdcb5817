"""Helpers shared by CLI commands: JSON output, error reporting, console."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console

from mathlens.errors import UserError

console = Console(stderr=True)
out_console = Console()

P = ParamSpec("P")
R = TypeVar("R")

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document on stdout instead of tables.")


def emit_json(data: Any) -> None:
    """Print one machine-readable document on stdout."""
    if isinstance(data, BaseModel):
        text = data.model_dump_json(indent=2)
    else:
        text = json.dumps(data, indent=2, default=_default, ensure_ascii=False)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if hasattr(obj, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(obj)
    return str(obj)


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Report `UserError` as one red line and exit 2, never as a traceback."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper
