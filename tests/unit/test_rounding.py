"""Shares and figures are rounded half up, from the decimal the float stands for, wherever they
are printed (the report's cells and texts, the command line)."""

from __future__ import annotations

import math

import pytest

from mathlens.report.tables import display_cell
from mathlens.rounding import fixed, percent


@pytest.mark.parametrize(("share", "digits", "shown"), [
    # halves of small classes: a reader dividing by hand rounds them up
    (5 / 8, 0, "63%"), (1 / 8, 0, "13%"), (3 / 8, 0, "38%"), (7 / 8, 0, "88%"), (1 / 2, 0, "50%"),
    # a share whose float lies just below the half it stands for (0.285 is 0.28499999...)
    (57 / 200, 0, "29%"), (0.145, 0, "15%"),
    # thirds and sixths, with and without a decimal
    (1 / 3, 0, "33%"), (2 / 3, 0, "67%"), (1 / 6, 1, "16.7%"), (5 / 6, 1, "83.3%"),
    # the ends
    (0.0, 0, "0%"), (1.0, 0, "100%"), (0.95, 0, "95%"), (0.0005, 1, "0.1%"),
])
def test_percentages_round_half_up(share: float, digits: int, shown: str) -> None:
    assert percent(share, digits) == shown


@pytest.mark.parametrize(("value", "digits", "shown"), [
    (62.5, 0, "63"), (2.675, 2, "2.68"), (88.75, 1, "88.8"), (0.125, 2, "0.13"), (3.0, 2, "3.00"),
    (-2.5, 0, "-3"), (-0.001, 2, "0.00"), (-0.4, 0, "0"), (1234.5, 0, "1235"),
])
def test_fixed_point_rounds_half_up_and_drops_a_negative_zero(value: float, digits: int, shown: str) -> None:
    assert fixed(value, digits) == shown


def test_values_that_are_not_numbers_are_written_as_python_writes_them() -> None:
    assert (fixed(math.nan), fixed(math.inf, 2), percent(-math.inf)) == ("nan", "inf", "-inf")


def test_the_report_cells_use_the_same_rounding() -> None:
    assert display_cell(62.5, 0) == "63" and display_cell(0.0625) == "0.063" and display_cell(None) == "–"
    # Python's own formatting would have written 62 and 0.062: the cells do not
    assert (f"{62.5:.0f}", f"{0.0625:.3f}") == ("62", "0.062")
