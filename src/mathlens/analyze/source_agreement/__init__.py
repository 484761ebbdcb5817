"""Scorer audit: where the verdicts an imported run's own harness gave differ from mathlens's checker."""
