"""The report's sections, in page order.

Adding a section is one module under `mathlens/report/sections/` that defines `SECTION` (a
`ReportSection` or a `QuestionSection`) plus one line in `SECTIONS` below. A section's `build`
returns the data its template renders, or None when the run has nothing for it (typically: its
analysis file is absent); a section that returns None is left out of the page and listed as
skipped in the overview, never drawn empty.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mathlens.errors import UnknownNameError

if TYPE_CHECKING:
    from mathlens.report.context import ReportContext
    from mathlens.report.loader import QuestionView

#: Module names under `mathlens.report.sections`, in the order the page shows them.
SECTIONS: tuple[str, ...] = (
    "trust",
    "overview",
    "scores",
    "compare",
    "interpretability",
    "breakdown",
    "flags",
    "agreement",
    "source_agreement",
    "maple",
    "adaptivity",
    "question_index",
    "other_analyses",
    # per-question sections (inside each question's block)
    "lens",
    "flow",
    "question",
    "answers",
    "rubric",
    "responses",
    "sensitivity",
    "maple_steps",
    "adaptivity_items",
)


@dataclass(frozen=True)
class ReportSection:
    """A section shown once for the whole report."""

    id: str
    title: str
    template: str
    build: Callable[[ReportContext], Any | None]
    #: analysis files the section reads (shown when it is skipped)
    analyses: tuple[str, ...] = ()
    scope: str = field(default="report", init=False)


@dataclass(frozen=True)
class QuestionSection:
    """A section shown inside each question's block."""

    id: str
    title: str
    template: str
    build: Callable[[ReportContext, QuestionView], Any | None]
    analyses: tuple[str, ...] = ()
    scope: str = field(default="question", init=False)


Section = ReportSection | QuestionSection


def load_sections(names: tuple[str, ...] = SECTIONS) -> list[Section]:
    """Import each section module and return its `SECTION`."""
    out: list[Section] = []
    for name in names:
        module = importlib.import_module(f"mathlens.report.sections.{name}")
        section = getattr(module, "SECTION", None)
        if not isinstance(section, ReportSection | QuestionSection):
            raise TypeError(f"mathlens.report.sections.{name} defines no SECTION")
        out.append(section)
    return out


def select_sections(sections: list[Section], only: list[str] | None) -> list[Section]:
    """Keep the sections named in `only` (by id), or all of them."""
    if not only:
        return sections
    known = {s.id for s in sections}
    for name in only:
        if name not in known:
            raise UnknownNameError("report section", name, known)
    return [s for s in sections if s.id in only]
