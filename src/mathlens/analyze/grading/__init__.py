"""Grading: final answers and their equivalence, rubric grading by a judge, human grades, agreement.

Entry points (final answers are read in `analyze.readers`): `equivalence.equivalent` / `check_answer`,
`compliance.format_violations`, `rubric.load_rubric`, `judge.grade_run`, `worksheet`,
`tables`, `agreement_report`.
"""
