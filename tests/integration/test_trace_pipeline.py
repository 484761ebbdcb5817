"""Reasoning traces end to end: a run against the stand-in server, `mathlens analyze`, the report.

Two protocols, two ways of returning the trace: the OpenAI chat-completions protocol with the trace
inline (``<think>…</think>`` before the answer) and Ollama's ``/api/chat`` with its ``thinking``
field. In both runs one question's trace is cut by the token cap (no visible answer).

What must hold, and what would break it:
- records keep the trace (`reasoning`) and the visible answer (`response`) apart: the trace's own
  phrases never appear in the response;
- the flow analysis reads the trace: its steps include the trace's slip (``6 * 7 = 41``, flagged
  invalid), which the visible answer does not have;
- the answers analysis reads only the visible answer: the question with an intact trace is correct
  (42, from the answer), and the question whose trace the cap cut is ``no_response`` with
  `trace_truncated` and a reason, although its trace ends with the correct answer (reading the
  trace would make it ``correct``);
- both documents count the traces and the cut trace in their summaries; `mathlens show` too;
- the report shows the trace collapsed and the answer outside it, with the cut-trace badge.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mathlens.analyze.flow.models import FLOW
from mathlens.analyze.grading.answer_records import ANSWERS
from mathlens.cli.main import app
from mathlens.report import write_report
from mathlens.runs.store import RunStore
from mathlens.testing.standin import StandinServer

pytestmark = [pytest.mark.server]

#: the trace of the intact question: a slip, caught and corrected, then a draft answer
TRACE_OK = ("Let me think about 6 times 7.\n\nFirst try: 6 * 7 = 41.\n\n"
            "Hmm, recount: 6 * 7 = 42.\n\nDraft: the product is 42.")
ANSWER_OK = "6 * 7 = 42.\n\nFinal answer: 42"
#: the trace of the question the cap cuts: it reaches the right value, but never a visible answer
TRACE_CUT = "Let me think about 5 plus 4.\n\n5 + 4 = 9.\n\nFinal answer: 9"
CUT_MARK = "CUTME"


def _reply(messages: list[dict[str, Any]]) -> str:
    return ANSWER_OK if "6 times 7" in str(messages[-1].get("content")) else "Final answer: 9"


def _trace(messages: list[dict[str, Any]]) -> str:
    return TRACE_OK if "6 times 7" in str(messages[-1].get("content")) else TRACE_CUT


def _cli(*args: str, cache: Path) -> dict[str, Any]:
    res = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False,
                             env={"MATHLENS_CACHE_DIR": str(cache)})
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _items(path: Path) -> Path:
    rows = [{"id": "mul", "text": "What is 6 times 7?", "answers": ["42"]},
            {"id": "add", "text": f"{CUT_MARK}: What is 5 plus 4?", "answers": ["9"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class _Cards(HTMLParser):
    """Per response card: the text inside its trace `<details>`, the text outside, and its badges."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict[str, Any]] = []
        self._depth = 0  # nesting inside the current card
        self._trace_depth: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article" and "response-card" in (a.get("class") or ""):
            self.cards.append({"key": a.get("data-key"), "trace": "", "outside": "", "trace_open": None,
                               "flags": []})
            self._depth = 1
            return
        if not self._depth:
            return
        self._depth += 1
        if tag == "details" and "trace" in (a.get("class") or ""):
            self._trace_depth = self._depth
            self.cards[-1]["trace_open"] = "open" in a
        if a.get("data-flag"):
            self.cards[-1]["flags"].append(a["data-flag"])

    def handle_endtag(self, tag: str) -> None:
        if not self._depth:
            return
        if self._trace_depth == self._depth:
            self._trace_depth = None
        self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.cards[-1]["trace" if self._trace_depth else "outside"] += data


def _check_run(run: Path, cache: Path) -> None:
    recs = {r.question_id: r for r in RunStore(run).records()}
    mul, add = recs["mul"], recs["add"]
    # records: trace and visible answer apart
    assert mul.status == add.status == "ok"
    assert mul.reasoning == TRACE_OK and mul.response == ANSWER_OK
    assert "Let me think" not in (mul.response or "") and "41" not in (mul.response or "")
    assert add.reasoning == TRACE_CUT and add.response == "" and add.finish_reason == "length"
    assert add.trace_truncated and not mul.trace_truncated

    _cli("analyze", str(run), cache=cache)
    flow = {e.record.question_id: e for e in FLOW.entries(run)}
    assert flow["mul"].trace and not flow["mul"].trace_truncated
    assert flow["add"].trace and flow["add"].trace_truncated
    result = flow["mul"].result
    assert result is not None
    steps = " ".join(s.text for s in result.steps)
    assert "Let me think" in steps and "Final answer: 42" not in steps  # the trace, not the answer
    slips = [c for s in result.steps for c in s.claims if c.status == "invalid"]
    assert any("41" in c.text for c in slips), [s.claims for s in result.steps]
    flow_doc = FLOW.read(run)
    assert flow_doc is not None
    assert (flow_doc.summary.with_trace, flow_doc.summary.trace_truncated) == (2, 1)

    answers = {e.record.question_id: e for e in ANSWERS.entries(run)}
    assert answers["mul"].status == "correct" and answers["mul"].trace
    assert answers["mul"].verdict is not None and answers["mul"].verdict.predicted is not None
    assert "42" in answers["mul"].verdict.predicted
    cut = answers["add"]
    assert cut.status == "no_response" and cut.verdict is None  # the trace's "Final answer: 9" is not read
    assert cut.trace_truncated and "trace" in cut.reason and "cap" in cut.reason
    answers_doc = ANSWERS.read(run)
    assert answers_doc is not None
    [group] = answers_doc.summary.summary
    assert (group.with_trace, group.trace_truncated, group.counts["correct"]) == (2, 1, 1)

    shown = _cli("show", str(run), cache=cache)
    assert sum(g["with_trace"] for g in shown["groups"]) == 2
    assert sum(g["trace_truncated"] for g in shown["groups"]) == 1

    write_report([run], run / "report.html")
    parser = _Cards()
    parser.feed((run / "report.html").read_text(encoding="utf-8"))
    cards = {c["key"]: c for c in parser.cards}
    card_mul, card_add = cards[mul.key], cards[add.key]
    assert card_mul["trace_open"] is False and card_add["trace_open"] is False  # collapsed
    assert "First try: 6 * 7 = 41." in card_mul["trace"] and "First try" not in card_mul["outside"]
    assert "Final answer: 42" in card_mul["outside"] and "Final answer: 42" not in card_mul["trace"]
    assert "trace_truncated" in card_add["flags"] and "trace_truncated" not in card_mul["flags"]
    assert "5 + 4 = 9." in card_add["trace"] and "5 + 4" not in card_add["outside"]
    assert re.search(r"No visible answer: the token cap cut", card_add["outside"])


def test_openai_protocol_with_inline_trace(tmp_path: Path) -> None:
    items = _items(tmp_path / "q.jsonl")
    with StandinServer(think="inline", reply=_reply, trace=_trace, faults={CUT_MARK: ["think-cut"]}) as srv:
        _cli("run", str(items), "--model", "openai/standin", "--base-url", srv.url + "/v1", "--out",
             str(tmp_path / "run"), "--quiet", cache=tmp_path / "cache")
        sent = srv.state.requests
    assert len(sent) == 2
    _check_run(tmp_path / "run", tmp_path / "cache")


def test_ollama_protocol_with_thinking_field(tmp_path: Path) -> None:
    items = _items(tmp_path / "q.jsonl")
    with StandinServer(think="field", reply=_reply, trace=_trace, faults={CUT_MARK: ["think-cut"]}) as srv:
        _cli("run", str(items), "--model", "ollama/standin", "--base-url", srv.url, "--out",
             str(tmp_path / "run"), "--quiet", cache=tmp_path / "cache")
        bodies = [r["body"] for r in srv.state.requests]
    assert all(r.get("messages") for r in bodies)  # /api/chat
    _check_run(tmp_path / "run", tmp_path / "cache")
