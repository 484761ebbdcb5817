"""Entry point: builds the typer app from every command module in `mathlens.cli`."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

import typer

import mathlens.cli as cli_pkg

app = typer.Typer(
    name="mathlens",
    help="See how language models reason through math problems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(cli_pkg.__path__), key=lambda i: i.name):
        if info.name in ("main", "common") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"mathlens.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_all()


def _normalise_argv(argv: list[str]) -> list[str]:
    """Let `--ablate` stand alone (meaning all element types) or take a list: `--ablate coordinates,keywords`."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg != "--ablate":
            continue
        nxt = out[i + 1] if i + 1 < len(out) else None
        if nxt is None or not re.fullmatch(r"[a-z_]+(,[a-z_]+)*", nxt) or _is_source(nxt):
            out[i] = "--ablate=all"
    return out


def _is_source(token: str) -> bool:
    from mathlens.items.loaders import builtin_exams

    return token in builtin_exams() or Path(token).exists()


def main() -> None:
    sys.argv[1:] = _normalise_argv(sys.argv[1:])
    app()


if __name__ == "__main__":
    main()
