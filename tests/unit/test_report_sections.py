"""Each report section rendered from a real mock-model run (flow, answers and sensitivity from their
analyzers) plus judge-based analyses from tests/cases/report/judged.yaml. Structure, not snapshots."""

from __future__ import annotations

import json
import re
import shutil
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml

from mathlens.analyze.ablation.analyzer import SENSITIVITY
from mathlens.analyze.flow.models import FLOW
from mathlens.errors import UnknownNameError, UserError
from mathlens.report import ReportOptions, make_report, write_report
from mathlens.report.loader import load_runs
from mathlens.report.registry import SECTIONS, QuestionSection, ReportSection, load_sections
from mathlens.report.render import build_report
from mathlens.runs.store import RunStore
from support import report_run as fx

CASES = Path(__file__).resolve().parents[1] / "cases" / "report"




class Dom(HTMLParser):
    """Start tags with their attributes, in document order, plus the text inside each element id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        out = []
        for t, a in self.tags:
            if t != tag:
                continue
            if all((a.get(k.rstrip("_")) or "").split().__contains__(v) if k == "class_" else a.get(k) == v
                   for k, v in attrs.items()):
                out.append(a)
        return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "run"
    fx.make_run(out, [fx.WRONG, fx.SOLUTION], ablate=True)
    fx.add_judged_analyses(out)
    return out


@pytest.fixture(scope="module")
def page(run_dir: Path) -> tuple[str, Any]:
    report = make_report([run_dir])
    return report.html(), report




def test_judged_fixtures_match_the_owning_models(run_dir: Path) -> None:
    """Every judge-based fixture was written through its owning spec and reads back whole."""
    docs = yaml.safe_load((CASES / "judged.yaml").read_text())
    for name, doc in docs.items():
        spec = fx.judged_spec(name)
        read = spec.read(run_dir)
        assert read is not None and read.envelope.analysis == name, name
        assert read.envelope.entries == len(doc.get("entries") or []), name
        assert len(list(spec.entries(run_dir))) == read.envelope.entries, name


def test_every_registered_section_loads() -> None:
    sections = load_sections()
    assert [s.id for s in sections] == list(SECTIONS)
    assert all(isinstance(s, ReportSection | QuestionSection) for s in sections)


def test_report_sections_present_with_all_analyses(page: tuple[str, Any]) -> None:
    html, report = page
    dom = Dom(html)
    ids = {a.get("id") for _, a in dom.tags}
    for sid in ("trust", "overview", "scores", "interpretability", "flags", "agreement", "maple", "adaptivity",
                "question_index"):
        assert f"sec-{sid}" in ids, sid
    assert "sec-other_analyses" not in ids  # every file present has its own view
    assert len(dom.find("details", class_="question")) == 2
    q_sections = {a.get("data-section") for a in dom.find("section", class_="qsec")}
    assert q_sections == {"question", "lens", "responses", "answers", "rubric", "flow", "sensitivity", "maple_steps",
                          "adaptivity_items"}
    assert report.summary()["questions"] == 2


def test_flow_graph_matches_flow_analysis(run_dir: Path, page: tuple[str, Any]) -> None:
    html, _ = page
    dom = Dom(html)
    originals = [e.result for e in FLOW.entries(run_dir) if e.record.original and e.result is not None]
    graphs = dom.find("svg", class_="graph-svg")
    assert len(graphs) == len(originals)
    nodes = dom.find("g", class_="node")
    assert len(nodes) == sum(len(r.steps) for r in originals)
    invalid = [r for r in originals if r.metrics.first_invalid_step is not None]
    assert invalid, "the scripted wrong solution has an invalid step"
    assert len(dom.find("g", class_="invalid")) == sum(sum(s.verdict == "invalid" for s in r.steps) for r in originals)
    assert len(dom.find("path", class_="edge")) == sum(len(r.edges) for r in originals)
    # Every response's mean expression depth, as the flow analysis wrote it, is shown with its metrics.
    depths = [round(r.metrics.mean_depth, 3) for r in originals if r.metrics.mean_depth is not None]
    assert depths
    shown = re.findall(r"<dt>mean depth</dt><dd>([^<]*)</dd>", html)
    assert sorted(float(v) for v in shown) == sorted(depths)


def test_sensitivity_view_lists_variants_and_ranks_impact(run_dir: Path, page: tuple[str, Any]) -> None:
    html, _ = page
    dom = Dom(html)
    n_variants = sum(1 for line in (run_dir / "records.jsonl").read_text().splitlines()
                     if json.loads(line)["variant"]["kind"] != "original")
    assert len(dom.find("li", class_="variant-text")) == n_variants
    assert dom.find("del") and dom.find("ins")  # a removal and a keyword substitution
    for q in SENSITIVITY.entries(run_dir):
        impacts = sorted((i.impact for i in q.impact), reverse=True)
        shown = [f"Impact: {v:.3f}" for v in impacts]
        block = html.split(f'id="q-calc3-exam1-{q.question_id}"')[1].split('<details class="question"')[0]
        positions = []
        for s in shown:  # equal impacts: look past the previous match
            positions.append(block.index(s, positions[-1] + 1 if positions else 0))
        assert positions == sorted(positions)  # "Important phrase … Impact …" lines largest first


def test_scores_table_uses_grade_tables_and_class_average(page: tuple[str, Any]) -> None:
    html, _ = page
    table6 = html.split('id="exam-scores"')[1].split("</figure>")[0]
    assert "8.5/30" in table6 and "28.3" in table6 and "78.0" in table6
    assert 'id="exam-scores-chart"' in html and "class average" in html


def test_model_and_judge_text_is_escaped(page: tuple[str, Any]) -> None:
    html, _ = page
    assert "Uses partial derivatives &lt;b&gt;correctly&lt;/b&gt;." in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert len(Dom(html).find("script")) == 1


def test_run_level_tables_have_csv_data_urls(page: tuple[str, Any]) -> None:
    html, _ = page
    dom = Dom(html)
    links = dom.find("a", class_="csv")
    inline = [a for a in links if (a.get("href") or "").startswith("data:text/csv")]
    assert inline and all(a.get("download", "").endswith(".csv") for a in links)
    flags = next(a for a in inline if a.get("data-table") == "flags")
    text = unquote(str(flags["href"]).split(",", 1)[1])
    assert text.splitlines()[0] == "question,model · configuration,flag,reason,value,threshold"
    assert "invalid step" in text
    per_question = [a for a in links if a not in inline]
    assert per_question and all("hidden" in a for a in per_question)  # built by the script on click


def test_sections_are_skipped_without_their_analyses(tmp_path: Path, run_dir: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(run_dir / "manifest.json", bare)
    shutil.copy(run_dir / "records.jsonl", bare)
    report = make_report([bare])
    html = report.html()
    ids = {s.id for s in report.sections}
    # the scripted responses are not truncated: no flags; the trust box says the analyses are missing
    assert ids == {"trust", "overview", "question_index"}
    skipped = dict(report.skipped)
    assert skipped["maple"] == "no analysis/maple.jsonl" and "flow" in skipped
    dom = Dom(html)
    assert not dom.find("section", id="sec-maple") and not dom.find("svg", class_="graph-svg")
    assert dom.find("span", **{"data-skipped": "maple"})


def test_unreadable_analysis_is_noted_not_fatal(tmp_path: Path, run_dir: Path) -> None:
    run = tmp_path / "r"
    shutil.copytree(run_dir, run)
    path = run / "analysis" / "sensitivity.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], "{ not json", *lines[2:]]) + "\n", encoding="utf-8")
    report = make_report([run])
    assert any(f"skipped the sensitivity analysis: {path}: line 2" in n for n in report.notes), report.notes
    assert all("sensitivity" not in [s.id for s in b.sections] for b in report.questions)


@pytest.mark.parametrize("name", ["flow", "answers", "sensitivity"])
def test_an_analysis_file_in_the_old_layout_is_named_with_the_version_expected(
        tmp_path: Path, run_dir: Path, name: str) -> None:
    run = tmp_path / "r"
    shutil.copytree(run_dir, run)
    (run / "analysis" / f"{name}.jsonl").unlink()
    old = CASES / "old_layout" / f"{name}.json"
    shutil.copy(old, run / "analysis" / f"{name}.json")
    report = make_report([run])
    [note] = [n for n in report.notes if f"{name}.json" in n]
    assert "older mathlens in the unversioned layout" in note and f"'{name}' schema version " in note
    assert "Re-run `mathlens" in note
    from typer.testing import CliRunner

    from mathlens.cli.main import app
    res = CliRunner().invoke(app, ["analyze", str(run), "--only", name])  # re-running rewrites it
    assert res.exit_code == 0, res.output
    assert not (run / "analysis" / f"{name}.json").exists() and (run / "analysis" / f"{name}.jsonl").exists()
    assert not [n for n in make_report([run]).notes if f"{name}.json" in n]


def test_unknown_analysis_shows_in_other_analyses(tmp_path: Path, run_dir: Path) -> None:
    from pydantic import BaseModel

    from mathlens.runs.documents import DocumentSpec

    class Row(BaseModel):
        n: int

    class Summary(BaseModel):
        status: str
        n: int
        rows: list[int]

    run = tmp_path / "r"
    shutil.copytree(run_dir, run)
    DocumentSpec("newthing", 1, Row, Summary).write(run, run_id="x", records_sha256="", entries=[Row(n=1)],
                                                    summary=Summary(status="ok", n=3, rows=[1]))
    html = make_report([run]).html()
    block = html.split('id="sec-other_analyses"')[1]
    assert "analysis/newthing.jsonl" in block and "1 items" in block and "schema version" in block


def test_multi_run_report_puts_responses_side_by_side(tmp_path: Path, run_dir: Path) -> None:
    other = fx.make_run(tmp_path / "other", [fx.SOLUTION], model="mock/second", analyze=False)
    report = make_report([run_dir, other])
    assert report.title.endswith("2 runs")
    block = next(b for b in report.questions if b.view.question_id == "q1")
    assert len(block.view.originals) == 2
    html = report.html()
    assert "mock/second · baseline" in html and report.runs[1].manifest.run_id in html


def test_section_selection_and_custom_sections(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "only.html"
    report = write_report([run_dir], out, ReportOptions(sections=("overview", "flow")))
    assert [s.id for s in report.sections] == ["overview"]
    assert all([s.id for s in b.sections] == ["flow"] for b in report.questions)
    assert out.read_text().startswith("<!DOCTYPE html>")
    with pytest.raises(UnknownNameError, match="Did you mean 'overview'"):
        make_report([run_dir], ReportOptions(sections=("overveiw",)))
    custom = ReportSection(id="hello", title="Hello", template="sections/flags.html.j2",
                           build=lambda ctx: None)
    rep = build_report(load_runs([run_dir]), sections=[custom])
    assert rep.sections == [] and rep.skipped == [("hello", "nothing to show for these runs")]


def test_not_a_run_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        make_report([tmp_path])


def test_page_is_self_contained(page: tuple[str, Any]) -> None:
    html, _ = page
    dom = Dom(html)
    for tag, attrs in dom.tags:
        for name in ("src", "href", "action", "xlink:href"):
            value = attrs.get(name) or ""
            assert not value.startswith(("http:", "https:", "//", "javascript:")), (tag, name, value)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_answers_section_shows_where_the_answer_was_read(run_dir: Path, page: tuple[str, Any]) -> None:
    from mathlens.analyze.grading.answer_records import ANSWERS

    html, _ = page
    marks = re.findall(r'<dd class="read-from">.*?<mark>(.*?)</mark>', html, re.S)
    responses = {r.key: r.response for r in RunStore(run_dir).records() if r.variant.kind == "original"}
    expected = [responses[e.record.key][e.verdict.span.start:e.verdict.span.end]
                for e in ANSWERS.entries(run_dir) if e.record.key in responses and e.verdict and e.verdict.span]
    assert expected and sorted(marks) == sorted(html_escape(t, quote=False) for t in expected)
    assert sorted(marks) == ["&lt;-6, 1&gt;", "&lt;-8, 1&gt;"]  # the answer lines' text, escaped


def test_the_format_badge_says_what_the_role_forbade_and_only_then(tmp_path: Path) -> None:
    """A response in LaTeX is marked under a role that forbids LaTeX, and not under one that does not."""
    latex = r"We get \(x = \frac{1}{2}\) by **halving**. Final answer: \(\boxed{\frac{1}{2}}\)"
    role = tmp_path / "role.txt"
    role.write_text("You are a student sitting an exam. Show your working.", encoding="utf-8")
    pages = {}
    for name, extra in (("forbids", []), ("allows", ["--system-role", str(role)])):
        out = tmp_path / name
        fx.cli("run", "calc3-exam1", "--model", fx.MODEL, "-M", "responses=" + json.dumps([latex]), "--limit", "1",
               "--out", str(out), "--quiet", *extra, cache=tmp_path / f".cache-{name}")
        fx.cli("analyze", str(out), "--only", "answers")
        pages[name] = make_report([out]).html()
    # \( \frac \) \boxed \frac \) ... and **halving**: every mark counted, LaTeX and markup alike
    marks = re.findall(r"LaTeX or markup the role forbids: (\d+) marks", pages["forbids"])
    assert marks and int(marks[0]) >= 6
    assert "the role forbids" not in pages["allows"] and "format violation" not in pages["allows"]


def _cut_card(tmp_path: Path, exam: str, response: str, max_tokens: int, card: str = "lens-card") -> str:
    """The text of the `card` (the lens card, or the answers section's `verdict` card) for `response`
    to the first question of `exam`, cut by the stand-in at `max_tokens` words and checked by the
    answers analysis (white space folded)."""
    out = tmp_path / f"cut-{card}"
    fx.cli("run", exam, "--model", fx.MODEL, "-M", "responses=" + json.dumps([response]), "--limit", "1",
           "--max-tokens", str(max_tokens), "--out", str(out), "--quiet", cache=tmp_path / ".cache")
    assert next(RunStore(out).records()).finish_reason == "length"
    fx.cli("analyze", str(out), "--only", "answers")
    found = re.search(rf'<article class="card {card}".*?</article>', make_report([out]).html(), re.S)
    assert found is not None
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", found.group(0)))


def test_a_cut_response_shows_no_final_answer_and_why(tmp_path: Path) -> None:
    """The token cap cuts the response after an intermediate result: the lens card gives no final
    answer, says why, and does not show the intermediate value as an answer."""
    long = ("The first partial derivative is f_x = 2xy, so at the point it equals -13 . "
            "Then the second partial derivative is f_y = x^2 and we evaluate it next at the same point")
    text = _cut_card(tmp_path, "calc3-exam1", long, 18)
    assert "no answer" in text and "token cap cut the response before it stated a final answer" in text
    assert "-13" not in text  # the intermediate value is not shown as the answer
    # the answers section tells the same story: no answer found, and the place the work stopped
    # (the -13 it stopped on is shown as that, never as where an answer was read)
    verdict = _cut_card(tmp_path, "calc3-exam1", long, 18, card="verdict")
    assert re.search(r"answer found none work stopped at .*-13", verdict), verdict
    assert "read from" not in verdict and "(therefore)" not in verdict and "(last number)" not in verdict


def test_a_part_the_cut_ran_into_shows_no_answer_and_why(tmp_path: Path) -> None:
    """Part (a) is answered, then the token cap cuts the work of part (b): the card keeps part (a)'s
    verdict and gives part (b) no answer, with the reason, not the value its work stopped on."""
    long = ("(a) The domain is x >= -2, so the domain is [-2, inf).\n\n(b) The square root takes every "
            "value from 0 up, so we first try y = 7 and see that f(47) = 7 and then continue with the next")
    text = _cut_card(tmp_path, "calc1-exam1", long, 40)
    assert re.search(r"part \(a\) correct \[-2, inf\)", text), text
    assert re.search(r"part \(b\) no answer none: the token cap cut the response", text), text
    assert "f(47) = 7" not in text and " 7 reference" not in text
    # the whole reading is where the work stopped, not an answer: the card reads the parts alone
    assert "final answer read part by part part (a)" in text


def test_a_wrong_part_before_the_cut_leaves_no_whole_answer_on_the_card(tmp_path: Path) -> None:
    """Part (a) is wrong and the cap cuts part (b): the card says incorrect, shows no whole answer
    (nor a place it was read from), part (a)'s wrong value and part (b)'s reason."""
    long = ("(a) The domain is x >= 2, so the domain is [2, inf).\n\n(b) The square root takes every "
            "value from 0 up, so we first try y = 7 and see that f(47) = 7 and then continue with the next")
    text = _cut_card(tmp_path, "calc1-exam1", long, 40)
    assert "final answer read part by part part (a)" in text, text
    assert re.search(r"part \(a\) incorrect \[2, inf\)", text), text
    assert re.search(r"part \(b\) no answer none: the token cap cut the response", text), text


def _answer_cards(tmp_path: Path, response: str, items: str, *run_args: str) -> tuple[str, list[str]]:
    """Run `items` with the stand-in answering `response`, check its answers, and return the report
    and the text of its two answer cards (the lens card, then the answers section's), white space
    folded."""
    out = tmp_path / "answer-cards"
    fx.cli("run", items, "--model", fx.MODEL, "-M", "responses=" + json.dumps([response]), *run_args,
           "--out", str(out), "--quiet", cache=tmp_path / ".cache")
    fx.cli("analyze", str(out), "--only", "answers")
    html = make_report([out]).html()
    cards = [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c))
             for c in re.findall(r'<article class="card (?:lens-card|verdict)".*?</article>', html, re.S)]
    assert len(cards) == 2, cards
    return html, cards


def test_a_question_with_parts_shows_its_answers_part_by_part(tmp_path: Path) -> None:
    """Not cut, with the parts answered in turn: the lens card and the answers section read the
    parts alone, not a whole answer (here the last value of part (b)'s sentence) beside them."""
    response = ("(a) The domain is x >= -2, so the domain is [-2, inf).\n\n(b) The square root takes every "
                "value from 0 up, so the range is [0, inf) and f(47) = 7 for example")
    html, cards = _answer_cards(tmp_path, response, "calc1-exam1", "--limit", "1")
    for text in cards:
        assert "read part by part" in text and re.search(r"\(a\)\s*correct \[-2, inf\)", text), text
        # "and f(47) = 7 for example" illustrates the range stated before it
        assert re.search(r"\(b\)\s*correct \[0, inf\)", text), text
    assert '<dd class="read-from">' not in html


@pytest.mark.parametrize(("judge_total", "said"), [(10.0, True), (9.0, False), (None, False)])
def test_the_card_names_the_judges_own_total_only_when_the_checker_changed_it(
        judge_total: float | None, said: bool) -> None:
    """The grade is 9 of 10: "the judge alone gave" appears when the judge's own total differs."""
    from mathlens.report.render import environment
    from mathlens.report.sections.lens import LensCard, LensGrade

    grade = LensGrade(grader="judge:m", status="graded", total=9.0, judge_total=judge_total, max_total=10.0,
                      disagreements=(), checks=())
    card = LensCard(label="m · baseline", verdict="correct", answer="3", reference="3", how="boxed", reason="",
                    parts=(), by_parts=False, flags=(), invalid=(), invalid_total=0, checked=False, grades=(grade,))
    html = environment().get_template("sections/lens.html.j2").render(data=[card])
    assert "rubric grade" in html and ("the judge alone gave" in html) is said


def test_a_part_read_from_the_one_final_answer_says_so_on_both_cards(tmp_path: Path) -> None:
    """The response labels no part and closes on one word answer: the part it is read for shows the
    reason beside its value, on the lens card and in the answers section's parts table."""
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({
        "id": "r1", "text": "Apply the ratio test to the sum of n^2/3^n.",
        "parts": [{"label": "a", "text": "Find L.", "answer": "1/3"},
                  {"label": "b", "text": "Does it converge?", "answer": "converges"}]}) + "\n", encoding="utf-8")
    response = ("### Step 1\nThe ratio tends to one third.\n### Step 2\nSo the series converges.\n"
                "\\[ \\boxed{\\text{Converges}} \\]")
    _, cards = _answer_cards(tmp_path, response, str(items))
    for text in cards:
        assert re.search(r"\(b\)\s*correct .*its one final answer is read for this part", text), text
        assert re.search(r"\(a\)\s*unparseable", text), text
