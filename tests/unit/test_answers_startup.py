"""Start-up of the answer checker: the common answer forms are decided without SymPy in the
calling process (a notebook's or a scorer's first `check_answer` does not pay for its import);
only a comparison that needs it runs in the bounded worker, which has SymPy already."""

from __future__ import annotations

import json
import subprocess
import sys

from mathlens.analyze.verify import plain, plain_text

_CODE = r"""
import json, sys
import mathlens
cases = [
    ("So the answer is $\\boxed{48}$.", "48"),
    ("She pays $1,250 in total.", "1250"),
    ("The probability is $\\frac{3}{8}$.", "0.375"),
    ("Final answer: 0.25", "1/4"),
    ("The roots are 2 and 3.", "3, 2"),
    ("The answer is (C).", "C"),
    ("The discount is 12.5%.", "0.125"),
    ("So x = -4.", "-4"),
    ("Answer: 3 1/2 cups", "7/2"),
    ("The series diverges.", "diverges"),
    ("The solution set is [2, 5).", "2 <= x < 5"),
    ("$\\boxed{x^2 + 2x + 1}$", "(x+1)^2"),
    ("$\\boxed{\\frac{\\sqrt{3}}{2}}$", "\\frac{\\sqrt3}{2}"),
    ("The point is (1, 2).", "(2, 1)"),
    ("The answer is 49.", "48"),
]
got = [mathlens.check_answer(text, ref).status for text, ref in cases]
before = "sympy" in sys.modules
worker = mathlens.check_answer("$\\boxed{\\int_0^1 x\\,dx}$", "1/2").status  # decided in the worker
print(json.dumps({"statuses": got, "sympy_before": before, "worker": worker,
                  "sympy_after": "sympy" in sys.modules}))
"""


def test_common_answer_forms_are_decided_without_sympy_in_the_caller() -> None:
    proc = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=180, check=True)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["statuses"] == ["correct"] * 13 + ["incorrect", "incorrect"]
    assert got["sympy_before"] is False
    assert got["worker"] == "correct"
    assert got["sympy_after"] is False  # the symbolic comparison ran in the worker


def test_the_text_rewriting_knows_the_functions_the_parser_knows() -> None:
    assert set(plain_text.FUNCTION_NAMES) == set(plain._FUNCTIONS)
    assert plain.normalize is plain_text.normalize
