"""The report at any run size: 500, 2,000 and 20,000 records (questions × 2 configurations) with flow
and answer analyses.

    .venv/bin/python bench/bench_report.py [--records 500,2000,20000]

Builds a synthetic run per size (scripted solutions; one real flow analysis reused for every
record, written as the analyzers' documents), then measures building the report and writing it
(the main page and the question pages beside it), the size of the main page and of all the pages,
and (when Chromium and Playwright are present) the time a headless browser takes to load the main
page, to open one question on it and to load one question page. The goal (issue: the report of a
20,000-record run) is a main page of at most 10 MB that a browser opens in a few seconds; the
main page's size should not grow with the run. Prints times, sizes and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
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
from mathlens.report import write_report
from mathlens.runs.documents import RecordRef, records_digest
from mathlens.runs.records import ItemSource, ModelEntry, RunRecord
from mathlens.runs.runner import base_manifest
from mathlens.runs.store import RunStore

CONFIGS = ("baseline", "rag")
SOLUTION = "\n".join(f"{i}. Step {i}: f_x = 2xy so at (-1, 4) the value is {i * 3 - 8}." for i in range(1, 8))


def build_run(root: Path, n_questions: int) -> Path:
    items = root / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n_questions):
            fh.write(json.dumps({"id": f"q{i}", "text": f"Find the gradient of f(x,y) = x^{i % 5 + 2} y at (-1, 4).",
                                 "answers": ["<-8, 1>"]}) + "\n")
    run = root / "run"
    store = RunStore(run)
    store.write_manifest(base_manifest(items=[ItemSource(source=str(items), format="jsonl")],
                                       models=[ModelEntry(spec="mock/bench")], configurations=list(CONFIGS),
                                       generate=GenerateConfig(), system_role="role", total_tasks=n_questions * 2))
    # One real analysis of the shared solution, reused for every record (the report is what is timed).
    question = "Find the gradient of f(x,y) = x^2 y at (-1, 4)."
    result = analyze_solution(SOLUTION, question).model_copy(update={"elapsed_s": None, "sympy_s": None})
    refs = []
    for conf in CONFIGS:
        for i in range(n_questions):
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


def browser_times(main: Path, page: Path | None) -> tuple[float, float, float | None] | None:
    """Seconds to load the main page, to lay out one open question's graph there, and to load one
    question page (None when there is none)."""
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
        tab = b.new_page()
        t = time.perf_counter()
        tab.goto(main.as_uri(), wait_until="load")
        load = time.perf_counter() - t
        open_one = tab.evaluate("""() => {
            const qs = document.querySelectorAll('details.question');
            const d = qs[qs.length - 1];
            const t = performance.now();
            d.open = true;
            const box = d.querySelector('svg.graph-svg').getBoundingClientRect();
            return box.width > 0 ? (performance.now() - t) / 1000 : -1;
        }""")
        load_page = None
        if page is not None:
            t = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="load")
            load_page = time.perf_counter() - t
        b.close()
    return load, open_one, load_page


def measure(records: int) -> dict[str, float]:
    """Build, write and open the report of a synthetic run of `records` records."""
    n_questions = records // len(CONFIGS)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run = build_run(Path(tmp), n_questions)
        setup = time.perf_counter() - t
        out = Path(tmp) / "report.html"
        t = time.perf_counter()
        report = write_report([run], out)
        build = time.perf_counter() - t
        main_mb = out.stat().st_size / 1e6
        pages = sorted((Path(tmp) / "report_questions").glob("page-*.html"))
        pages_mb = sum(p.stat().st_size for p in pages) / 1e6
        largest = max((p.stat().st_size for p in pages), default=0) / 1e6
        print(f"{records:>6} records ({n_questions} questions x {len(CONFIGS)} configurations; setup {setup:.1f} s): "
              f"report built and written in {build:.1f} s ({1000 * build / records:.2f} ms per record); main page "
              f"{main_mb:.2f} MB with {len(report.questions)} questions, {len(pages)} question pages "
              f"{pages_mb:.1f} MB in all (largest {largest:.2f} MB)", flush=True)
        times = browser_times(out, pages[len(pages) // 2] if pages else None)
        row = {"records": records, "build_s": build, "main_mb": main_mb, "pages": len(pages), "pages_mb": pages_mb,
               "largest_page_mb": largest}
        if times is None:
            print("        browser timing skipped (Chromium or Playwright not installed)")
        else:
            load, open_one, load_page = times
            row |= {"load_s": load, "open_one_s": open_one}
            page_text = f", one question page {load_page:.2f} s" if load_page is not None else ""
            print(f"        headless Chromium: main page load {load:.2f} s, opening a question {1000 * open_one:.0f} ms"
                  f"{page_text}", flush=True)
        return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", default="500,2000,20000", help="run sizes, comma-separated")
    sizes = [int(x) for x in ap.parse_args().records.split(",")]
    rows = [measure(n) for n in sizes]
    first = rows[0]
    for r in rows[1:]:
        ratio = r["records"] / first["records"]
        print(f"{r['records']} vs {first['records']} records: {ratio:.0f}x the records, "
              f"main page {r['main_mb'] / first['main_mb']:.2f}x, "
              f"build and write {r['build_s'] / first['build_s']:.1f}x"
              + (f", browser load {r['load_s'] / first['load_s']:.2f}x" if "load_s" in r and "load_s" in first else ""))


if __name__ == "__main__":
    main()
