"""Breakdowns of a run for training priorities and curriculum review: which operations and
concepts fail most often in checked steps, and how scores and accuracy split by question topic,
question type and against the students who sat the exam.

`models.py` declares the `BREAKDOWN` document (light to import), `compute.py` the computations,
`analyzer.py` the `breakdown` analyzer (no model calls; run by a bare `mathlens analyze`).
See docs/breakdowns.md.
"""
