"""Turn runs into one self-contained HTML page.

The Jinja environment autoescapes everything and no template marks model text safe; the page's
only script is inline and carries a per-page nonce named in a Content-Security-Policy, so even a
markup injection that slipped past escaping could not run script or load anything.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from mathlens import __version__
from mathlens.errors import sanitize
from mathlens.report.context import ReportContext, ReportOptions
from mathlens.report.loader import QuestionView, RunData, question_views
from mathlens.report.registry import QuestionSection, ReportSection, Section, load_sections, select_sections


@dataclass(frozen=True)
class Rendered:
    """A section with its data, ready for its template."""

    id: str
    title: str
    template: str
    data: Any
    #: analyses this section shows that do not cover every record the report shows (one line each)
    stale: tuple[str, ...] = ()


@dataclass
class QuestionBlock:
    view: QuestionView
    sections: list[Rendered]


@dataclass
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

    def html(self, nonce: str | None = None) -> str:
        """The page as one HTML document; `nonce` is the script nonce its CSP names (random by default)."""
        nonce = nonce or secrets.token_urlsafe(16)
        return environment().get_template("page.html.j2").render(report=self, nonce=nonce, version=__version__)

    def summary(self) -> dict[str, Any]:
        """What `mathlens report --json` prints about the page."""
        return {
            "title": self.title,
            "runs": [{"run_dir": str(r.root), "run_id": r.manifest.run_id, "records": len(r.records)}
                     for r in self.runs],
            "sections": [s.id for s in self.sections],
            "skipped_sections": [{"id": i, "reason": why} for i, why in self.skipped],
            "questions": len(self.questions),
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
    """Run every section builder over `runs` (sections that return None are skipped and listed)."""
    options = options or ReportOptions()
    all_sections = sections if sections is not None else load_sections()
    chosen = select_sections(all_sections, list(options.sections) if options.sections else None)
    ctx = ReportContext(runs=runs, views=question_views(runs), options=options)
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
    blocks: list[QuestionBlock] = []
    for view in ctx.views:
        parts = []
        for qs in q_sections:
            data = qs.build(ctx, view)
            if data is not None:
                used[qs.id] = True
                parts.append(Rendered(qs.id, qs.title, qs.template, data))
        blocks.append(QuestionBlock(view, parts))
    skipped += [(s.id, _skip_reason(s, runs)) for s in q_sections if not used[s.id]]
    if len(runs) == 1:
        title = options.title or f"mathlens report · {runs[0].manifest.run_id}"
    else:
        title = options.title or f"mathlens report · {len(runs)} runs"
    notes = [f"{r.label}: {n}" for r in runs for n in r.notes]
    return Report(title=title, runs=runs, sections=rendered, questions=blocks, skipped=skipped,
                  generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), notes=notes,
                  max_chars=options.max_response_chars, warnings=quality_warnings(runs),
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
