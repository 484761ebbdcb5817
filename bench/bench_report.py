"""Report speed on a large run: 500 questions × 2 configurations with flow and answer analyses.

Builds a synthetic run (scripted solutions; one real flow analysis reused for every record, written
as the analyzers' documents), then measures building
the report, rendering the HTML, its size, and (when Chromium and Playwright are present) the time a
headless browser takes to load the page and to open one question. Prints times and ratios; asserts
nothing.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from mathlens.analyze.flow.models import FLOW, FlowRecord, FlowSummary
from mathlens.analyze.flow.solution import analyze_solution
from mathlens.analyze.grading.answer_records import ANSWERS, AnswerRecord, AnswersSummary
from mathlens.analyze.grading.verdicts import AnswerVerdict
from mathlens.models.base import GenerateConfig, Message
from mathlens.report import make_report
from mathlens.runs.documents import RecordRef, records_digest
from mathlens.runs.records import ItemSource, ModelEntry, RunRecord
from mathlens.runs.runner import base_manifest
from mathlens.runs.store import RunStore

N_QUESTIONS = 500
CONFIGS = ("baseline", "rag")
SOLUTION = "\n".join(f"{i}. Step {i}: f_x = 2xy so at (-1, 4) the value is {i * 3 - 8}." for i in range(1, 8))


def build_run(root: Path) -> Path:
    items = root / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(N_QUESTIONS):
            fh.write(json.dumps({"id": f"q{i}", "text": f"Find the gradient of f(x,y) = x^{i % 5 + 2} y at (-1, 4).",
                                 "answers": ["<-8, 1>"]}) + "\n")
    run = root / "run"
    store = RunStore(run)
    store.write_manifest(base_manifest(items=[ItemSource(source=str(items), format="jsonl")],
                                       models=[ModelEntry(spec="mock/bench")], configurations=list(CONFIGS),
                                       generate=GenerateConfig(), system_role="role", total_tasks=N_QUESTIONS * 2))
    # One real analysis of the shared solution, reused for every record (the report is what is timed).
    question = "Find the gradient of f(x,y) = x^2 y at (-1, 4)."
    result = analyze_solution(SOLUTION, question).model_copy(update={"elapsed_s": None, "sympy_s": None})
    refs = []
    for conf in CONFIGS:
        for i in range(N_QUESTIONS):
            key = f"mock/bench|{conf}|items|q{i}|original|r0"
            rec = RunRecord(key=key, model="mock/bench", configuration=conf, exam_id="items",
                            question_id=f"q{i}", messages=[Message(role="user", content="x")],
                            config=GenerateConfig(), request_hash="h", content_hash="h", response=SOLUTION,
                            finish_reason="stop", created_at=datetime.now(UTC))
            store.append(rec)
            refs.append(RecordRef.of(rec))
    store.close()
    digest = records_digest(store.records_path)
    FLOW.write(run, run_id="bench", records_sha256=digest,
               entries=(FlowRecord(record=r, status="ok", result=result) for r in refs),
               summary=FlowSummary(lexicon_version=result.lexicon_version, records=len(refs), analysed=len(refs)))
    verdict = AnswerVerdict(status="correct", predicted="<-8, 1>", reference="<-8, 1>")
    ANSWERS.write(run, run_id="bench", records_sha256=digest,
                  entries=(AnswerRecord(record=r, status="correct" if i % 3 else "incorrect", verdict=verdict)
                           for i, r in enumerate(refs)), summary=AnswersSummary())
    return run


def browser_times(page_path: Path) -> tuple[float, float, float] | None:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=args)
        page = b.new_page()
        t = time.perf_counter()
        page.goto(page_path.as_uri(), wait_until="load")
        load = time.perf_counter() - t
        # time from opening a question to its graph being laid out, measured inside the page
        open_one = page.evaluate("""() => {
            const d = document.querySelectorAll('details.question')[250];
            const t = performance.now();
            d.open = true;
            const box = d.querySelector('svg.graph-svg').getBoundingClientRect();
            return box.width > 0 ? (performance.now() - t) / 1000 : -1;
        }""")
        # what lazy rendering saves: laying out every question at once
        open_all = page.evaluate("""() => {
            const t = performance.now();
            document.querySelectorAll('details.question').forEach(d => d.open = true);
            document.body.getBoundingClientRect();
            return (performance.now() - t) / 1000;
        }""")
        b.close()
    return load, open_one, open_all


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run = build_run(Path(tmp))
        setup = time.perf_counter() - t
        t = time.perf_counter()
        report = make_report([run])
        build = time.perf_counter() - t
        t = time.perf_counter()
        html = report.html()
        render = time.perf_counter() - t
        out = Path(tmp) / "report.html"
        out.write_text(html, encoding="utf-8")
        print(f"synthetic run: {N_QUESTIONS} questions x {len(CONFIGS)} configurations, 7 steps each "
              f"(setup {setup:.2f} s)")
        print(f"build report: {build:.2f} s   render HTML: {render:.2f} s   "
              f"per response: {1000 * (build + render) / (N_QUESTIONS * len(CONFIGS)):.2f} ms")
        print(f"page size: {len(html) / 1e6:.2f} MB ({len(html) / (N_QUESTIONS * len(CONFIGS)) / 1e3:.1f} kB "
              "per response)")
        times = browser_times(out)
        if times is None:
            print("browser timing skipped (Chromium or Playwright not installed)")
        else:
            print(f"headless Chromium: page load {times[0]:.2f} s, opening one question {times[1] * 1000:.0f} ms, "
                  f"opening all {N_QUESTIONS} at once {times[2]:.2f} s "
                  f"(all/one ratio {times[2] / max(times[1], 1e-6):.0f})")


if __name__ == "__main__":
    main()
