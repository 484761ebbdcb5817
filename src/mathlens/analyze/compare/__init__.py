"""Paired comparison of two runs, or of the groups of one run: did a change make things better?

`load_run_values` (sources.py) reads each run's metric values through the owning analysis
documents; `compare_runs` (compute.py) forms the sides, pairs their items, tests every metric
(McNemar's exact test for accuracy; bootstrap CIs and sign-flip permutation p-values for scores;
`mathlens.stats.paired`) and corrects for multiple testing; models.py holds the typed results and
the `COMPARE` document. See docs/compare.md.
"""

from mathlens.analyze.compare.compute import KEY_FIELDS, compare_runs, plan_sides
from mathlens.analyze.compare.models import COMPARE, CompareOptions, CompareReport, Comparison, MetricResult
from mathlens.analyze.compare.sources import RunValues, load_run_values

__all__ = ["COMPARE", "KEY_FIELDS", "CompareOptions", "CompareReport", "Comparison", "MetricResult", "RunValues",
           "compare_runs", "load_run_values", "plan_sides"]
