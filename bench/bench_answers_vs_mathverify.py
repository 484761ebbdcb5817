"""mathlens against Math-Verify on the project's own answer-checking cases, in one run.

Cases (all written for this project, in tests/cases/answers/): the answer pairs of
`equivalence.yaml`, `equivalence_phenomena.yaml` and `pairs_comparing.yaml` ([predicted, reference,
equal?]), the whole responses of `plain_calculus.yaml` and `extraction_phenomena.yaml` (a response, a
reference, and whether the response's answer is that reference; an extraction case's `not` is a
wrong reference), and the whole responses of `responses_reading.yaml` and `responses_comparing.yaml`
(category `whole/`: each response against every reference it must equal and every one it must not).

For each case both checkers give a verdict: mathlens with `equivalent` (pairs) or `check_answer`
(responses), Math-Verify 0.9 with `verify(parse(reference), parse(predicted))`, its defaults, and
once more with pairs wrapped in `$...$` (responses are passed as they are). Prints agreement with
the expected verdict per category and overall, the total time of each checker, the speed ratio
(mathlens time / Math-Verify time; the goal is <= 1.0), the five slowest mathlens cases and those
over the budget (`EquivalenceConfig.timeout_s`). These are in-sample figures: the rules were written
against these cases. The worker is started before timing (its start-up is not counted).

Measured on 2 shared cores (load 1.7-1.9), 1,900 cases, 3 runs: mathlens 1.15-1.25 s against
Math-Verify 3.59-3.72 s, ratio 0.32-0.34x; none over the 1.5 s budget. The slowest mathlens case,
0.44-0.51 s, is `x != 3`: the first relation to reach the worker, while its background warm-up may
still run (0.16 s once that is over, 0.03 s after). Agreement with the expected verdicts: mathlens
1900/1900, Math-Verify 1227/1900 (64.6%), 1338/1900 with `$...$`; on the 1,036 whole responses of
responses_reading.yaml and responses_comparing.yaml mathlens 1036, Math-Verify 736 (71.0%).
Earlier rounds: 1,605 cases 0.37-0.39x (mathlens 1604/1605, Math-Verify 1012/1605); 592 cases
0.22x (mathlens 592/592, Math-Verify 331/592).

    .venv/bin/python bench/bench_answers_vs_mathverify.py [--show-misses]
"""

from __future__ import annotations

import logging
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from mathlens.analyze.grading.equivalence import DEFAULT_CONFIG, check_answer, equivalent
from mathlens.analyze.verify.budget import get_pool
from mathlens.items.schema import Question

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases" / "answers"


@dataclass(frozen=True)
class Case:
    """One labelled case: `response` is a whole response when `whole`, else a bare answer."""

    category: str
    response: str
    reference: str
    expected: bool
    whole: bool


def load_cases() -> list[Case]:
    """Every case of the four tables, tagged with its table and group."""
    out: list[Case] = []
    for name in ("equivalence.yaml", "equivalence_phenomena.yaml"):
        for group, rows in yaml.safe_load((CASES / name).read_text(encoding="utf-8")).items():
            out += [Case(f"pairs/{group}", str(p), str(r), bool(e), False) for p, r, e in rows]
    for group, rows in yaml.safe_load((CASES / "plain_calculus.yaml").read_text(encoding="utf-8")).items():
        out += [Case(f"plain/{group}", r["response"], r["reference"], r["correct"], True) for r in rows]
    table = yaml.safe_load((CASES / "extraction_phenomena.yaml").read_text(encoding="utf-8"))
    for group, rows in table.items():
        for r in rows:
            if r["answer"] is not None:
                out.append(Case(f"responses/{group}", r["response"], r["answer"], True, True))
            if "not" in r:
                out.append(Case(f"responses/{group}", r["response"], r["not"], False, True))
    for group, rows in yaml.safe_load((CASES / "pairs_comparing.yaml").read_text(encoding="utf-8")).items():
        out += [Case(f"pairs/{group}", str(p), str(r), bool(e), False) for p, r, e in rows]
    for name in ("responses_reading.yaml", "responses_comparing.yaml"):
        for group, rows in yaml.safe_load((CASES / name).read_text(encoding="utf-8")).items():
            for r in rows:
                out += [Case(f"whole/{group}", r["response"], ref, True, True) for ref in r["right"]]
                out += [Case(f"whole/{group}", r["response"], ref, False, True) for ref in r["wrong"]]
    return out


def mathlens_verdict(case: Case) -> bool:
    """mathlens' verdict: equal / correct."""
    if case.whole:
        return check_answer(case.response, Question(id="q", text="t", answers=[case.reference])).correct
    return equivalent(case.response, case.reference).equal


def mathverify_verdict(case: Case, wrap: bool) -> bool:
    """Math-Verify's verdict with its defaults (`wrap` puts a bare answer in `$...$`)."""
    from math_verify import parse, verify

    def read(s: str) -> list[object]:
        return parse(f"${s}$" if wrap and not case.whole else s)

    try:
        return bool(verify(read(case.reference), read(case.response)))
    except Exception:
        return False


def run(cases: list[Case], judge: Callable[[Case], bool]) -> tuple[list[bool], list[float]]:
    """Verdicts and the time of each case."""
    verdicts, times = [], []
    for case in cases:
        start = time.perf_counter()
        verdicts.append(judge(case))
        times.append(time.perf_counter() - start)
    return verdicts, times


def main() -> int:
    logging.disable(logging.WARNING)
    cases = load_cases()
    get_pool().warm(1)  # start the worker before timing (most cases no longer need it)
    mathlens_verdict(cases[0])
    mathverify_verdict(cases[0], False)
    results = {"mathlens": run(cases, mathlens_verdict),
               "math-verify": run(cases, lambda c: mathverify_verdict(c, False)),
               "math-verify $..$": run(cases, lambda c: mathverify_verdict(c, True))}
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        by_cat[case.category].append(i)
    names = list(results)
    print(f"{len(cases)} cases (in-sample: the rules were written against them)\n")
    print(f"{'category':38s} {'n':>4s} " + " ".join(f"{n:>17s}" for n in names))
    rows = sorted(by_cat.items())
    for cat, idx in rows:
        cells = [sum(results[n][0][i] == cases[i].expected for i in idx) for n in names]
        print(f"{cat:38s} {len(idx):4d} " + " ".join(f"{c:>10d} ({100 * c / len(idx):3.0f}%)" for c in cells))
    for prefix in ("pairs/", "plain/", "responses/", "whole/", ""):
        idx = [i for i, c in enumerate(cases) if c.category.startswith(prefix)]
        cells = [sum(results[n][0][i] == cases[i].expected for i in idx) for n in names]
        label = prefix.rstrip("/") or "all"
        print(f"{'TOTAL ' + label:38s} {len(idx):4d} " + " ".join(f"{c:>10d} ({100 * c / len(idx):4.1f}%)"
                                                                  for c in cells))
    t_ml, t_mv = sum(results["mathlens"][1]), sum(results["math-verify"][1])
    t_wrap = sum(results["math-verify $..$"][1])
    print(f"\ntime: Math-Verify with $...$ {t_wrap:.2f} s; mathlens ratio to it {t_ml / t_wrap:.2f}x")
    slowest = max(range(len(cases)), key=lambda i: results["mathlens"][1][i])
    ranked = sorted(range(len(cases)), key=lambda i: -results["mathlens"][1][i])[:5]
    print("slowest mathlens cases: " + "; ".join(f"{results['mathlens'][1][i]:.2f} s {cases[i].response[:40]!r}"
                                                 for i in ranked))
    over = sum(t > DEFAULT_CONFIG.timeout_s for t in results["mathlens"][1])
    print(f"\ntime: mathlens {t_ml:.2f} s, Math-Verify {t_mv:.2f} s; ratio {t_ml / t_mv:.2f}x (goal <= 1.0)")
    print(f"slowest mathlens case: {results['mathlens'][1][slowest]:.3f} s ({cases[slowest].response[:60]!r}); "
          f"over the {DEFAULT_CONFIG.timeout_s:.1f} s budget: {over}")
    if "--show-misses" in sys.argv:
        for i, case in enumerate(cases):
            if results["mathlens"][0][i] != case.expected:
                print(f"  miss {case.category}: {case.response[:70]!r} vs {case.reference!r} want {case.expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
