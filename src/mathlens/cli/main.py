"""Entry point: builds the typer app from every command module in `mathlens.cli`."""

from __future__ import annotations

import importlib
import pkgutil

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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
