"""The report opens with the lens: in a real browser, before any click, the "what to trust" box comes
first and the first question's reasoning graph, its invalid step with the value expected, its
final-answer verdict beside the reference and its reconciled grade are visible.

The run goes through the real CLI: a scripted student (`mock/`) makes an arithmetic slip, the real
analyzers find it, and a scripted judge (a stand-in for a judge model, whose replies a test must be
able to predict) gives full points, which the checker's verdict then contradicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mathlens.report import write_report
from support import report_run as fx

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CASES = ROOT / "tests" / "cases" / "report"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SLIP = """1. The function is f(x,y) = x^2 y.
2. f_x = 2xy and f_y = x^2.
3. At (-1, 4): f_x = 2(-1)(4) = -6 and f_y = (-1)^2 = 1.
4. So the gradient is <-6, 1>.
Final answer: <-6, 1>"""

FULL = json.dumps({k: {"points": p, "rationale": "looks right"} for k, p in
                   (("method", 3), ("execution", 4), ("final_answer", 1), ("notation", 1), ("clarity", 1))})




@pytest.fixture(scope="module")
def slip_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("first-screen")
    run = fx.make_run(base / "run", [SLIP], limit=1, ablate=True)
    fx.cli("grade", str(run), "--judge", "mock/judge", "-J", "responses=" + json.dumps([FULL]), "--no-cache",
           cache=base / ".cache-judge")
    write_report([run], run / "report.html")
    return run


def test_the_first_screen_shows_the_reasoning_without_a_click(slip_run: Path, browser: Any) -> None:
    # slip_run first: it runs the CLI in-process, before Playwright holds this thread's event loop
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((slip_run / "report.html").as_uri())
    page.wait_for_selector("html[data-report-ready='1']")

    trust = page.locator("#sec-trust")
    first = page.locator("details.question").first
    assert trust.is_visible() and first.get_attribute("open") is not None
    trust_box, first_box = trust.bounding_box(), first.bounding_box()
    assert trust_box is not None and first_box is not None and trust_box["y"] < first_box["y"]
    aggregates = page.locator("#sec-overview").bounding_box()
    assert aggregates is not None and aggregates["y"] > first_box["y"]  # aggregate tables come after
    text = trust.inner_text()
    assert "UNRELIABLE JUDGE" in text and "disagrees on 1 of 1 decisive final answers" in text
    assert "answered pairs" in text and "complexity scale" in text

    # the first question's graph, with its invalid step marked, laid out and visible (no click made)
    graph = first.locator("svg.graph-svg").first
    assert graph.is_visible()
    box = graph.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 20
    bad = first.locator("svg.graph-svg g.node.invalid")
    assert bad.count() >= 1 and bad.first.is_visible()

    lens = first.locator("[data-lens]").first
    assert lens.is_visible()
    lens_text = lens.inner_text()
    assert "<-6, 1>" in lens_text and "<-8, 1>" in lens_text and "incorrect" in lens_text
    step = lens.locator("[data-invalid-step]").first
    assert step.is_visible() and "expected" in step.inner_text()
    # the reconciled grade: the judge's 10 points, of which the final-answer point goes to the checker
    assert "rubric grade 9 / 10" in lens_text and "the judge alone gave 10" in lens_text
    assert "judge gave 1 of 1 points for a final answer the checker found incorrect" in lens_text
    assert "full points (4 of 4) for the working although step" in lens_text

    # Table 6 further down carries the same mark, with the count
    assert "UNRELIABLE JUDGE: 1 of 1 decisive answers disagree" in page.locator("#exam-scores").inner_text()

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report-first-screen.png"
    page.screenshot(path=str(shot))  # the first screen only: what a reader sees on opening the page
    assert shot.stat().st_size > 10_000
    page.close()
