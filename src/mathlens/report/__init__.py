"""HTML report of one or more runs: `write_report(["runs/a"], "report.html")`.

The page is one self-contained file (inline CSS, script and SVG; nothing is fetched when it is
viewed); a run with many questions also gets question pages, plain files linked from it.
Sections live in `mathlens.report.sections` and are listed in `mathlens.report.registry.SECTIONS`;
each reads its own analysis file and is skipped when that file is absent.

    >>> from mathlens.report import write_report          # doctest: +SKIP
    >>> write_report(["runs/demo"], "runs/demo/report.html")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from mathlens.report.context import ReportOptions
from mathlens.report.loader import load_runs
from mathlens.report.render import Report, build_report, pages_folder

__all__ = ["Report", "ReportOptions", "build_report", "make_report", "write_report"]


def make_report(run_dirs: Sequence[Path | str], options: ReportOptions | None = None) -> Report:
    """Load the runs and build their report (raises `UserError` for a directory that is not a run)."""
    return build_report(load_runs([Path(p) for p in run_dirs]), options)


def write_report(run_dirs: Sequence[Path | str], out: Path | str, options: ReportOptions | None = None) -> Report:
    """Build the report of `run_dirs` and write its HTML to `out` (parent folders are created); a
    run with more questions than the main page holds gets its question pages beside it
    (`<stem>_questions/page-NNNN.html`)."""
    path = Path(out)
    report = make_report(run_dirs, replace(options or ReportOptions(), pages_dir=pages_folder(path)))
    report.write(path)
    return report
