"""Table 2 split by learner profile, over the applicable cases only.

A mock tutoring run: two models (A explains step by step, B only states an answer), two grade-4
learners and the first two grade-4 items under all four context conditions, so every (model,
learner, condition) cell holds two responses. The learners:

* `ana`: low performer who dislikes math and is not confident (attitude and self-efficacy both
  leave something to improve, so LA and SE can apply to her);
* `ben`: high performer who likes math, moderately confident (LA never applies to him, SE does).

A scripted judge gives model B "no" on every adaptivity item, and model A:

| item | rating |
|---|---|
| CK | "no" under condition 2, "yes" otherwise |
| LA | "no" under condition 4, "yes" otherwise |
| SE | "yes" for ana; for ben "negative" under condition 2, "no" otherwise |
| CCS | "no" under condition 3, "yes" otherwise |
| DL, Exam, Prac, SBS | "yes" |
| Expl | "yes" under condition 1 only |

Applicable cases (the rubric's rule): CK, DL, LA, SE need the learner's self-description
(conditions 2 and 4); CCS the learner's grade (conditions 2, 3, 4); the complexity items apply
always; LA only for a learner who does not like math, SE only for one who is not fully confident.
The expected counts below follow from these two tables by hand.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from mathlens.analyze.adaptivity.rubric import Applicability, load_rubric
from mathlens.analyze.adaptivity.study import StudyOptions, compute_stats, new_manifest, run_study
from mathlens.analyze.adaptivity.tables import TUTOR_STATS, Table2ProfileRow, TutorStats
from mathlens.analyze.registry import run_one
from mathlens.models.base import Message
from mathlens.models.registry import get_model
from mathlens.report.context import ReportContext
from mathlens.report.export import FORMATS, export_tables
from mathlens.report.loader import load_run, load_runs, question_views
from mathlens.report.sections import adaptivity
from mathlens.runs.documents import DocumentVersionError
from mathlens.runs.store import RunStore
from mathlens.solve.tutoring import LearnerProfile

RUBRIC = load_rubric()
CASES = Path(__file__).resolve().parents[1] / "cases" / "adaptivity"
PROFILES = """\
- {id: ana, grade: 4, performance: low, attitude: dislikes, self_efficacy: low}
- {id: ben, grade: 4, performance: high, attitude: likes, self_efficacy: moderate}
"""


def _condition(given: str) -> int:
    described, objectives = "I am in grade" in given, "[system prompt]" in given
    return {(False, False): 1, (True, False): 2, (False, True): 3, (True, True): 4}[(described, objectives)]


def _model_a(code: str, condition: int, learner: str) -> str:
    if code == "CK":
        return "no" if condition == 2 else "yes"
    if code == "LA":
        return "no" if condition == 4 else "yes"
    if code == "SE":
        return "yes" if learner == "ana" else ("negative" if condition == 2 else "no")
    if code == "CCS":
        return "no" if condition == 3 else "yes"
    if code == "Expl":
        return "yes" if condition == 1 else "no"
    return "yes"


def scripted_judge(messages: list[Message]) -> str:
    text = messages[-1].content
    item = RUBRIC.item(re.search(r"Rubric question (Q\d+)", text).group(1))  # type: ignore[union-attr]
    head, rest = text.split("What the tutor was given:", 1)
    given, reply = rest.split("The tutor's reply:", 1)
    learner = "ana" if "low performer" in head else "ben"
    if item.dimension != "adaptivity":
        label = item.scale[-1].label
    elif "STEP" in reply:
        label = _model_a(item.code, _condition(given), learner)
    else:
        label = "no"
    return json.dumps({"rationale": "scripted", "rating": label})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("profiles")
    (root / "learners.yaml").write_text(PROFILES, encoding="utf-8")
    manifest = new_manifest(StudyOptions(items=["tutoring"], models=["mock/a", "mock/b"],
                                         profiles=str(root / "learners.yaml"), limit=2, max_tokens=64))
    models = {"mock/a": get_model("mock/a", {"responses": ["STEP one: read the question."]}, cache=None),
              "mock/b": get_model("mock/b", {"responses": ["The answer is C."]}, cache=None)}
    store = RunStore(root / "run")
    store.write_manifest(manifest)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MATHLENS_CACHE_DIR", str(root / "cache"))
        result = asyncio.run(run_study(store, manifest, models))
        assert (result.written, result.errors) == (2 * 2 * 4 * 2, 0)
        summary = run_one(store, "tutor_scores", judge="mock/judge", judge_options={"func": scripted_judge})
        assert summary.summary is not None and summary.summary.counts == {"ok": 32 * 19}
        compute_stats(store)
    return store.root


@pytest.fixture(scope="module")
def stats(run: Path) -> TutorStats:
    doc = TUTOR_STATS.read(run)
    assert doc is not None and doc.envelope.schema_version == 2
    (st,) = doc.summary.sources
    return st


def _row(st: TutorStats, model: str, profile: str, condition: int | None, code: str) -> Table2ProfileRow:
    (row,) = [r for r in st.table2_profiles
              if (r.model, r.profile, r.condition, r.code) == (model, profile, condition, code)]
    return row


# (model, learner, condition or None for pooled, sub-metric) -> (scored, applicable, satisfied, percent)
EXPECTED: list[tuple[tuple[str, str, int | None, str], tuple[int, int, int, float | None]]] = [
    # CK needs the self-description: conditions 2 (no) and 4 (yes) count, 1 and 3 do not
    (("mock/a", "ana", 1, "CK"), (2, 0, 0, None)),
    (("mock/a", "ana", 2, "CK"), (2, 2, 0, 0.0)),
    (("mock/a", "ana", 4, "CK"), (2, 2, 2, 100.0)),
    (("mock/a", "ana", None, "CK"), (8, 4, 2, 50.0)),
    # LA: ana dislikes math, so conditions 2 (yes) and 4 (no) count; ben likes math: never applicable
    (("mock/a", "ana", None, "LA"), (8, 4, 2, 50.0)),
    (("mock/a", "ben", 2, "LA"), (2, 0, 0, None)),
    (("mock/a", "ben", None, "LA"), (8, 0, 0, None)),
    (("all", "ana", None, "LA"), (16, 8, 2, 25.0)),
    (("mock/b", "ana", None, "LA"), (8, 4, 0, 0.0)),
    # SE: both learners are less than fully confident; ana always helped, ben never (-1 under condition 2)
    (("mock/a", "ana", None, "SE"), (8, 4, 4, 100.0)),
    (("mock/a", "ben", 2, "SE"), (2, 2, 0, 0.0)),
    (("mock/a", "ben", None, "SE"), (8, 4, 0, 0.0)),
    (("all", "ana", None, "SE"), (16, 8, 4, 50.0)),
    # CCS needs the grade: conditions 2, 3 (no), 4 count
    (("mock/a", "ana", 1, "CCS"), (2, 0, 0, None)),
    (("mock/a", "ana", 3, "CCS"), (2, 2, 0, 0.0)),
    (("mock/a", "ben", None, "CCS"), (8, 6, 4, 400 / 6)),
    (("all", "ana", None, "CCS"), (16, 12, 4, 100 / 3)),
    (("all", "ana", 3, "CCS"), (4, 4, 0, 0.0)),
    # DL needs the self-description; always "yes" from model A
    (("mock/a", "ben", None, "DL"), (8, 4, 4, 100.0)),
    # complexity items apply to every response: Expl "yes" only under condition 1
    (("mock/a", "ana", 1, "Expl"), (2, 2, 2, 100.0)),
    (("mock/a", "ana", None, "Expl"), (8, 8, 2, 25.0)),
    (("all", "ben", 1, "Expl"), (4, 4, 2, 50.0)),
    (("all", "ben", None, "SBS"), (16, 16, 8, 50.0)),
]


@pytest.mark.parametrize(("where", "counts"), EXPECTED, ids=["-".join(map(str, w)) for w, _ in EXPECTED])
def test_split_counts_by_hand(stats: TutorStats, where: tuple[str, str, int | None, str],
                              counts: tuple[int, int, int, float | None]) -> None:
    r = _row(stats, *where)
    assert (r.scored, r.applicable, r.satisfied) == counts[:3]
    assert r.percent_satisfied == (None if counts[3] is None else pytest.approx(counts[3]))


def test_every_cell_has_its_rows_and_the_learner(stats: TutorStats) -> None:
    # models a, b, all x two learners x four conditions and the pooled one x nine sub-metrics
    assert len(stats.table2_profiles) == 3 * 2 * 5 * 9
    ana = _row(stats, "all", "ana", None, "SE")
    assert (ana.grade, ana.performance, ana.attitude, ana.self_efficacy) == (4, "low", "dislikes", "low")
    # per model: the high performer's rows first, each learner's by condition, pooled last
    first = stats.table2_profiles[:90]
    assert [r.profile for r in first] == ["ben"] * 45 + ["ana"] * 45 and {r.model for r in first} == {"mock/a"}
    assert [r.condition for r in first[:45:9]] == [1, 2, 3, 4, None]


def test_table2_itself_is_unchanged(stats: TutorStats) -> None:
    """Table 2 still counts every scored response, whatever the learner was told."""
    t2 = {(r.model, r.condition, r.code): (r.percent_satisfied, r.n) for r in stats.table2}
    assert t2[("mock/a", 1, "LA")] == (100.0, 4)  # not applicable to anyone, still counted here
    assert t2[("mock/a", 2, "SE")] == (50.0, 4)  # ana yes twice, ben -1 twice
    assert t2[("all", 3, "CCS")] == (0.0, 8)


def test_applicability_rule() -> None:
    rule = {i.code: i.applies for i in RUBRIC.by_dimension("adaptivity")}
    assert rule["CK"] == rule["DL"] == Applicability(needs="learner")
    assert rule["CCS"] == Applicability(needs="grade")
    assert rule["LA"] == Applicability(needs="learner", attitude=("dislikes", "neutral"))
    assert rule["SE"] == Applicability(needs="learner", self_efficacy=("low", "moderate"))
    assert all(rule[c] == Applicability() for c in ("Expl", "Exam", "Prac", "SBS"))
    assert all(i.applies is None for i in RUBRIC.items if i.dimension != "adaptivity")
    sure = LearnerProfile(id="s", grade=8, performance="intermediate", attitude="neutral", self_efficacy="high")
    la, se, ccs = RUBRIC.item("LA"), RUBRIC.item("SE"), RUBRIC.item("CCS")
    assert [la.applicable(sure, c) for c in (1, 2, 3, 4)] == [False, True, False, True]
    assert [se.applicable(sure, c) for c in (1, 2, 3, 4)] == [False] * 4
    assert [ccs.applicable(sure, c) for c in (1, 2, 3, 4)] == [False, True, True, True]
    assert RUBRIC.item("Q11").applicable(sure, 1)


def test_report_section_shows_the_split(run: Path) -> None:
    runs = load_runs([run])
    data = adaptivity.build(ReportContext(runs=runs, views=question_views(runs)))
    assert data is not None
    (table,) = [t for t in data.tables if t.title.startswith("Adaptivity sub-metrics by learner profile")]
    rows = {(r[0], r[1], r[3]): dict(zip(table.columns, r, strict=True)) for r in table.rows}
    assert len(rows) == 3 * 2 * 9
    la = rows[("mock/a", "ana", "LA")]
    assert la["profile"] == "grade 4, low, attitude dislikes, self-efficacy low"
    assert (la["G1 %"], la["G1 n"], la["G2 %"], la["G2 n"], la["G4 %"], la["G4 n"]) == (None, 0, 100.0, 2, 0.0, 2)
    assert (la["all conditions %"], la["all conditions n"]) == (50.0, 4)
    assert (rows[("all", "ben", "LA")]["all conditions %"], rows[("all", "ben", "LA")]["all conditions n"]) == (None, 0)
    ccs = rows[("all", "ana", "CCS")]
    assert ccs["all conditions %"] == pytest.approx(100 / 3) and ccs["all conditions n"] == 12


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_publication_table(run: Path, tmp_path: Path) -> None:
    index = export_tables(load_run(run), tmp_path, FORMATS)
    (entry,) = [t for t in index.tables if t.id == "tutoring-table2-profiles"]
    rows = _csv((tmp_path / entry.files["csv"]).read_text(encoding="utf-8"))
    # learners in order (high performer first), sub-metrics by aspect as in the study's Table 2
    assert [(r["Learner"], r["Sub-metric"]) for r in rows[:9]] == [("ben", c) for c in (
        "CK", "CCS", "DL", "LA", "SE", "Expl", "Exam", "Prac", "SBS")]
    by = {(r["Learner"], r["Sub-metric"]): r for r in rows}
    se = by[("ben", "SE")]
    assert se["Profile"] == "grade 4, high; attitude: likes; self-efficacy: moderate" and se["Aspect"] == "Motivational"
    assert (se["mock/a G2"], se["mock/a G2 n"], se["mock/a All"], se["mock/a All n"]) == ("0.0", "2", "0.0", "4")
    assert (se["mock/a G1"], se["mock/a G1 n"]) == ("", "0")
    la = by[("ana", "LA")]
    assert (la["all models All"], la["all models All n"], la["mock/b All"], la["mock/b All n"]) == (
        "25.0", "8", "0.0", "4")
    assert float(by[("ana", "CCS")]["all models All"]) == pytest.approx(100 / 3)
    markdown = (tmp_path / entry.files["markdown"]).read_text(encoding="utf-8")
    assert "applicable" in markdown and "| ana" in markdown


def test_version_1_statistics_are_refused_and_recomputed(run: Path, tmp_path: Path) -> None:
    """A `tutor_stats` document of schema version 1 (Table 2 without the split) is refused by name and
    version; `compute_stats` replaces it with a version-2 document holding the split."""
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    shutil.copyfile(CASES / "tutor_stats_v1.jsonl", TUTOR_STATS.path(copy))
    with pytest.raises(DocumentVersionError, match=r"schema version 1 .*'tutor_stats' schema version 2"):
        TUTOR_STATS.read(copy)
    compute_stats(RunStore(copy))
    doc = TUTOR_STATS.read(copy)
    assert doc is not None and doc.envelope.schema_version == 2
    assert len(doc.summary.sources[0].table2_profiles) == 3 * 2 * 5 * 9
