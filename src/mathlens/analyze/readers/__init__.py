"""Readers: what a response states, read as text (final answers, answer parts, number and set forms,
the fast answer comparison), with no judge and no analysis state.

The low layer inside `analyze/` that grading, quality and the analyses above read answers through.
Entry points: `answers.extract_final_answer`, `quick.decide`, `turns.visible_text`.
"""
