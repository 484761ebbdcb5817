"""The built-in calculus exams: their shape, their bookkeeping, and the correctness of a sample of
reference answers, recomputed here with SymPy from the problem statements."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pytest
import sympy as sp
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from mathlens.items import Exam, Part, Question, builtin_exams, load_items

EXPECTED = {f"calc{c}-exam{i}" for c in (1, 2, 3) for i in (1, 2, 3)}
COURSES = {"1": "Calculus I", "2": "Calculus II", "3": "Calculus III"}
TAG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TABLE1_PROMPT = "Find the gradient ∇f of f(x,y)=x^2 y at point (-1,4)"

x, y, z, t = sp.symbols("x y z t", real=True)
C = sp.Symbol("C")
_TRANSFORMS = (*standard_transformations, implicit_multiplication_application, convert_xor)
_NAMES = {"e": sp.E, "pi": sp.pi, "ln": sp.log, "sqrt": sp.sqrt, "x": x, "y": y, "z": z, "t": t, "C": C}


def expr(text: str) -> sp.Expr:
    """A plain-notation answer as SymPy; `ln|u|` is read as `ln(u)` (the checks below use u > 0)."""
    text = re.sub(r"ln\|([^|]*)\|", r"ln(\1)", text)
    return parse_expr(text, local_dict=_NAMES, transformations=_TRANSFORMS)


def vector(text: str) -> list[sp.Expr]:
    """`<a, b, c>` or `(a, b)` as a list of components."""
    inner = text.strip()
    assert inner[0] in "<(" and inner[-1] in ">)", text
    return [expr(c) for c in inner[1:-1].split(",")]


def same(a: sp.Expr, b: sp.Expr) -> bool:
    return sp.simplify(a - b) == 0


def exam(name: str) -> Exam:
    return load_items(name)


def question(name: str, qid: str) -> Question:
    return next(q for q in exam(name).questions if q.id == qid)


def part(name: str, qid: str, label: str) -> Part:
    return next(p for p in question(name, qid).parts if p.label == label)


def answer(name: str, qid: str, label: str | None = None) -> str:
    """The first reference answer of a question, or of one of its parts."""
    if label is None:
        return question(name, qid).answers[0]
    p = part(name, qid, label)
    assert p.answer is not None
    return p.answer


def test_the_nine_exams_are_built_in() -> None:
    assert set(builtin_exams()) == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exam_loads_with_its_bookkeeping(name: str) -> None:
    e = load_items(name)
    course_no = name[len("calc")]
    assert e.id == name
    assert e.course == COURSES[course_no]
    assert e.name == f"{COURSES[course_no]} — Exam {name[-1]}"
    assert e.source and "mathlens" in e.source
    assert 6 <= len(e.questions) <= 8
    assert [q.id for q in e.questions] == [f"q{i}" for i in range(1, len(e.questions) + 1)]
    assert e.total_points is not None
    assert sum(q.total_points or 0 for q in e.questions) == e.total_points
    for q in e.questions:
        assert q.points is not None, q.id
        assert q.topics and all(TAG.match(tag) for tag in q.topics), (q.id, q.topics)
        if q.parts:
            # Part labels run a, b, c... and part points make up the question's points.
            assert [p.label for p in q.parts] == list("abcdefgh"[: len(q.parts)]), q.id
            assert sum(p.points or 0 for p in q.parts) == q.points, q.id
            assert all(p.points is not None and p.answer for p in q.parts), q.id
        else:
            assert q.answers, q.id


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cohort_is_marked_illustrative(name: str) -> None:
    cohort = load_items(name).cohort
    assert cohort is not None
    assert cohort.illustrative is True
    assert cohort.class_average is not None and cohort.size is not None
    assert cohort.note and "illustrative" in cohort.note.lower()


def test_three_exams_per_course() -> None:
    counts = Counter(load_items(name).course for name in builtin_exams())
    assert counts == {"Calculus I": 3, "Calculus II": 3, "Calculus III": 3}


def test_seed_examples_and_failure_cases_are_present() -> None:
    q1 = question("calc3-exam1", "q1")
    assert q1.text == TABLE1_PROMPT
    worked = question("calc3-exam1", "q2")
    assert [p.label for p in worked.parts] == ["a", "b", "c", "d"]
    failures = Counter(
        str(q.metadata.get("seed_failure"))
        for name in builtin_exams()
        for q in load_items(name).questions
        if "seed_failure" in q.metadata
    )
    assert failures["ln-e"] >= 3 and failures["sqrt-composite"] >= 3


def _gradient_at(f: sp.Expr, point: dict[sp.Symbol, int]) -> sp.Matrix:
    return sp.Matrix([sp.diff(f, x), sp.diff(f, y)]).subs(point)


def test_seed_gradient_example_is_right() -> None:
    f = x**2 * y
    at = {x: -1, y: 4}
    g = _gradient_at(f, at)
    w = sp.Matrix([-1, 1])
    assert vector(answer("calc3-exam1", "q1")) == list(g)
    grad_text = vector(answer("calc3-exam1", "q2", "a"))
    assert all(same(a, b) for a, b in zip(grad_text, [sp.diff(f, x), sp.diff(f, y)], strict=True))
    assert same(expr(answer("calc3-exam1", "q2", "b")), g.dot(w / w.norm()))
    assert vector(answer("calc3-exam1", "q2", "c")) == list(g)
    assert same(expr(answer("calc3-exam1", "q2", "d")), g.norm())
    for alt in part("calc3-exam1", "q2", "b").answers:
        assert same(expr(alt), g.dot(w / w.norm()))


def _antiderivative_ok(text: str, integrand: sp.Expr, shift: int = 0) -> bool:
    """d/dx of the answer (without +C) equals the integrand; `shift` moves x to where logs are real."""
    xp = sp.Symbol("xp", positive=True)
    anti = expr(text).subs(C, 0).subs(x, xp + shift)
    return sp.simplify(sp.diff(anti, xp) - integrand.subs(x, xp + shift)) == 0


# (exam, question, part, how to check the reference answer, computed independently of the file).
CHECKS: list[tuple[str, str, str | None, Callable[[str], bool]]] = [
    ("calc1-exam1", "q3", None, lambda a: same(expr(a), sp.limit((sp.sqrt(x + 2) - 2) / (x - 2), x, 2))),
    ("calc1-exam1", "q7", "a", lambda a: same(expr(a), (sp.log(x) + 3).subs(x, sp.E))),
    ("calc1-exam2", "q2", None, lambda a: same(expr(a), sp.diff(sp.sin(x**3), x))),
    ("calc1-exam2", "q7", "a", lambda a: same(expr(a), sp.diff(sp.sqrt(x + 2), x))),
    ("calc1-exam3", "q7", None, lambda a: same(expr(a), sp.integrate(2 / x, (x, 1, sp.E)))),
    ("calc2-exam1", "q4", None, lambda a: _antiderivative_ok(a, (5 * x + 1) / ((x - 1) * (x + 2)), 2)),
    ("calc2-exam1", "q6", None, lambda a: _antiderivative_ok(a, x / sp.sqrt(x + 2))),
    (
        "calc2-exam2",
        "q4",
        "a",
        lambda a: same(expr(a), sp.limit((t + 1) ** 2 / 3 ** (t + 1) * 3**t / t**2, t, sp.oo)),
    ),
    (
        "calc2-exam3",
        "q5",
        None,
        lambda a: same(expr(a), sp.integrate((2 * (1 + sp.cos(t))) ** 2 / 2, (t, 0, 2 * sp.pi))),
    ),
    (
        "calc3-exam1",
        "q3",
        "c",
        lambda a: vector(a) == list(sp.Matrix([1, 2, -2]).cross(sp.Matrix([3, 0, 4]))),
    ),
    ("calc3-exam2", "q3", None, lambda a: same(expr(a), sp.integrate(x * y**2, (x, 0, 2), (y, 1, 3)))),
    (
        "calc3-exam3",
        "q5",
        None,
        lambda a: same(expr(a), sp.integrate(z, (z, 0, x + y), (y, 0, x), (x, 0, 1))),
    ),
]


@pytest.mark.parametrize(
    ("name", "qid", "label", "check"), CHECKS, ids=[f"{c[0]}-{c[1]}{c[2] or ''}" for c in CHECKS]
)
def test_reference_answer_is_right(
    name: str, qid: str, label: str | None, check: Callable[[str], bool]
) -> None:
    assert check(answer(name, qid, label))


def test_answer_checks_reject_a_wrong_answer() -> None:
    """The comparison used above must tell a wrong answer apart (the seed's sqrt(x)+2 slip)."""
    assert not same(expr("1/(2*sqrt(x)) + 2"), sp.diff(sp.sqrt(x + 2), x))
    assert not same(expr("7/sqrt(2)"), sp.Rational(9) / sp.sqrt(2))
