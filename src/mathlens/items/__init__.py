"""Items: exams and datasets (schemas, loaders, built-in examples).

The loaders (and the YAML parser behind them) load on first use of `load_items` or `builtin_exams`,
so that code which only reads stored items (`mathlens show`, a run's records) does not pay for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mathlens.items.schema import Cohort, Exam, Part, Question

if TYPE_CHECKING:
    from mathlens.items.loaders import builtin_exams, load_items

_LOADERS = ("builtin_exams", "load_items")


def __getattr__(name: str) -> object:
    if name in _LOADERS:
        from mathlens.items import loaders

        return getattr(loaders, name)
    raise AttributeError(f"module 'mathlens.items' has no attribute {name!r}")


__all__ = ["Cohort", "Exam", "Part", "Question", "builtin_exams", "load_items"]
