"""The report's comparison section in a real browser (headless Chromium driven by Playwright).

Two runs of a scripted model (`mathlens run` with `mock/`, then `mathlens analyze`), one report over
both: the comparison section lists the items whose verdict changed, and clicking one opens a
side-by-side view with run A's response and run B's response and both verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mathlens.report import write_report
from support import compare_runs as h

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compare-browser")
    # q2 right in A and wrong in B; q3 wrong in A and right in B
    a = h.mock_run(tmp, "runA", [1, 2, 3], {1, 2})
    b = h.mock_run(tmp, "runB", [1, 2, 3], {1, 3})
    out = tmp / "report.html"
    write_report([a, b], out)
    return out


def test_changed_item_link_opens_both_responses(report: Path, browser: Any) -> None:
    # `report` first: its runs use asyncio, which cannot start inside Playwright's event loop
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-report-ready='1']")
    section = page.locator("#sec-compare")
    assert section.is_visible()
    changed = section.locator("figure.tbl", has_text="Changed verdicts")
    assert changed.locator("tbody tr").count() == 2
    link = changed.locator("tbody tr", has_text="arith/q2").locator("a")
    target = (link.get_attribute("href") or "").lstrip("#")
    pair = page.locator(f"[id='{target}']")
    assert pair.get_attribute("open") is None  # closed until asked for
    link.click()
    from playwright.sync_api import expect  # installed whenever `browser` is given

    # polled from outside the page: the report's CSP forbids evaluating strings, as a predicate would be
    expect(pair).to_have_js_property("open", True)
    sides = pair.locator("article.compare-side")
    assert sides.count() == 2
    a_side, b_side = sides.nth(0), sides.nth(1)
    assert a_side.is_visible() and b_side.is_visible()
    assert "2 + 1 = 3." in a_side.locator("pre.response").inner_text()
    assert "2 + 1 = 4." in b_side.locator("pre.response").inner_text()
    assert a_side.locator(".badge").inner_text() == "correct" and b_side.locator(".badge").inner_text() == "incorrect"
    # side by side: B's card starts to the right of A's, on the same row
    box_a, box_b = a_side.bounding_box(), b_side.bounding_box()
    assert box_a is not None and box_b is not None
    assert box_b["x"] >= box_a["x"] + box_a["width"] - 1 and abs(box_b["y"] - box_a["y"]) < 5
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-compare.png"), full_page=False)
    assert errors == []
    page.close()
