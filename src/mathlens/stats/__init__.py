"""Statistics over analysis results: bootstrap confidence intervals and rater agreement.

Every function here is pure and takes an explicit seed where it draws random numbers, so a
report computed twice from the same run gives the same numbers.
"""

from mathlens.stats.agreement import (
    cohen_kappa,
    krippendorff_alpha,
    mean_absolute_error,
    percent_agreement,
)
from mathlens.stats.bootstrap import CI, bootstrap_ci

__all__ = [
    "CI",
    "bootstrap_ci",
    "cohen_kappa",
    "krippendorff_alpha",
    "mean_absolute_error",
    "percent_agreement",
]
