"""End to end on real data: 20 MATH500 problems solved by the embedded model, then every MAPLE stage
(answer check, reflection, label discovery with the offline embedder, step judging, score, tables)."""

from __future__ import annotations

import asyncio
import csv
import math
from pathlib import Path

import pytest

from mathlens.analyze.maple.aggregate import CHECKED
from mathlens.analyze.maple.labels import load_label_set
from mathlens.analyze.maple.results import MAPLE
from mathlens.analyze.maple.steplabels import label_counts
from mathlens.analyze.registry import run_one
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.solve.prompts import DEFAULT_STOP

#: answers checked and wrong (a response the token cap cut before it stated one is a wrong answer)
WRONG = set(CHECKED) - {"correct"}
SUBJECTS = {"Prealgebra", "Algebra", "Number Theory", "Counting & Probability", "Geometry",
            "Intermediate Algebra", "Precalculus"}


@pytest.mark.embedded
@pytest.mark.external
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_maple_on_20_math500_problems(shared_data: Path, gemma_model_path: Path, tmp_path: Path) -> None:
    source = shared_data / "math500_test.jsonl"
    manifest = base_manifest(
        items=[ItemSource(source=str(source), limit=20)], models=[ModelEntry(spec="embedded/gemma3-270m")],
        generate=GenerateConfig(max_tokens=64, stop=DEFAULT_STOP),
        system_role="Solve the problem step by step and end with 'Final answer:'.",
    )
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), None)
    done = asyncio.run(execute(store, manifest, models))
    assert done.written == 20 and done.errors == 0

    # Every solution is answer-checked, segmented and analysed; reflection and judging (a few seconds
    # each on 2 cores) are capped at 4 wrong answers to keep the test near two minutes. The base model's
    # replies are mostly degenerate (copies of the prompt), which MAPLE leaves out by default; this test
    # keeps them so that every stage runs on real model output.
    options = {"judge_tokens": 128, "reflect_tokens": 24, "judge_limit": 4, "discover": "auto",
               "include_degenerate": True, "boot": {"n_resamples": 300}}
    run_one(store, "maple", options, judge="embedded/gemma3-270m", no_cache=True)
    doc = MAPLE.read(store.root)
    assert doc is not None
    result = doc.summary
    sols = list(MAPLE.entries(store.root))
    assert len(sols) == 20
    assert {s.status for s in sols} <= {"ok", "unjudged", "unverifiable", "error"}
    for s in sols:
        assert s.level in {1, 2, 3, 4, 5} and s.subject in SUBJECTS
        if s.status == "ok":
            assert s.maple is not None and 0.0 <= s.maple <= 1.0 and s.e is not None and s.e >= 0
            if s.answer_status == "correct":
                assert s.maple == 0.0 and s.judgement is None
            else:
                assert s.judgement is not None and s.judgement.status == "ok"
                assert s.counts == label_counts(s.step_labels)
                assert s.v is not None and s.r is not None and 0 <= s.v <= 1 and 0 <= s.r <= 1
                inner = s.e * (s.v_used / s.r_used)  # type: ignore[operator]
                assert s.maple == pytest.approx(math.tanh(inner))
                assert all(1 <= st.step <= len(s.steps) for st in s.step_labels)
        if s.status == "unjudged":
            assert s.maple is None
            assert (s.judgement is not None and s.judgement.raw) or "judge-limit" in s.error
        if s.answer_status in WRONG and "judge-limit" not in s.error:
            assert s.reflection is not None
    checked = [s for s in sols if s.answer_status in CHECKED]
    (overall,) = result.overall
    assert overall.n == len(checked)
    assert overall.accuracy.estimate == pytest.approx(sum(s.answer_status == "correct" for s in checked) / len(checked))
    assert overall.n_unjudged == sum(s.status == "unjudged" for s in checked)

    # Tables and figure data: the CSV export and the document's figures, one (model, configuration) cell.
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_level.csv").open()))
    assert {r["group"] for r in rows} <= {"1", "2", "3", "4", "5"} and sum(int(r["n"]) for r in rows) == len(checked)
    assert {p.x for p in result.figure5.points} <= SUBJECTS
    assert {(p.configuration, p.variant) for p in result.figure3.points} == {("baseline", "original")}

    # Label discovery over the stored reflections: clusters and a draft label set that loads as data,
    # or, when the model's reflections are (near) identical echoes, a recorded reason.
    reflections = [s.reflection for s in sols if s.reflection is not None and s.reflection.status == "ok"]
    # what is clustered is each reflection's failing points: one per round of the loop, or the single reply
    points = [p.text for r in reflections for p in r.rounds] + [r.text for r in reflections if not r.rounds]
    disc = result.discovery
    assert disc is not None and disc.reflections == len(points)
    assert len(disc.texts) == len(set(points))
    if disc.status == "ok":
        assert disc.result is not None and 2 <= disc.result.k <= 8
        assert sorted(i for c in disc.result.clusters for i in c.members) == list(range(len(disc.texts)))
        draft = load_label_set(store.analysis_dir / "maple_labels_draft.yaml")
        assert len(draft.labels) == disc.result.k and draft.source == "discovered"
    else:
        assert len(disc.texts) <= 3 and "distinct" in disc.error
        assert not (store.analysis_dir / "maple_labels_draft.yaml").exists()
    statuses = {st: sum(x.status == st for x in sols) for st in {x.status for x in sols}}
    print(f"\nMAPLE on 20 MATH500 problems: {statuses}, discovery {disc.status}, "
          f"accuracy {overall.accuracy.format()}, mean MAPLE {overall.mean_maple.format()}, "
          f"{result.seconds:.0f} s analysis")
