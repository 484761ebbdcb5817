"""Degenerate output made visible: the report banner and flags, `mathlens show`, the answers analysis.

Runs are real mock-model runs through the CLI (tests/support/report_run.py); a "base model"
here answers every question with a copy of the exam system role, as the embedded base model does.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.grading.analyzer import ANSWERS
from mathlens.cli.main import app
from mathlens.report.loader import load_runs
from mathlens.report.render import build_report
from mathlens.solve.prompts import EXAM_SYSTEM_ROLE
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"


ECHO = EXAM_SYSTEM_ROLE + "\n" + EXAM_SYSTEM_ROLE[:200]


class Tags(HTMLParser):
    """Start tags with attributes in document order."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def index(self, tag: str, attr: str, value: str | None = None) -> int:
        return next(i for i, (t, a) in enumerate(self.tags) if t == tag and attr in a
                    and (value is None or a[attr] == value))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("quality-runs")
    return {
        # 3 of 4 responses copy the role: mostly degenerate
        "echo": fx.make_run(root / "echo", [ECHO, ECHO, ECHO, fx.SOLUTION], limit=4),
        "healthy": fx.make_run(root / "healthy", [fx.SOLUTION, fx.WRONG], limit=2),
        "unanalysed": fx.make_run(root / "unanalysed", [ECHO], limit=2, analyze=False),
    }


def test_banner_opens_a_mostly_degenerate_report(runs: dict[str, Path]) -> None:
    report = build_report(load_runs([runs["echo"]]))
    assert len(report.warnings) == 1 and report.warnings[0].startswith("3 of 4 responses (75%) are degenerate")
    assert "copy the prompt or system role" in report.warnings[0]
    html = report.html()
    tags = Tags(html)
    banner = tags.index("div", "data-warning", "degenerate")
    assert banner < tags.index("section", "data-section")  # before every section
    assert tags.tags[banner][1].get("role") == "alert"
    assert report.summary()["warnings"] == report.warnings
    # each degenerate response says so, with the reason
    echo_badges = [a for t, a in tags.tags if t == "span" and a.get("data-flag") == "echo"]
    assert len(echo_badges) == 3 and all("copies the system role" in (a.get("title") or "") for a in echo_badges)


def test_no_banner_for_a_healthy_run(runs: dict[str, Path]) -> None:
    report = build_report(load_runs([runs["healthy"]]))
    assert report.warnings == []
    html = report.html()
    assert 'data-warning="degenerate"' not in html and 'data-flag="echo"' not in html
    # the trust box says "none" rather than "0 (0%)"
    text = " ".join(html.split())
    assert "none was cut by the token cap; none is degenerate" in text
    assert "3 (75%) are degenerate" in " ".join(build_report(load_runs([runs["echo"]])).html().split())


def test_overview_counts_degenerate_responses(runs: dict[str, Path]) -> None:
    report = build_report(load_runs([runs["echo"]]))
    overview = next(s for s in report.sections if s.id == "overview")
    counts = overview.data.counts
    cols = list(counts.columns)
    (row,) = counts.rows
    assert row[cols.index("degenerate")] == 3 and row[cols.index("echo")] == 3 and row[cols.index("empty")] == 0


def test_flags_section_lists_degenerate_output_instead_of_text_flags(runs: dict[str, Path]) -> None:
    report = build_report(load_runs([runs["echo"]]))
    flags = next(s for s in report.sections if s.id == "flags")
    names = [r[2] for r in flags.data.rows]
    assert names.count("degenerate output") == 3


def test_answers_analysis_stores_flags_and_counts(runs: dict[str, Path]) -> None:
    doc = ANSWERS.read(runs["echo"])
    assert doc is not None
    (summary,) = doc.summary.summary
    assert (summary.records, summary.degenerate) == (4, 3)
    assert summary.quality["echo"] == 3 and summary.quality["empty"] == 0
    flagged = [e for e in ANSWERS.entries(runs["echo"]) if e.quality is not None and e.quality.echo]
    assert len(flagged) == 3 and all(e.quality is not None and e.quality.details for e in flagged)
    healthy = ANSWERS.read(runs["healthy"])
    assert healthy is not None
    assert healthy.summary.summary[0].degenerate == 0 and healthy.summary.summary[0].no_final_answer == 0


@pytest.mark.parametrize(("name", "degenerate", "records", "source"), [
    ("echo", 3, 4, "analysis/answers.jsonl"), ("healthy", 0, 2, "analysis/answers.jsonl"),
    ("unanalysed", 2, 2, "records")])
def test_show_json_counts(runs: dict[str, Path], name: str, degenerate: int, records: int, source: str) -> None:
    res = CliRunner().invoke(app, ["show", str(runs[name]), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    (group,) = doc["groups"]
    assert group["degenerate"] == degenerate and group["quality"]["echo"] == degenerate
    assert group["degenerate_share"] == pytest.approx(degenerate / records)
    assert doc["quality"]["source"] == source
    assert (doc["warning"] is not None) is (degenerate * 2 > records)


def test_show_prints_the_warning(runs: dict[str, Path]) -> None:
    res = CliRunner().invoke(app, ["show", str(runs["unanalysed"])])
    assert res.exit_code == 0
    assert "warning:" in res.output and "2 of 2 responses (100%) are degenerate" in res.output
    healthy = CliRunner().invoke(app, ["show", str(runs["healthy"])])
    assert healthy.exit_code == 0 and "warning:" not in healthy.output


def test_run_warns_at_the_end(tmp_path: Path) -> None:
    args = ["run", "calc3-exam1", "--model", "mock/base", "-M", "responses=" + json.dumps([ECHO]), "--limit", "2",
            "--out", str(tmp_path / "run")]
    res = CliRunner().invoke(app, args, env={"MATHLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert res.exit_code == 0, res.output
    # after the summary table and the run directory lines
    assert res.output.index("warning:") > res.output.index("summary:")
    assert "2 of 2 responses (100%) are degenerate" in " ".join(res.output.split())
    quiet = CliRunner().invoke(app, [*args[:-2], "--out", str(tmp_path / "run1"), "-q"],
                               env={"MATHLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert quiet.exit_code == 0 and "summary:" not in quiet.output  # -q: warnings and errors only
    assert "2 of 2 responses (100%) are degenerate" in " ".join(quiet.output.split())
    as_json = CliRunner().invoke(app, [*args[:-2], "--out", str(tmp_path / "run2"), "--json"],
                                 env={"MATHLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert as_json.exit_code == 0
    assert "warning:" in as_json.stderr and json.loads(as_json.stdout)["warning"]
