"""Bounded math parsing (plain notation and LaTeX) and symbolic verification of claims.

``budget.run_bounded`` runs SymPy work in a killable worker; ``parse.parse_math`` and
``parse.extract_math`` turn text into SymPy objects.
"""
