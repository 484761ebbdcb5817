"""The analyses' memory does not grow with the number of records.

Two synthetic runs built from the same 60 real GSM8K model solutions (`../shared/data`), one three
times longer than the other, are analysed by answers, sensitivity (without the flow step analysis,
the costly part) and breakdown. The peak of Python allocations (tracemalloc) while the larger run
is analysed must stay well under that of the smaller one times 1.6: an analysis that held every
record, entry or per-record result would need about three times as much. The solutions (and so
every cache keyed by text) are the same in both runs, and the larger run has three times the
configurations, so that one question's records in one configuration (what the sensitivity analysis
holds at a time, by design) are as many in both. Both runs are large enough (over a megabyte of
records) that the fixed 1 MB read buffers of the document writer are full in both; a warm-up run
loads the modules first.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from mathlens.analyze.registry import run_analyzers
from mathlens.testing.synthetic import write_synthetic_run

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
pytestmark = [pytest.mark.slow, pytest.mark.external,
              pytest.mark.skipif(not (DATA / "gsm8k_test.jsonl").is_file(), reason="../shared/data is absent")]

ANALYSES = ["answers", "sensitivity", "breakdown"]
OPTIONS = {"sensitivity": {"flow": False, "n_resamples": 50}, "breakdown": {"resamples": 50}}


def _peak_bytes(root: Path, n: int, configurations: int) -> int:
    store = write_synthetic_run(root, n, DATA, solutions=60, seed=n, sources=("gsm8k",),
                                configurations=configurations)
    gc.collect()
    tracemalloc.start()
    try:
        summaries = run_analyzers(store, ANALYSES, OPTIONS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(o.status in ("ok", "no_variants") for o in summaries.values()), summaries
    answers = summaries["answers"].summary
    assert answers is not None and sum(group.records for group in answers.summary) == n
    return peak


def test_peak_memory_does_not_grow_with_the_run(tmp_path: Path) -> None:
    _peak_bytes(tmp_path / "warm", 240, 1)  # imports, compiled patterns, the text caches' contents
    small = _peak_bytes(tmp_path / "small", 1200, 3)
    large = _peak_bytes(tmp_path / "large", 3600, 9)
    assert large < 1.6 * small, f"peak {large / 1e6:.1f} MB for 3600 records vs {small / 1e6:.1f} MB for 1200"
