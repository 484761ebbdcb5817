"""The scorer audit (`source-agreement`): an imported run's own verdicts beside mathlens's answer check.

The Inspect log of tests/cases/importing/formats/inspect_match_audit.json was scored by Inspect's
`match` (end of the answer, text comparison), which is wrong on three of its six answered samples:
`add` ("12.0" for 12) and `half` ("1/2" for 0.5) are right answers it marks wrong, `minus` ("15"
for 5) a wrong answer it marks right, because "15" ends with "5". The audit must list exactly those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlens.analyze.registry import run_analyzers
from mathlens.analyze.source_agreement.models import SOURCE_AGREEMENT
from mathlens.errors import UserError
from mathlens.runs.importing.importer import ImportRequest, import_run
from mathlens.runs.store import RunStore
from mathlens.stats.agreement import cohen_kappa, percent_agreement
from mathlens.stats.binary import TwoByTwo, binary_agreement
from mathlens.stats.bootstrap import bootstrap_ci

FORMATS = Path(__file__).resolve().parents[1] / "cases" / "importing" / "formats"
#: the samples whose `match` verdict is wrong, worked out by hand from each answer and target
MATCH_WRONG = {"add", "half", "minus"}


@pytest.fixture
def audited(tmp_path: Path) -> Path:
    root = import_run(ImportRequest(source=FORMATS / "inspect_match_audit.json", items=[], out=tmp_path / "run",
                                    reader="mathlens")).root
    run_analyzers(RunStore(root), ["answers", "source-agreement"])
    return root


def test_the_audit_lists_exactly_the_samples_the_scorer_got_wrong(audited: Path) -> None:
    entries = list(SOURCE_AGREEMENT.entries(audited))
    assert {e.record.question_id for e in entries if e.agree is False} == MATCH_WRONG
    assert {e.record.question_id for e in entries if e.agree} == {"sub", "square", "div"}
    half = next(e for e in entries if e.record.question_id == "half")
    assert (half.source_value, half.source_correct, half.mathlens_correct) == ("I", False, True)
    assert half.mathlens_answer == "1/2" and half.reference == "0.5"
    assert half.source_answer == "Dividing 1 by 2 gives 1/2. The answer is 1/2."
    doc = SOURCE_AGREEMENT.read(audited)
    assert doc is not None
    (row,) = doc.summary.rows
    assert (row.scorer, row.compared, row.both_correct, row.source_only, row.mathlens_only, row.both_incorrect) == \
        ("match", 6, 2, 1, 2, 1)
    assert row.agreement.estimate == pytest.approx(0.5)
    assert doc.summary.records_without_source == 1  # the sample that failed has no score
    assert doc.summary.disagreements == len(MATCH_WRONG) and row.left_out_total == 0


def test_kappa_and_agreement_match_the_project_statistics(audited: Path) -> None:
    entries = [e for e in SOURCE_AGREEMENT.entries(audited) if e.agree is not None]
    a = [e.source_correct for e in entries]
    b = [e.mathlens_correct for e in entries]
    doc = SOURCE_AGREEMENT.read(audited)
    assert doc is not None
    row = doc.summary.rows[0]
    assert row.kappa.estimate == pytest.approx(cohen_kappa(a, b))
    assert row.agreement.estimate == pytest.approx(percent_agreement(a, b))


def test_the_table_bootstrap_matches_the_item_bootstrap() -> None:
    table = TwoByTwo(both_yes=30, a_only=6, b_only=4, both_no=20)
    pairs = [(1, 1)] * 30 + [(1, 0)] * 6 + [(0, 1)] * 4 + [(0, 0)] * 20

    def kappa(items: list[tuple[int, int]]) -> float | None:
        return cohen_kappa([x for x, _ in items], [y for _, y in items])

    by_items = bootstrap_ci(pairs, kappa, n_resamples=3000, seed=3)
    agreement, by_table = binary_agreement(table, n_resamples=3000, seed=5)
    assert by_table.estimate == pytest.approx(kappa(pairs))
    assert agreement.estimate == pytest.approx(50 / 60)
    assert by_table.low == pytest.approx(by_items.low, abs=0.04) and by_table.high == pytest.approx(by_items.high,
                                                                                                   abs=0.04)


def test_one_word_throughout_leaves_kappa_undefined() -> None:
    agreement, kappa = binary_agreement(TwoByTwo(both_yes=12, a_only=0, b_only=0, both_no=0), seed=1)
    assert agreement.estimate == 1.0 and kappa.estimate is None and kappa.status == "undefined"


def test_a_scorer_can_be_chosen_and_an_unknown_one_is_named(audited: Path) -> None:
    store = RunStore(audited)
    with pytest.raises(UserError, match=r"unknown source scorer.*'macth'.*Did you mean 'match'"):
        run_analyzers(store, ["source-agreement"], {"source-agreement": {"scorer": "macth"}})
    run_analyzers(store, ["source-agreement"], {"source-agreement": {"scorer": "match"}})
    assert {e.scorer for e in SOURCE_AGREEMENT.entries(audited)} == {"match"}


def test_it_needs_an_answers_document_of_the_same_records(tmp_path: Path) -> None:
    root = import_run(ImportRequest(source=FORMATS / "inspect_match_audit.json", items=[], out=tmp_path / "run",
                                    reader="mathlens")).root
    with pytest.raises(UserError, match=r"--only answers,source-agreement"):
        run_analyzers(RunStore(root), ["source-agreement"])
    run_analyzers(RunStore(root), ["answers"])
    with (root / "records.jsonl").open("a", encoding="utf-8") as fh:  # the run changes after the answers ran
        fh.write((root / "records.jsonl").read_text(encoding="utf-8").splitlines()[0].replace('"r0"', '"r9"')
                 .replace('"repeat":0', '"repeat":9') + "\n")
    with pytest.raises(UserError, match="other records than the run now holds"):
        run_analyzers(RunStore(root), ["source-agreement"])


def test_a_run_without_source_verdicts_is_skipped(tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl"
    source.write_text(json.dumps({"question": "What is 2 + 3?", "answer": "5", "response": "5", "model": "m"})
                      + "\n", encoding="utf-8")
    root = import_run(ImportRequest(source=source, items=[], out=tmp_path / "run")).root
    summaries = run_analyzers(RunStore(root), ["answers", "source-agreement"])
    assert summaries["source-agreement"].status == "skipped" and summaries["source-agreement"].summary is None
    assert not SOURCE_AGREEMENT.exists(root)


def test_show_prints_the_audit_and_every_disagreement(audited: Path) -> None:
    env = {**os.environ, "MATHLENS_CACHE_DIR": str(audited.parent / "cache")}
    done = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "show", str(audited)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "source scorer match: 6 compared, agreement 0.500" in done.stderr
    listed = [line for line in done.stderr.splitlines() if line.strip().startswith("disagree ")]
    assert sorted(line.split()[1].split("/")[1] for line in listed) == sorted(MATCH_WRONG)
    as_json = subprocess.run([sys.executable, "-m", "mathlens.cli.main", "show", str(audited), "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    audit = json.loads(as_json.stdout)["source_agreement"]
    assert {d["record"]["question_id"] for d in audit["disagreements"]} == MATCH_WRONG
