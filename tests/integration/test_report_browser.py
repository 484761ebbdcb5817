"""The report in a real browser (headless Debian Chromium driven by Playwright).

* the report of a real embedded-model run opens without console errors, its sections and the
  reasoning graph render, and a screenshot is kept under test-artifacts/;
* hostile model output (`<script>`, `onerror=` attributes, a `javascript:` link) sent through the
  whole pipeline — scripted model, real runner, analyzers, report — runs nothing, from a file and
  from `mathlens view`;
* with JavaScript off the tables are still there, and run-level CSV links still download.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mathlens.report import write_report
from mathlens.report.server import ViewServer, ViewState
from support import report_run as fx
from support.embedded import TEST_EMBEDDED_SPEC

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CASES = ROOT / "tests" / "cases" / "report"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

XSS = """1. <script>window.__pwned = 1; alert('script')</script> Let f(x,y) = x^2 y.
2. <img src=x onerror="window.__pwned = 2; alert('img')"> f_x = 2xy and f_y = x^2.
3. <svg onload="window.__pwned = 3"></svg> See <a href="javascript:window.__pwned=4">the notes</a>
or [link](javascript:alert(5)).
4. "><script>window.__pwned = 6</script><b onmouseover="window.__pwned=7">hover</b> javascript:alert(8)
Final answer: <-8, 1> </pre></details><script>window.__pwned = 9</script>"""




def _cli(*args: str, cache: Path | None = None) -> None:
    """Run a mathlens command in a child process (Playwright's sync API holds this thread's event loop)."""
    env = {**os.environ, **({"MATHLENS_CACHE_DIR": str(cache)} if cache is not None else {})}
    res = subprocess.run([sys.executable, "-m", "mathlens.cli.main", *args], capture_output=True, text=True,
                         timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-2000:]



class Watch:
    """Console errors, page errors and dialogs of one page."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)

    def _dialog(self, d: Any) -> None:
        self.dialogs.append(d.message)
        d.dismiss()


def _open_everything(page: Any) -> None:
    page.click("button[data-action=open-all]")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    for el in page.query_selector_all("b, span, td, pre"):  # hover would fire an injected onmouseover
        el.dispatch_event("mouseover")


@pytest.mark.embedded
def test_embedded_run_report_renders(browser: Any, tmp_path: Path, embedded_model_path: Path) -> None:
    run = tmp_path / "run"
    _cli("run", "calc3-exam1", "--model", TEST_EMBEDDED_SPEC, "--limit", "2", "--max-tokens", "64", "--out", str(run),
         "--quiet")
    _cli("analyze", str(run))
    out = write_report([run], run / "report.html")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    watch = Watch(page)
    page.goto((run / "report.html").as_uri())
    page.wait_for_selector("html[data-report-ready='1']")
    for s in out.sections:
        assert page.is_visible(f"#sec-{s.id} h2"), s.id
    assert {"overview", "question_index"} <= {s.id for s in out.sections}
    first = page.locator("details.question").first
    assert first.get_attribute("open") is not None  # the most telling questions are open from the start
    assert first.locator("pre.response").first.is_visible()
    if (run / "analysis" / "flow.jsonl").exists():
        graph = first.locator("svg.graph-svg").first
        graph.wait_for(state="visible")
        box = graph.bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 20
        assert first.locator("svg.graph-svg g.node").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report-embedded.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert watch.errors == [] and watch.dialogs == []
    page.close()


@pytest.fixture(scope="module")
def xss_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("xss") / "run"
    _cli("run", "calc3-exam1", "--model", fx.MODEL, "-M", "responses=" + json.dumps([XSS]), "--limit", "1",
         "--ablate=all", "--out", str(run), "--quiet", cache=run.parent / ".cache")
    _cli("analyze", str(run))
    write_report([run], run / "report.html")
    return run


def _assert_inert(page: Any, watch: Watch) -> None:
    page.wait_for_selector("html[data-report-ready='1']")
    _open_everything(page)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert watch.dialogs == []
    # the hostile text is shown as text, and none of it became markup
    assert "<script>window.__pwned = 1;" in page.inner_text("body")
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('[onerror],[onload],[onmouseover]').length") == 0
    assert page.evaluate("document.querySelectorAll('a[href^=\"javascript\" i]').length") == 0
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    page.click("a.csv >> nth=0")  # a CSV download link is not a script either
    assert page.evaluate("window.__pwned") is None


def test_hostile_output_runs_nothing_from_file(browser: Any, xss_run: Path) -> None:
    page = browser.new_page()
    watch = Watch(page)
    page.goto((xss_run / "report.html").as_uri())
    _assert_inert(page, watch)
    assert [e for e in watch.errors if "Content Security Policy" not in e] == []
    page.close()


@pytest.mark.server
def test_hostile_output_runs_nothing_when_served(browser: Any, xss_run: Path) -> None:
    server = ViewServer(ViewState(xss_run.parent), port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        page = browser.new_page()
        watch = Watch(page)
        page.goto(server.url)
        page.click("a[href='/run/run/']")
        _assert_inert(page, watch)
        page.close()
    finally:
        server.shutdown()
        server.server_close()


def test_tables_work_without_javascript(browser: Any, xss_run: Path) -> None:
    context = browser.new_context(java_script_enabled=False, accept_downloads=True)
    page = context.new_page()
    page.goto((xss_run / "report.html").as_uri())
    assert page.is_visible("#sec-overview table")
    assert page.locator("#sec-question_index tbody tr").count() == 1
    link = page.locator("#sec-overview a.csv").first
    assert (link.get_attribute("href") or "").startswith("data:text/csv")
    with page.expect_download() as dl:
        link.click()
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    assert text.startswith("run,models,configurations")
    first = page.locator("details.question").first
    assert first.get_attribute("open") is not None  # the most telling question is open, no script needed
    assert page.locator("details.question pre.response").first.is_visible()
    first.locator("summary").click()  # and closes and opens without script
    assert not page.locator("details.question pre.response").first.is_visible()
    first.locator("summary").click()
    assert page.locator("details.question pre.response").first.is_visible()
    context.close()


def test_per_question_csv_built_by_script(browser: Any, xss_run: Path) -> None:
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto((xss_run / "report.html").as_uri())
    page.wait_for_selector("html[data-report-ready='1']")
    assert page.locator("details.question").first.get_attribute("open") is not None  # open from the start
    link = page.locator("details.question .flow-panel a.csv").first
    assert link.is_visible()
    with page.expect_download() as dl:
        link.click()
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    assert text.splitlines()[0] == ("step,text,operations,concepts,complexity,depth,verification,"
                                    "expected / detail,redundant")
    assert "'=" not in text and "<script>" in text  # the model's text, as data
    context.close()
