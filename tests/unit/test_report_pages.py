"""A report whose run has more questions than the main page holds: the most telling questions on the
page (the first open), the rest in question pages written beside it, every link pointing where the
question is, and a smaller run later leaving no stale page behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mathlens.report import ReportOptions, write_report
from mathlens.report.render import pages_folder
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"


SMALL = dict(open_questions=1, main_questions=2, page_questions=2)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # calc1-exam1 has more than five questions; q? answered right, one wrong (an arithmetic slip)
    return fx.make_run(tmp_path_factory.mktemp("pages") / "run", [fx.SOLUTION, fx.WRONG], limit=5,
                       exam="calc1-exam1")


def _anchors(html: str) -> list[str]:
    return re.findall(r'<details class="question" id="([^"]+)"', html)


def test_questions_beyond_the_main_page_go_to_linked_pages(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "study.html"
    report = write_report([run], out, ReportOptions(**SMALL))
    html = out.read_text(encoding="utf-8")
    folder = tmp_path / pages_folder(out)
    pages = sorted(folder.glob("page-*.html"))
    assert folder.name == "study_questions" and [p.name for p in pages] == ["page-0001.html", "page-0002.html"]
    main = _anchors(html)
    on_pages = [a for p in pages for a in _anchors(p.read_text(encoding="utf-8"))]
    assert len(main) == 2 and len(on_pages) == 3 and not set(main) & set(on_pages)
    assert report.total_questions == 5 and report.summary()["questions"] == 5
    assert html.count(" open data-featured") == 1  # only the first question drawn open
    for p in pages:  # every page is linked from the main page, and links back to it
        assert f'href="study_questions/{p.name}"' in html
        assert 'href="../study.html"' in p.read_text(encoding="utf-8")
    # a question on a page is linked there from the main page's tables (the instructor flags list it)
    linked = set(re.findall(r'href="study_questions/(page-\d+\.html)#([^"]+)"', html))
    assert linked and all(a in _anchors((folder / f).read_text(encoding="utf-8")) for f, a in linked)


def test_the_most_telling_question_comes_first(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    write_report([run], out, ReportOptions(**SMALL))
    html = out.read_text(encoding="utf-8")
    first = html.split('<details class="question"')[1].split("</details>")[0]
    # the wrong answer with its invalid step comes before the correct ones
    assert "b-incorrect" in first and "data-invalid-step" in first


def test_a_smaller_report_removes_the_pages_it_no_longer_has(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    write_report([run], out, ReportOptions(**SMALL))
    assert len(list((tmp_path / "report_questions").glob("page-*.html"))) == 2
    write_report([run], out, ReportOptions(open_questions=1, main_questions=4, page_questions=2))
    assert [p.name for p in (tmp_path / "report_questions").glob("page-*.html")] == ["page-0001.html"]
    write_report([run], out)  # the default main page holds all five
    assert list((tmp_path / "report_questions").glob("page-*.html")) == []
    assert not list(tmp_path.glob("*.tmp"))
