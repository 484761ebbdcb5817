"""Analyses of a finished run: pure functions from run records to results in ``RUN/analysis/``.

Sub-packages: ``verify`` (bounded math parsing and symbolic checks), ``flow`` (reasoning-flow
decomposition). ``registry`` lists the analyzers ``mathlens analyze RUN`` runs.
"""

from mathlens.analyze.verify.budget import warm_up_in_workers

# The bounded workers serve grading's answer comparisons as well as the step checks: they warm
# those up too (verify, below grading, names no grading module itself).
warm_up_in_workers("mathlens.analyze.grading.symbolic", "warm_up")
