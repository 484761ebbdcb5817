"""Modules imported once by the worker server, so that a replacement worker starts in milliseconds.

The fork server imports this module before it forks any worker; every worker then inherits SymPy
and the parsers already loaded instead of importing them again (about a second each time).
"""

from __future__ import annotations

import latex2sympy2_extended  # noqa: F401
import sympy
import sympy.parsing.sympy_parser  # noqa: F401
