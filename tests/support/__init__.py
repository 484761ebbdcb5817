"""Helpers shared by test files: a finished report run on disk (`report_run`), a graded run
(`grading_run`), a small tmpfs for disk-full tests (`smallfs`), command-line helpers (`cli`).

`tests/` is on pytest's `pythonpath` (pyproject.toml), so a test imports them as `support.<name>`.
"""
