"""MRBench v2 loads, and its human labels map onto rubric scores as documented."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mathlens.analyze.adaptivity.mrbench import MAPPINGS, human_score, judge_context, load_mrbench, sample_replies
from mathlens.analyze.adaptivity.rubric import load_rubric

pytestmark = pytest.mark.external


@pytest.fixture
def replies(shared_data: Path) -> list:  # type: ignore[type-arg]
    path = shared_data / "mrbench_v2.json"
    if not path.exists():
        pytest.skip("mrbench_v2.json not present")
    return load_mrbench(path)


def test_every_reply_loads_with_unique_keys(replies: list) -> None:  # type: ignore[type-arg]
    assert len(replies) == 1655
    assert len({r.key for r in replies}) == 1655
    assert Counter(r.tutor for r in replies)["Expert"] == 200


def test_mapped_labels_cover_every_reply_and_fit_the_item_scales(replies: list) -> None:  # type: ignore[type-arg]
    rubric = load_rubric()
    for m in MAPPINGS:
        item = rubric.item(m.item_id)
        for strict in (False, True):
            scores = [human_score(r, m, strict) for r in replies]
            assert None not in scores, m.dimension
            assert set(scores) <= set(item.values)
    tone = Counter(human_score(r, MAPPINGS[1]) for r in replies)
    # the file's Tutor_Tone counts: 528 Encouraging, 1126 Neutral, 1 Offensive
    assert tone == {1: 528, 0: 1126, -1: 1}
    guidance = Counter(human_score(r, MAPPINGS[0], strict=True) for r in replies)
    assert guidance == {1: 960, 0: 304 + 391}


def test_sample_is_seeded_and_contexts_are_bounded(replies: list) -> None:  # type: ignore[type-arg]
    a = sample_replies(replies, 25, seed=3)
    assert [r.key for r in a] == [r.key for r in sample_replies(replies, 25, seed=3)]
    assert [r.key for r in a] != [r.key for r in sample_replies(replies, 25, seed=4)]
    for r in a:
        ctx = judge_context(r)
        assert ctx.response == r.response and len(ctx.request) < 3200
