"""Turn runs into one self-contained HTML page.

The Jinja environment autoescapes everything and no template marks model text safe; the page's
only script is inline and carries a per-page nonce named in a Content-Security-Policy, so even a
markup injection that slipped past escaping could not run script or load anything.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from mathlens import __version__
from mathlens.errors import UserError, sanitize
from mathlens.report.context import ReportContext, ReportOptions
from mathlens.report.loader import QuestionView, RunData, question_views
from mathlens.report.order import telling_order
from mathlens.report.registry import QuestionSection, ReportSection, Section, load_sections, select_sections

#: sections shown before the questions
LEAD_SECTIONS = ("trust",)


def pages_folder(path: Path) -> str:
    """The folder of the question pages of the report written to `path` (`report_questions`)."""
    return f"{path.stem}_questions"


def _atomic_write(path: Path, text: str) -> Path:
    """`text` written to a temporary file beside `path` and renamed into place; on any failure the
    temporary is removed and the error names `path` (the file asked for, not the temporary)."""
    if path.is_dir():
        raise UserError(f"cannot write {path}: it is a folder; name the HTML file to write "
                        f"(e.g. --out {path / 'report.html'})")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return path


@dataclass(frozen=True)
class Rendered:
    """A section with its data, ready for its template."""

    id: str
    title: str
    template: str
    data: Any
    #: analyses this section shows that do not cover every record the report shows (one line each)
    stale: tuple[str, ...] = ()


@dataclass(frozen=True)
class QuestionBlock:
    view: QuestionView
    sections: list[Rendered]
    #: drawn open on the page (the most telling questions: their reasoning is seen without a click)
    open: bool = False
    #: where the block is on the page: "" (the main page) or the question page's file name
    page: str = ""


@dataclass(frozen=True)
class QuestionPage:
    """One file of questions written beside the main page (for runs with many questions)."""

    number: int
    file_name: str
    views: tuple[QuestionView, ...]

    @property
    def first(self) -> str:
        return self.views[0].label

    @property
    def last(self) -> str:
        return self.views[-1].label


@dataclass(frozen=True)
class Report:
    """Everything on the page; `html()` renders it."""

    title: str
    runs: list[RunData]
    sections: list[Rendered]
    questions: list[QuestionBlock]
    skipped: list[tuple[str, str]]
    generated_at: str
    notes: list[str] = field(default_factory=list)
    max_chars: int = 20_000
    #: shown in a banner at the top of the page (runs whose responses are mostly degenerate)
    warnings: list[str] = field(default_factory=list)
    #: analyses that cover fewer or other records than their run holds (shown at the top of the page)
    stale: list[str] = field(default_factory=list)
    #: the questions not on the main page, in files of their own (empty for a run of modest size)
    pages: list[QuestionPage] = field(default_factory=list)
    #: questions in all (on the main page and in the question pages)
    total_questions: int = 0
    #: the question pages' folder, relative to the main page (`ReportOptions.pages_dir`)
    pages_dir: str = "report_questions"
    _builder: Callable[[QuestionView], list[Rendered]] | None = field(default=None, repr=False)

    @property
    def lead(self) -> list[Rendered]:
        """The sections shown before the questions (the "what to trust" box)."""
        return [s for s in self.sections if s.id in LEAD_SECTIONS]

    @property
    def aggregates(self) -> list[Rendered]:
        """The sections shown after the questions: every table and chart over the whole run."""
        return [s for s in self.sections if s.id not in LEAD_SECTIONS]

    def page_href(self, page: QuestionPage) -> str:
        """The link from the main page to a question page."""
        return f"{self.pages_dir}/{page.file_name}"

    def html(self, nonce: str | None = None) -> str:
        """The page as one HTML document; `nonce` is the script nonce its CSP names (random by default)."""
        nonce = nonce or secrets.token_urlsafe(16)
        return environment().get_template("page.html.j2").render(report=self, nonce=nonce, version=__version__)

    def page_html(self, page: QuestionPage, main_name: str, nonce: str | None = None) -> str:
        """One question page: its questions in full (built now, so a large run is never held whole)."""
        nonce = nonce or secrets.token_urlsafe(16)
        build = self._builder or (lambda _v: [])
        blocks = [QuestionBlock(v, build(v), page=self.page_href(page)) for v in page.views]
        return environment().get_template("questions_page.html.j2").render(
            report=self, page=page, blocks=blocks, main=main_name, nonce=nonce, version=__version__)

    def write(self, path: Path) -> list[Path]:
        """Write the main page to `path` and each question page beside it (in `<stem>_questions/`);
        every file goes to a temporary name first and is renamed into place. Returns the files."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.pages and self.pages_dir != pages_folder(path):
            raise ValueError(f"this report links its question pages in {self.pages_dir}/: build it with "
                             f"ReportOptions(pages_dir={pages_folder(path)!r}) to write it to {path.name}")
        folder = path.parent / pages_folder(path)
        written = []
        keep = {p.file_name for p in self.pages}
        for stale in folder.glob("page-*.html") if folder.is_dir() else ():  # pages of an earlier, larger report
            if stale.name not in keep:
                stale.unlink()
        if self.pages:
            folder.mkdir(exist_ok=True)
            for page in self.pages:
                written.append(_atomic_write(folder / page.file_name, self.page_html(page, f"../{path.name}")))
        written.insert(0, _atomic_write(path, self.html()))
        return written

    def summary(self) -> dict[str, Any]:
        """What `mathlens report --json` prints about the page."""
        return {
            "title": self.title,
            "runs": [{"run_dir": str(r.root), "run_id": r.manifest.run_id, "records": len(r.records)}
                     for r in self.runs],
            "sections": [s.id for s in self.sections],
            "skipped_sections": [{"id": i, "reason": why} for i, why in self.skipped],
            "questions": self.total_questions or len(self.questions),
            "question_pages": [p.file_name for p in self.pages],
            "notes": self.notes,
            "warnings": self.warnings,
            "stale": self.stale,
        }


_ENV: Environment | None = None


def environment() -> Environment:
    """The report's Jinja environment (autoescape on for every template)."""
    global _ENV
    if _ENV is None:
        _ENV = Environment(
            loader=PackageLoader("mathlens.report", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, finalize=_visible,
        )
    return _ENV


def _visible(value: Any) -> Any:
    """Every plain string written into the page has NUL, other control characters and the marks
    that reorder or hide text (bidirectional overrides, zero-width characters) shown as visible
    `\\uXXXX` escapes, so a response cannot reorder or hide what a reader sees. Markup that the
    report itself marked safe is left alone."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return sanitize(value.replace("\r\n", "\n"))
    return value


def _skip_reason(section: Section, runs: list[RunData]) -> str:
    if section.analyses:
        present = {n for r in runs for n in r.analysis_names}
        missing = [a for a in section.analyses if a not in present]
        if missing:
            return "no " + ", ".join(f"analysis/{a}.jsonl" for a in missing)
    return "nothing to show for these runs"


def build_report(runs: list[RunData], options: ReportOptions | None = None,
                 sections: list[Section] | None = None) -> Report:
    """Run every section builder over `runs` (sections that return None are skipped and listed).

    Questions are ordered most telling first (`telling_order`); the first `options.open_questions`
    are drawn open, up to `options.main_questions` are on the main page, and the rest go to
    question pages of `options.page_questions` each, built only when they are written."""
    options = options or ReportOptions()
    all_sections = sections if sections is not None else load_sections()
    chosen = select_sections(all_sections, list(options.sections) if options.sections else None)
    views = telling_order(runs, question_views(runs))
    ctx = ReportContext(runs=runs, views=views, options=options)
    rest = views[options.main_questions :]
    pages = [QuestionPage(number=n + 1, file_name=f"page-{n + 1:04d}.html",
                          views=tuple(rest[i : i + options.page_questions]))
             for n, i in enumerate(range(0, len(rest), options.page_questions))]
    for page in pages:
        for view in page.views:
            ctx.place(view.anchor, page.file_name)
    rendered: list[Rendered] = []
    skipped: list[tuple[str, str]] = []
    for s in chosen:
        if isinstance(s, ReportSection):
            data = s.build(ctx)
            if data is None:
                skipped.append((s.id, _skip_reason(s, runs)))
            else:
                rendered.append(Rendered(s.id, s.title, s.template, data, _stale(s, runs)))
    q_sections = [s for s in chosen if isinstance(s, QuestionSection)]
    used: dict[str, bool] = {s.id: False for s in q_sections}

    def question_parts(view: QuestionView) -> list[Rendered]:
        parts = []
        for qs in q_sections:
            data = qs.build(ctx, view)
            if data is not None:
                used[qs.id] = True
                parts.append(Rendered(qs.id, qs.title, qs.template, data))
        return parts

    on_main = ctx.views[: options.main_questions]
    blocks = [QuestionBlock(view, question_parts(view), open=i < options.open_questions)
              for i, view in enumerate(on_main)]
    skipped += [(s.id, _skip_reason(s, runs)) for s in q_sections if not used[s.id]]
    if len(runs) == 1:
        title = options.title or f"mathlens report · {runs[0].manifest.run_id}"
    else:
        title = options.title or f"mathlens report · {len(runs)} runs"
    notes = [f"{r.label}: {n}" for r in runs for n in r.notes]
    return Report(title=title, runs=runs, sections=rendered, questions=blocks, skipped=skipped,
                  generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), notes=notes,
                  max_chars=options.max_response_chars, warnings=quality_warnings(runs), pages=pages,
                  total_questions=len(ctx.views), pages_dir=options.pages_dir, _builder=question_parts,
                  stale=[note for r in runs for note in _run_stale(r, len(runs) > 1)])


def _stale(section: Section, runs: list[RunData]) -> tuple[str, ...]:
    """The staleness notes of the analyses `section` shows, for every run of the report."""
    many = len(runs) > 1
    return tuple(f"{r.label}: {n}" if many else n for r in runs for n in r.stale_notes(section.analyses))


def _run_stale(run: RunData, many: bool) -> list[str]:
    notes = run.stale_notes(tuple(run.document_states))
    return [f"{run.label}: {n}" if many else n for n in notes]


def quality_warnings(runs: list[RunData]) -> list[str]:
    """One warning per run whose ok responses are mostly degenerate (see `degenerate_warning`)."""
    from mathlens.analyze.quality import degenerate_warning

    out = []
    for run in runs:
        warning = degenerate_warning(run.quality.values())
        if warning:
            out.append(f"Run {run.label}: {warning}" if len(runs) > 1 else warning)
    return out
