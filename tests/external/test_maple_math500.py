"""End to end on real data: 20 MATH500 problems solved by the embedded model, then every MAPLE stage
(answer check, reflection, label discovery with the offline embedder, step judging, score, tables)."""

from __future__ import annotations

import asyncio
import csv
import json
import math
from pathlib import Path

import pytest

from mathlens.analyze.maple.aggregate import BootstrapConfig
from mathlens.analyze.maple.labels import load_label_set
from mathlens.analyze.maple.pipeline import MapleOptions, analyze_run
from mathlens.analyze.maple.steplabels import label_counts
from mathlens.models.base import GenerateConfig
from mathlens.models.model import RetryPolicy
from mathlens.runs.records import ItemSource, ModelEntry
from mathlens.runs.runner import base_manifest, build_models, execute
from mathlens.runs.store import RunStore
from mathlens.solve.prompts import DEFAULT_STOP

SUBJECTS = {"Prealgebra", "Algebra", "Number Theory", "Counting & Probability", "Geometry",
            "Intermediate Algebra", "Precalculus"}


@pytest.mark.embedded
@pytest.mark.external
@pytest.mark.slow
def test_maple_on_20_math500_problems(shared_data: Path, embedded_model_path: Path, tmp_path: Path) -> None:
    source = shared_data / "math500_test.jsonl"
    manifest = base_manifest(
        items=[ItemSource(source=str(source), limit=20)], models=[ModelEntry(spec="embedded/gemma3-270m")],
        generate=GenerateConfig(max_tokens=96, stop=DEFAULT_STOP),
        system_role="Solve the problem step by step and end with 'Final answer:'.",
    )
    store = RunStore(tmp_path / "run")
    store.write_manifest(manifest)
    models = build_models(manifest, None, RetryPolicy(), None)
    done = asyncio.run(execute(store, manifest, models))
    assert done.written == 20 and done.errors == 0

    options = MapleOptions(judge_tokens=160, reflect_tokens=48, discover="auto", cache=False,
                           boot=BootstrapConfig(n_resamples=300))
    result = asyncio.run(analyze_run(store, options))

    sols = result.solutions
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
            assert s.maple is None and s.judgement is not None and s.judgement.raw
        if s.answer_status in ("incorrect", "unparseable"):
            assert s.reflection is not None
    checked = [s for s in sols if s.answer_status in ("correct", "incorrect", "unparseable")]
    (overall,) = result.overall
    assert overall.n == len(checked)
    assert overall.accuracy.estimate == pytest.approx(sum(s.answer_status == "correct" for s in checked) / len(checked))
    assert overall.n_unjudged == sum(s.status == "unjudged" for s in checked)

    # Tables and figure data on disk.
    rows = list(csv.DictReader((store.analysis_dir / "maple_by_level.csv").open()))
    assert {r["group"] for r in rows} <= {"1", "2", "3", "4", "5"} and sum(int(r["n"]) for r in rows) == len(checked)
    fig5 = json.loads((store.analysis_dir / "maple_figure5.json").read_text())
    assert {p["subject"] for p in fig5["points"]} <= SUBJECTS

    # Label discovery over the stored reflections, and a draft label set that loads as data.
    reflections = [s.reflection for s in sols if s.reflection is not None and s.reflection.status == "ok"]
    assert result.discovery is not None and result.discovery["n"] == len(reflections)
    assert 2 <= result.discovery["k"] <= 8
    members = sorted(i for c in result.discovery["clusters"] for i in c["members"])
    assert members == list(range(len(reflections)))
    draft = load_label_set(store.analysis_dir / "maple_labels_draft.yaml")
    assert len(draft.labels) == result.discovery["k"] and draft.source == "discovered"
    print(f"\nMAPLE on 20 MATH500 problems: {dict((s.status, sum(x.status == s.status for x in sols)) for s in sols)}, "
          f"accuracy {overall.accuracy.format()}, mean MAPLE {overall.mean_maple.format()}, "
          f"{result.seconds:.0f} s analysis")
