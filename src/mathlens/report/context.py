"""What every section builder receives: the runs, their question views, the report options."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mathlens.report.loader import QuestionView, Response, RunData


@dataclass(frozen=True)
class ReportOptions:
    """Settings of one report. Flag thresholds follow the calculus study's instructor scenario (§7.3)."""

    title: str | None = None
    #: complexity score above which a solution is flagged "too dense"; None: the threshold of the
    #: depth definition the flow analysis used (`analyze.flow.models.DENSE_THRESHOLDS`: 20 on the
    #: study's character scale, 7.7 for tokens, 3.4 for the expression-tree depth)
    complexity_threshold: float | None = None
    #: phrase sensitivity above which a question is flagged "unstable under rephrasing"
    sensitivity_threshold: float = 0.5
    #: longest response text shown on the page (the rest is cut, and said so)
    max_response_chars: int = 20_000
    #: section ids to include (None: all)
    sections: tuple[str, ...] | None = None
    #: questions drawn open at the top of the page (the most telling first)
    open_questions: int = 3
    #: questions on the main page; the rest go to question pages written beside it
    main_questions: int = 40
    #: questions per question page
    page_questions: int = 100
    #: folder of the question pages, relative to the main page (`write_report` names it after the file)
    pages_dir: str = "report_questions"


@dataclass(frozen=True)
class ReportContext:
    """Runs, question views and options; also hands out page-unique element ids."""

    runs: list[RunData]
    views: list[QuestionView]
    options: ReportOptions = field(default_factory=ReportOptions)
    _ids: dict[str, int] = field(default_factory=dict, repr=False)
    #: question anchor -> where its block is, for questions on the question pages (`page-NNNN.html#anchor`)
    _pages: dict[str, str] = field(default_factory=dict, repr=False)

    def place(self, anchor: str, page_file: str) -> None:
        """Record that question `anchor` is on the question page `page_file`."""
        self._pages[anchor] = f"{self.options.pages_dir}/{page_file}#{anchor}"

    def href(self, anchor: str | None) -> str | None:
        """The link to a question's block: `#anchor` on the main page, else on its question page."""
        if anchor is None:
            return None
        return self._pages.get(anchor, anchor)

    def uid(self, *parts: str) -> str:
        """A page-unique id made from `parts` (used for tables, charts and their CSV names)."""
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", "-".join(parts)).strip("-").lower() or "x"
        n = self._ids.get(base, 0)
        self._ids[base] = n + 1
        return base if n == 0 else f"{base}-{n + 1}"

    @property
    def multi_run(self) -> bool:
        return len(self.runs) > 1

    def response_label(self, resp: Response) -> str:
        """How a response is named on the page (with its run when several runs are compared)."""
        return resp.full_label if self.multi_run else resp.label
