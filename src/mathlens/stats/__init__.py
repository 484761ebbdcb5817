"""Statistics over analysis results: bootstrap confidence intervals and rater agreement.

Every function here is pure and takes an explicit seed where it draws random numbers, so a
report computed twice from the same run gives the same numbers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mathlens.stats.agreement import cohen_kappa, krippendorff_alpha, mean_absolute_error, percent_agreement
    from mathlens.stats.bootstrap import CI, bootstrap_ci

#: name -> module; loaded on first use, so that reading a stored interval (`stats.bootstrap.CI`)
#: does not import NumPy through the agreement statistics
_WHERE = {"CI": "bootstrap", "bootstrap_ci": "bootstrap", "cohen_kappa": "agreement",
          "krippendorff_alpha": "agreement", "mean_absolute_error": "agreement", "percent_agreement": "agreement"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'mathlens.stats' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mathlens.stats.{_WHERE[name]}"), name)


__all__ = [
    "CI",
    "bootstrap_ci",
    "cohen_kappa",
    "krippendorff_alpha",
    "mean_absolute_error",
    "percent_agreement",
]
