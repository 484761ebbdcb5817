"""Analyses of a finished run: pure functions from run records to results in ``RUN/analysis/``.

Sub-packages: ``verify`` (bounded math parsing and symbolic checks), ``flow`` (reasoning-flow
decomposition). ``registry`` lists the analyzers ``mathlens analyze RUN`` runs.
"""
