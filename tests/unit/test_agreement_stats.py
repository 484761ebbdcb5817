"""Agreement statistics on cases small enough to compute by hand (arithmetic in the comments)."""

from __future__ import annotations

import numpy as np
import pytest

from mathlens.stats.agreement import (
    cohen_kappa,
    krippendorff_alpha,
    mean_absolute_error,
    percent_agreement,
)


def test_unweighted_kappa_by_hand() -> None:
    # po = 3/4; margins a = (.5, .5), b = (.75, .25) -> pe = .5*.75 + .5*.25 = .5
    # kappa = (.75 - .5) / (1 - .5) = .5
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)


def test_quadratic_kappa_by_hand() -> None:
    # joint: (0,0), (1,2), (2,2), each 1/3; w = (i-j)^2 / 4
    # observed: w(1,2)/3 = 1/12; margins a = (1/3,1/3,1/3), b = (1/3,0,2/3)
    # expected: 2/9 + 1/36 + 2/36 + 1/9 = 15/36 -> kappa = 1 - (3/36)/(15/36) = 0.8
    assert cohen_kappa([0, 1, 2], [0, 2, 2], weights="quadratic") == pytest.approx(0.8)


def test_linear_kappa_by_hand() -> None:
    # same data, w = |i-j| / 2: observed w(1,2)/3 = 1/6
    # expected: (0,2) 1/3*2/3*1 + (1,0) 1/3*1/3*.5 + (1,2) 1/3*2/3*.5 + (2,0) 1/3*1/3*1
    #         = 4/18 + 1/18 + 2/18 + 2/18 = 1/2 -> kappa = 1 - (1/6)/(1/2) = 2/3
    assert cohen_kappa([0, 1, 2], [0, 2, 2], weights="linear") == pytest.approx(2 / 3)


def test_weighted_kappa_uses_numeric_spacing() -> None:
    # Labels 0, 0.5, 2: a 0-vs-0.5 disagreement is a quarter of the span, so it costs 1/16 quadratically.
    # joint (0,0.5) and (2,2), 1/2 each; margins a = (.5, 0, .5), b = (0, .5, .5)
    # observed = .5 * (0.5/2)^2 = 1/32; expected = .25/16 + .25 + .25*(1.5/2)^2
    k = cohen_kappa([0, 2], [0.5, 2], weights="quadratic")
    assert k == pytest.approx(1 - (1 / 32) / (0.015625 + 0.25 + 0.140625))


def test_unused_labels_rescale_weights_uniformly() -> None:
    # With the scale fixed to 0..4, the same two ratings are closer together relative to the span.
    narrow = cohen_kappa([0, 1, 1], [1, 1, 0], weights="quadratic")
    wide = cohen_kappa([0, 1, 1], [1, 1, 0], weights="quadratic", labels=[0, 1, 2, 3, 4])
    assert narrow is not None and wide is not None
    assert narrow == pytest.approx(wide)  # weights rescale uniformly, so kappa is unchanged
    with pytest.raises(ValueError, match="outside the given labels"):
        cohen_kappa([0, 5], [0, 1], labels=[0, 1, 2])


def test_kappa_matches_scikit_learn_on_integer_labels() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 60).tolist()
    b = [min(4, max(0, x + int(rng.integers(-1, 2)))) for x in a]
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(a, b, weights=weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights))


def test_kappa_undefined_and_missing() -> None:
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None  # no chance disagreement to compare with
    assert cohen_kappa([None, None], [1, 2]) is None
    # missing ratings drop the unit: only (1,1) and (0,0) remain
    assert cohen_kappa([1, None, 0], [1, 0, 0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="different numbers"):
        cohen_kappa([1, 2], [1])


def test_percent_agreement_and_mae() -> None:
    assert percent_agreement([1, 2, 3, None], [1, 2, 4, 4]) == pytest.approx(2 / 3)
    assert percent_agreement([1.0, 2.0], [1.05, 2.5], tolerance=0.1) == pytest.approx(0.5)
    assert percent_agreement(["a", "b"], ["a", "c"]) == pytest.approx(0.5)
    assert mean_absolute_error([1, 2, 3], [2, 2, 5]) == pytest.approx(1.0)
    assert mean_absolute_error([None], [1]) is None
    with pytest.raises(ValueError, match="numeric"):
        mean_absolute_error(["a"], ["b"])


def test_alpha_interval_by_hand() -> None:
    # units (1,1) and (2,3): coincidences o11 = 2, o23 = o32 = 1; n = 4, marginals (2, 1, 1)
    # sum o*d^2 = 2; sum n_c n_k d^2 = 2*(2*1*1) + 2*(2*1*4) + 2*(1*1*1) = 22
    # alpha = 1 - (n - 1) * 2 / 22 = 16/22
    assert krippendorff_alpha([[1, 2], [1, 3]], level="interval") == pytest.approx(16 / 22)


def test_alpha_nominal_by_hand() -> None:
    # units (a,a), (a,b), (b,b): o_aa = 2, o_ab = o_ba = 1, o_bb = 2; n = 6, n_a = n_b = 3
    # D_o ~ 2 ; D_e ~ 2 * 3 * 3 = 18 -> alpha = 1 - 5 * 2 / 18 = 4/9
    assert krippendorff_alpha([["a", "a", "b"], ["a", "b", "b"]], level="nominal") == pytest.approx(4 / 9)


KRIPPENDORFF_EXAMPLE = [  # the four-coder, twelve-unit example of Krippendorff's own worked tutorial
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815),
                                                  ("interval", 0.849), ("ratio", 0.797)])
def test_alpha_published_example(level: str, published: float) -> None:
    assert krippendorff_alpha(KRIPPENDORFF_EXAMPLE, level=level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]


def test_alpha_matches_krippendorff_package_on_random_data() -> None:
    import krippendorff

    rng = np.random.default_rng(11)
    data = rng.integers(0, 6, size=(3, 40)).astype(float)
    data[rng.random(data.shape) < 0.15] = np.nan
    rows = [[None if np.isnan(v) else float(v) for v in row] for row in data]
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ours = krippendorff_alpha(rows, level=level)  # type: ignore[arg-type]
        theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert ours == pytest.approx(theirs)


def test_alpha_edge_cases() -> None:
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # no variation
    assert krippendorff_alpha([[1, None], [None, 2]]) is None  # nothing pairable
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([[1, 2], [1, 2]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same units"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a"], ["b"]], level="interval")
