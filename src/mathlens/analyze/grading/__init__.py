"""Grading: final answers and their equivalence, rubric grading by a judge, human grades, agreement.

Entry points: `answers.extract_final_answer`, `equivalence.equivalent` / `check_answer`,
`compliance.format_violations`, `rubric.load_rubric`, `judge.grade_run`, `worksheet`,
`tables`, `agreement_report`.
"""
