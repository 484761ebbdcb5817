"""Calculus steps made here: derivative, antiderivative, limit and value claims, right and with one slip.

For each function of `FUNCTIONS` (written for this bench) the script writes short solutions in
plain notation, the correct result worked out by SymPy: ``Let f(x) = …`` then ``f'(x) = …``,
``∫ f(x) dx = … + C``, ``f(2) = …`` and ``f'(1) = …``; then the same solution with one slip (a
coefficient of the result changed, or a sign flipped, by a seeded choice). A flag on a correct
solution is a false flag; on a slipped one it is right when it is at the slipped step. Printed:
flags on error-free solutions, precision and recall, each by kind (`results.CLAIM_KINDS`).

    .venv/bin/python bench/bench_verify_calculus.py [--seed S] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

#: functions of x in plain notation (a teacher's everyday calculus, written for this bench)
FUNCTIONS = (
    "x^3 - 12*x + 1", "3*x^2 + 2*x - 5", "x^4 - 2*x^2", "2*x^5 - x", "sqrt(x + 2)", "1/x", "x/(x + 1)",
    "sin(x)*cos(x)", "x*sin(x)", "cos(2*x)", "exp(2*x)", "x*exp(x)", "log(x^2 + 1)", "log(x)/x",
    "(x^2 + 1)^3", "(2*x - 1)^4", "x^2*exp(-x)", "tan(x)", "exp(x)*sin(x)", "x^3*log(x)",
    "sqrt(x^2 + 9)", "1/(x^2 + 1)", "atan(x)", "x^(3/2)", "5*x^3 - 4*x^2 + 7", "(x + 1)/(x - 1)",
    "sin(x)^2", "x*cos(x)", "exp(-x^2)", "3/x^2",
)


def _plain(expr: object) -> str:
    import sympy

    return sympy.sstr(expr).replace("**", "^").replace("exp(", "e^(").replace("log(", "ln(")


def _slip(expr: object, rng: random.Random) -> object:
    """The expression with one number changed (or its sign flipped when it has none to change)."""
    import sympy

    numbers = sorted({n for n in sympy.preorder_traversal(expr) if isinstance(n, sympy.Integer) and abs(n) > 1},
                     key=str)
    if numbers and rng.random() < 0.7:
        n = rng.choice(numbers)
        return expr.xreplace({n: n + rng.choice((1, -1, 2))})
    return -expr if expr != 0 else sympy.Integer(1)


def solutions(seed: int) -> list[tuple[str, list[str], int, str]]:
    """(question, steps, slipped step or -1, what was slipped) for every function and claim."""
    import sympy

    x = sympy.Symbol("x")
    rng = random.Random(seed)
    out = []
    for text in FUNCTIONS:
        f = sympy.sympify(text.replace("^", "**"))
        d, i = sympy.diff(f, x), sympy.integrate(f, x)
        claims = {
            "derivative": (f"So f'(x) = {_plain(sympy.simplify(d))}.", sympy.simplify(d), "f'(x) = {}."),
            "value": (f"At x = 2, f(2) = {_plain(sympy.nsimplify(f.subs(x, 2)))}.", sympy.nsimplify(f.subs(x, 2)),
                      "At x = 2, f(2) = {}."),
            "slope": (f"The slope at 1 is f'(1) = {_plain(sympy.nsimplify(d.subs(x, 1)))}.",
                      sympy.nsimplify(d.subs(x, 1)), "The slope at 1 is f'(1) = {}."),
        }
        if not i.has(sympy.Integral):
            claims["antiderivative"] = (f"Integrating, integral of {_plain(f)} dx = {_plain(i)} + C.", i,
                                        f"Integrating, integral of {_plain(f)} dx = {{}} + C.")
        for name, (right, value, template) in claims.items():
            question = f"Let f(x) = {_plain(f)}."
            out.append((question, [question, right], -1, name))
            wrong = _slip(value, rng)
            if sympy.simplify(wrong - value) != 0:
                out.append((question, [question, template.format(_plain(wrong))], 1, name))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from mathlens.analyze.verify.steps import VerifyConfig, verify_steps

    config = VerifyConfig(step_timeout_s=6.0, solution_budget_s=30.0)
    cases = solutions(args.seed)

    def check(case: tuple[str, list[str], int, str]) -> tuple[int, list[str]]:
        _, steps, _, _ = case
        for k, step in enumerate(verify_steps(steps, None, config)):
            if step.verdict == "invalid":
                return k, sorted({getattr(c, "kind", "") or "(no kind)" for c in step.claims if c.status == "invalid"})
        return -1, []

    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(check, cases))
    clean = [g for c, g in zip(cases, got, strict=True) if c[2] == -1]
    slipped = [(c, g) for c, g in zip(cases, got, strict=True) if c[2] != -1]
    flags, right = Counter[str](), Counter[str]()
    for case, (flag, kinds) in zip(cases, got, strict=True):
        for kind in kinds:
            flags[kind] += 1
            right[kind] += flag == case[2]
    hits = sum(1 for c, g in slipped if g[0] == c[2])
    flagged = sum(1 for _, g in zip(cases, got, strict=True) if g[0] != -1)
    by_claim = Counter(c[3] for c, g in slipped if g[0] == c[2])
    rows = {"correct_solutions": len(clean), "flagged_correct": sum(1 for g in clean if g[0] != -1),
            "slipped_solutions": len(slipped), "caught": hits, "flags": flagged,
            "precision": round(hits / flagged, 4) if flagged else None,
            "recall": round(hits / len(slipped), 4) if slipped else None,
            "caught_by_claim": dict(sorted(by_claim.items())),
            "slipped_by_claim": dict(sorted(Counter(c[3] for c, _ in slipped).items())),
            "by_kind": {k: {"flags": n, "precision": round(right[k] / n, 4)} for k, n in sorted(flags.items())}}
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"calculus steps made here ({len(FUNCTIONS)} functions, seed {args.seed}): "
          f"{rows['flagged_correct']}/{rows['correct_solutions']} correct solutions flagged; "
          f"{hits}/{len(slipped)} slips caught; precision {rows['precision']}, recall {rows['recall']}")
    print("  caught by claim: " + ", ".join(f"{k} {v}/{rows['slipped_by_claim'][k]}"
                                              for k, v in rows["caught_by_claim"].items()))
    for kind, k in rows["by_kind"].items():
        print(f"    {kind:<20} {k['flags']:>4} flags  precision {k['precision']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
