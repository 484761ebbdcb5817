"""The reasoning trace in the report, in a real browser (headless Chromium driven by Playwright).

A run of a scripted model whose replies carry an inline ``<think>`` trace (split off by the
`Model` wrapper), one of them cut by the token cap; then `mathlens analyze` and the report. In the
page the trace is collapsed until its summary is clicked, the visible answer is shown outside it,
and the cut trace carries its badge and says that there is no visible answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mathlens.report import write_report

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

TRACE = "Let f(x, y) = x^2 y. The partial derivative f_x = 2xy, and f_y = x^2."
ANSWER = "Final answer: f_x = 2xy, f_y = x^2"
#: longer than the token cap below (the scripted model caps at whole words): the trace never closes
LONG_TRACE = " ".join(f"thought{i}" for i in range(60))
CAP = 40


def _cli(*args: str, cache: Path) -> None:
    """A mathlens command in a child process (Playwright's sync API holds this thread's event loop)."""
    res = subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "MATHLENS_CACHE_DIR": str(cache)})
    assert res.returncode == 0, res.stderr[-2000:]



@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("traces") / "run"
    replies = [f"<think>\n{TRACE}\n</think>\n\n{ANSWER}", f"<think>\n{LONG_TRACE}\n</think>\n\nFinal answer: 1"]
    assert len(replies[0].split()) < CAP < len(replies[1].split())
    _cli("run", "calc3-exam1", "--model", "mock/traces", "-M", "responses=" + json.dumps(replies), "--limit", "2",
         "--max-tokens", str(CAP), "--out", str(run), "--quiet", cache=run.parent / ".cache")
    _cli("analyze", str(run), cache=run.parent / ".cache")
    write_report([run], run / "report.html")
    return run / "report.html"


def test_trace_is_collapsed_and_the_answer_outside_it(browser: Any, report: Path) -> None:
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_selector("html[data-report-ready='1']")
    page.evaluate("document.querySelectorAll('details.question').forEach(d => d.open = true)")
    cards = page.locator("#sec-responses article.response-card, article.response-card")
    intact = cards.filter(has_text="Final answer: f_x").first
    trace = intact.locator("details.trace")
    assert trace.get_attribute("open") is None  # collapsed by default
    assert not trace.locator("pre.trace").is_visible()
    answer = intact.locator("pre.response")
    assert answer.is_visible() and ANSWER in answer.inner_text()
    assert trace.locator("pre.response").count() == 0 and intact.locator("details.trace pre.response").count() == 0
    trace.locator("summary").click()
    assert trace.get_attribute("open") is not None
    assert trace.locator("pre.trace").is_visible()
    assert "f_x = 2xy" in trace.locator("pre.trace").inner_text()
    assert "Final answer" not in trace.locator("pre.trace").inner_text()

    cut = cards.filter(has_text="thought0").first
    badge = cut.locator("[data-flag=trace_truncated]")
    assert badge.is_visible() and "trace cut by token cap" in badge.inner_text()
    assert cut.locator("pre.response").count() == 0
    assert cut.locator("p.answer-missing").is_visible()
    assert cut.locator("details.trace").get_attribute("open") is None
    assert errors == []
    page.close()
