"""Tutoring documents written before the versioned layout, or in schema version 1 (one entry per
response x item, before the judging core), are refused with a message that names the file and the
version this mathlens reads; re-running the command rewrites them. Fixtures:
tests/cases/adaptivity/legacy_*.json, in the layout `analysis/<name>.json` of earlier versions, and
tests/cases/judging/v1_tutor_*.jsonl, schema version 1 documents as that version wrote them."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathlens.analyze.adaptivity.agreement import TUTOR_AGREEMENT
from mathlens.analyze.adaptivity.judge import TUTOR_SCORES
from mathlens.analyze.adaptivity.tables import TUTOR_STATS
from mathlens.analyze.adaptivity.worksheet import TUTOR_HUMAN
from mathlens.cli.main import app
from mathlens.report.context import ReportContext
from mathlens.report.loader import load_runs, question_views
from mathlens.report.sections import adaptivity_items
from mathlens.runs.documents import DocumentVersionError

CASES = Path(__file__).resolve().parents[1] / "cases" / "adaptivity"
V1 = Path(__file__).resolve().parents[1] / "cases" / "judging"
YES = json.dumps({"rationale": "fine", "rating": "yes"})


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    code, text = invoke("tutor", "run", "tutoring", "--model", "mock/echo", "--conditions", "1", "--limit", "1",
                        "--out", str(out), "--json", "--no-cache")
    assert code == 0, text
    return out


def test_old_scores_file_is_refused_everywhere_until_rescored(run: Path) -> None:
    legacy = run / "analysis" / "tutor_scores.json"
    legacy.parent.mkdir(exist_ok=True)
    shutil.copy(CASES / "legacy_tutor_scores.json", legacy)
    with pytest.raises(DocumentVersionError) as err:
        TUTOR_SCORES.read(run)
    message = str(err.value)
    assert TUTOR_SCORES.version == 2
    assert str(legacy) in message and "'tutor_scores' schema version 2" in message
    assert "tutor_scores.jsonl" in message and "mathlens tutor score" in message

    for args in (("tutor", "stats", str(run)),
                 ("tutor", "worksheet", "export", str(run), "-o", str(run / "s.csv"), "--with-judge")):
        code, out = invoke(*args)
        assert code == 2 and "tutor_scores.json" in out and "schema version 2" in out, (args, out)
    # the report skips the section and says why, with the same versioned message
    runs = load_runs([run])
    ctx = ReportContext(runs=runs, views=question_views(runs))
    assert adaptivity_items.build(ctx, ctx.views[0]) is None
    assert any(str(legacy) in note and "schema version 2" in note for note in runs[0].notes), runs[0].notes

    code, out = invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
                       "--items", "Q1", "--json", "--no-cache")
    assert code == 0, out
    assert not legacy.exists()
    doc = TUTOR_SCORES.read(run)
    assert doc is not None and doc.summary.counts == {"ok": 3} and doc.envelope.schema_version == 2


def test_old_annotations_are_kept_and_not_overwritten(run: Path, tmp_path: Path) -> None:
    legacy = run / "analysis" / "tutor_human.json"
    legacy.parent.mkdir(exist_ok=True)
    shutil.copy(CASES / "legacy_tutor_human.json", legacy)
    sheet = tmp_path / "sheet.csv"
    code, out = invoke("tutor", "worksheet", "export", str(run), "-o", str(sheet), "--items", "Q1")
    assert code == 0, out
    _fill(sheet)
    code, out = invoke("tutor", "worksheet", "import", str(run), str(sheet), "--annotator", "bo")
    assert code == 2 and "tutor_human.json" in out and "Move the file aside" in out
    assert legacy.read_bytes() == (CASES / "legacy_tutor_human.json").read_bytes()
    assert not TUTOR_HUMAN.path(run).exists()
    with pytest.raises(DocumentVersionError, match="'tutor_human' schema version 2"):
        TUTOR_HUMAN.read(run)


def test_old_statistics_are_recomputed(run: Path) -> None:
    code, out = invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
                       "--items", "Q1", "--no-cache")
    assert code == 0, out
    legacy = run / "analysis" / "tutor_stats.json"
    legacy.write_text('{"source": "judge:mock/j", "rubric": "v1", "responses": 3}', encoding="utf-8")
    code, out = invoke("tutor", "stats", str(run), "--json")
    assert code == 0, out
    assert not legacy.exists()
    doc = TUTOR_STATS.read(run)
    assert doc is not None and [s.source for s in doc.summary.sources] == ["judge:mock/j"]


def _fill(sheet: Path) -> None:
    with sheet.open(encoding="utf-8", newline="") as fh:
        rows = [{**r, "score": "yes"} for r in csv.DictReader(fh)]
    with sheet.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_first_schema_version_documents_are_refused_and_rewritten(run: Path, tmp_path: Path) -> None:
    """Version 1 (`analysis/<name>.jsonl`, one entry per response x item) of the scores, the
    annotations and the agreement: refused naming both versions; scoring, a fresh import and the
    agreement command write version 2."""
    for spec in (TUTOR_SCORES, TUTOR_HUMAN, TUTOR_AGREEMENT):
        path = spec.path(run)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes((V1 / f"v1_{spec.name}.jsonl").read_bytes())
        with pytest.raises(DocumentVersionError, match=f"{spec.name}.jsonl: schema version 1 .*"
                                                       f"reads '{spec.name}' schema version 2"):
            spec.read(run)
    code, out = invoke("tutor", "stats", str(run))
    assert code == 2 and "tutor_scores.jsonl: schema version 1" in " ".join(out.split()), out
    sheet = tmp_path / "sheet.csv"
    code, out = invoke("tutor", "worksheet", "export", str(run), "-o", str(sheet), "--items", "Q1")
    assert code == 0, out
    _fill(sheet)
    # annotations of version 1 are not overwritten by an import (it would drop them)
    code, out = invoke("tutor", "worksheet", "import", str(run), str(sheet), "--annotator", "bo")
    assert code == 2 and "Move the file aside" in " ".join(out.split()), out
    assert TUTOR_HUMAN.path(run).read_bytes() == (V1 / "v1_tutor_human.jsonl").read_bytes()
    TUTOR_HUMAN.path(run).unlink()
    code, out = invoke("tutor", "score", str(run), "--judge", "mock/j", "-J", f"responses=[{json.dumps(YES)}]",
                       "--items", "Q1", "--no-cache")
    assert code == 0, out
    code, out = invoke("tutor", "worksheet", "import", str(run), str(sheet), "--annotator", "bo")
    assert code == 0, out
    code, out = invoke("tutor", "agreement", str(run), "--resamples", "10", "--json")
    assert code == 0, out
    for spec in (TUTOR_SCORES, TUTOR_HUMAN, TUTOR_AGREEMENT):
        doc = spec.read(run)
        assert doc is not None and doc.envelope.schema_version == 2, spec.name
    agreement = TUTOR_AGREEMENT.read(run)
    assert agreement is not None and [(r.scope, r.n) for r in agreement.summary.pairs] == [("Q1", 3),
                                                                                          ("adaptivity", 3)]
