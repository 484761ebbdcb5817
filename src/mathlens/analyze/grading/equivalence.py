"""Is a predicted answer the same as the reference? And is a response's answer correct?

`equivalent(predicted, reference)` tries, cheapest first: an exact match after normalisation;
answers in words ("diverges", "does not exist"); plain numbers with a tolerance; then symbolic
comparison (`symbolic.compare_answers`) in a worker process under a time budget. Several accepted
references, lettered parts and multiple-choice options are handled by `check_answer`.

    >>> equivalent("0.5", "1/2").status
    'equal'
    >>> equivalent("The series diverges.", "diverges").method
    'words'
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mathlens.analyze.grading.bases import compare_bases
from mathlens.analyze.grading.bounds import MAX_ANSWER_CHARS, answer_bounds
from mathlens.analyze.grading.forms import (
    decimal_commas,
    degrees_to_radians,
    drop_names,
    prepare,
    without_constant,
)
from mathlens.analyze.grading.lists import compare_lists
from mathlens.analyze.grading.relations import asked_value, compare_named, option_answer, split_approximation
from mathlens.analyze.grading.structures import compare_structures
from mathlens.analyze.grading.verdicts import (
    AnswerVerdict,
    ChoiceCheck,
    EquivalenceResult,
    PartVerdict,
    VerdictStatus,
)
from mathlens.analyze.readers.answers import FinalAnswer, PartAnswer, choice_label, cut_short, extract_final_answer
from mathlens.analyze.readers.durations import duration_forms
from mathlens.analyze.readers.intervals import (
    differ_as_sets,
    is_inequality,
    read_set,
    same_set,
    same_set_with_pair,
)
from mathlens.analyze.readers.normalize import answer_word, normalize_answer, strip_text_wrappers
from mathlens.analyze.readers.numeric import NumberForm, numbers_equal, read_number
from mathlens.analyze.readers.piecewise import compare_piecewise
from mathlens.analyze.readers.quick import decide, exact, infinity, read
from mathlens.analyze.readers.statements import MATHY, drop_trailing_clause, lhs_kind, restated_forms, split_equals
from mathlens.items.schema import Part, Question

if TYPE_CHECKING:
    from mathlens.analyze.grading.symbolic import ComparePayload

_PLAIN_WORDS = re.compile(r"[A-Za-z]+(?:[ -][A-Za-z]+){0,3}")
_MATH_TOKENS = {"e", "i", "pi", "oo", "inf", "infinity", "infty", "c"}


@dataclass(frozen=True)
class EquivalenceConfig:
    """Tolerances, rules and budget.

    `rel_tol` is the tolerance of agreement at random points (symbolic expressions);
    `min_digits` the significant digits from which a decimal is compared at its printed
    precision (shorter decimals must be exact); `list_order` how bare lists compare ("set": any
    order, as solution sets; "ordered": position by position; tuples, vectors and points are
    always ordered); `timeout_s` the time budget of one response's whole check (every reference
    and part, lists included; of one comparison when `equivalent` is called alone);
    `value_only_choice` the verdict for a multiple-choice response that gives the option's value
    but not its label (the adaptivity seed counts it as wrong); `inequality_as_set` whether a set
    written as an inequality (`x \\ge 2`) equals the interval it describes (`[2, \\infty)`): True
    by default, False when an inequality must be answered by an inequality.
    """

    rel_tol: float = 1e-6
    abs_tol: float = 1e-9
    timeout_s: float = 1.5
    min_digits: int = 6
    list_order: Literal["set", "ordered"] = "set"
    value_only_choice: Literal["incorrect", "correct"] = "incorrect"
    inequality_as_set: bool = True


DEFAULT_CONFIG = EquivalenceConfig()


def equivalent(predicted: str, reference: str, config: EquivalenceConfig = DEFAULT_CONFIG,
               until: float | None = None) -> EquivalenceResult:
    """Compare one predicted answer with one reference answer (see the module docstring).

    The comparison gets `config.timeout_s`, and never goes past `until` (a `time.monotonic()`
    deadline shared by every comparison of one response)."""
    pred, ref = predicted.strip(), reference.strip()
    if not pred:
        return EquivalenceResult(status="unparseable", method="none", error="predicted: empty")
    if len(pred) > MAX_ANSWER_CHARS:
        return EquivalenceResult(status="unparseable", method="none", error="predicted: too long to be an answer")
    if len(ref) > MAX_ANSWER_CHARS:
        return EquivalenceResult(status="unparseable", method="none", error="reference: too long to compare")
    if _same_text(pred, ref):
        return EquivalenceResult(status="equal", method="exact", predicted_form=pred, reference_form=ref)
    refused = answer_bounds(pred, "predicted") or answer_bounds(ref, "reference")
    if refused:
        return EquivalenceResult(status="unparseable", method="none", error=refused)
    deadline = min(time.monotonic() + config.timeout_s, until or math.inf)
    exact_pred, approximation = split_approximation(option_answer(pred, ref))
    result = _exact_part(exact_pred, split_approximation(ref)[0], config, deadline)
    if not result.equal and approximation is not None:
        printed = read_number(ref)
        if printed is not None and printed.places is not None:  # a decimal reference: compare the approximation
            by_value = _numbers(approximation, ref, config)
            if by_value is not None and by_value.equal:
                return by_value.model_copy(update={"method": "approximation"})
    return result


def _exact_part(pred: str, ref: str, config: EquivalenceConfig, deadline: float) -> EquivalenceResult:
    def part(a: str, b: str) -> str:
        return compare_prepared(prepare(a), prepare(b), config, deadline).status

    if _same_text(pred, ref):
        return EquivalenceResult(status="equal", method="exact", predicted_form=pred, reference_form=ref)
    said = _words(pred, ref)
    if said is not None and said.equal:  # read as written: `prepare` takes a closing word for a unit
        return said
    piecewise = compare_piecewise(pred, ref, part)
    if piecewise is not None:  # before `prepare`, which reads a `cases` system as a list
        return EquivalenceResult(status=piecewise[0], method=piecewise[1], predicted_form=pred, reference_form=ref)
    pred, ref = drop_names(*decimal_commas(*without_constant(prepare(pred), prepare(ref))))
    named = compare_named(pred, ref, part)
    if named is not None:  # `\cos(x) = a` against `\sin(x) = a`: the names must agree too
        return EquivalenceResult(status=named, method="named", predicted_form=pred, reference_form=ref)
    return compare_prepared(pred, ref, config, deadline)


_DIGIT_GAP = re.compile(r"(?<=\d)\s+(?=\d)")


def _same_text(pred: str, ref: str) -> bool:
    """The same text once spacing and delimiters are gone; a space between two digits stays a
    gap (`2 1/2` is two and a half, not `21/2`; `1 234` is left to the number rules)."""
    return normalize_answer(_DIGIT_GAP.sub("\u2423", pred)) == normalize_answer(_DIGIT_GAP.sub("\u2423", ref))


#: words that turn a sentence's closing word around ("not east") or offer another ("east or west")
_NOT_STATED = frozenset({"not", "no", "never", "neither", "nor", "or", "isn't", "aren't", "cannot", "can't"})


def _states_word(sentence: str, ref: str) -> bool:
    """Whether a sentence in words closes on a reference in words ("She is facing east", once a
    trailing clause such as "when she finishes" is dropped, against `east`). A reference of short
    letters ("B", "c") and a sentence with math, a negation or an alternative are never read so."""
    ref_words = ref.lower().split()
    if not _PLAIN_WORDS.fullmatch(ref) or len(ref_words) > 3 or any(len(w) < 3 for w in ref_words):
        return False
    said = drop_trailing_clause(sentence).rstrip(".! ")
    if len(said) > 300 or MATHY.search(said):
        return False
    words = [w for w in re.split(r"[^\w'-]+", said.lower()) if w]
    return (len(words) > len(ref_words) and words[-len(ref_words):] == ref_words
            and not _NOT_STATED.intersection(words))


def _words(pred: str, ref: str) -> EquivalenceResult | None:
    ref_word, pred_word = answer_word(ref), answer_word(pred)
    if ref_word is not None or pred_word is not None:
        same = ref_word == pred_word
        return EquivalenceResult(status="equal" if same else "different", method="words",
                                 predicted_form=pred_word or pred, reference_form=ref_word or ref)
    p_txt, r_txt = strip_text_wrappers(pred).strip(), strip_text_wrappers(ref).strip()
    if _states_word(p_txt, r_txt):  # "She is facing east" states `east`
        return EquivalenceResult(status="equal", method="words", predicted_form=r_txt, reference_form=r_txt)
    if _PLAIN_WORDS.fullmatch(p_txt) and _PLAIN_WORDS.fullmatch(r_txt) \
            and not ({p_txt.lower(), r_txt.lower()} & _MATH_TOKENS):
        same = p_txt.lower() == r_txt.lower()
        return EquivalenceResult(status="equal" if same else "different", method="words",
                                 predicted_form=p_txt, reference_form=r_txt)
    return None


def _numbers(pred: str, ref: str, config: EquivalenceConfig) -> EquivalenceResult | None:
    # A comma on both sides more likely separates list items than decimals ("1,2" vs "2,1").
    decimal_comma = not ("," in pred and "," in ref)
    p_num, r_num = read_number(pred, decimal_comma), read_number(ref, decimal_comma)
    if (p_num is None) != (r_num is None):  # `12.5 percent` against `\frac{1}{8}`, `12,50 €` against `\frac{25}{2}`
        p_num, r_num = p_num or _exact_number(pred), r_num or _exact_number(ref)
    if p_num is None or r_num is None:
        return None
    same = numbers_equal(p_num, r_num, config.min_digits)
    return EquivalenceResult(status="equal" if same else "different", method="numeric",
                             predicted_form=str(p_num.value), reference_form=str(r_num.value))


def _exact_number(text: str) -> NumberForm | None:
    """A rational constant written as an expression (`\\frac{1}{8}`, `2^{-3}`), read without SymPy."""
    reading = read(text)
    if reading is None or reading.names or len(reading.sides) != 1:
        return None
    value = exact(reading.sides[0])
    return NumberForm(value) if value is not None else None


def compare_prepared(pred: str, ref: str, config: EquivalenceConfig, deadline: float,
                     allow_lists: bool = True) -> EquivalenceResult:
    """Compare two prepared answers: words, numbers, lists, then the symbolic path."""
    if _same_text(pred, ref):
        return EquivalenceResult(status="equal", method="exact", predicted_form=pred, reference_form=ref)
    based = compare_bases(pred, ref)
    if based is not None:  # `1011_2`: digits in a base
        return EquivalenceResult(status=based, method="base", predicted_form=pred, reference_form=ref)
    for decided in (_words(pred, ref), _numbers(pred, ref, config)):
        if decided is not None:
            return decided
    if allow_lists:
        def same(a: str, b: str) -> bool:
            return compare_prepared(a, b, config, deadline, allow_lists=False).equal

        listed = compare_lists(pred, ref, config.list_order, same)
        if listed is not None:
            return EquivalenceResult(status=listed[0], method=listed[1], predicted_form=pred, reference_form=ref)
    as_sets = same_set(pred, ref)
    if as_sets is None:  # a lone `(a, b)` against an inequality or a union is the open interval
        as_sets = same_set_with_pair(pred, ref)
    if as_sets and not config.inequality_as_set and is_inequality(pred) != is_inequality(ref):
        as_sets = False  # the rule where an inequality must be answered by an inequality
    if as_sets is not None:  # intervals with numeric endpoints: exact, no worker needed
        return EquivalenceResult(status="equal" if as_sets else "different", method="interval",
                                 predicted_form=pred, reference_form=ref)
    if differ_as_sets(pred, ref) or _set_and_number(pred, ref):
        return EquivalenceResult(status="different", method="interval", predicted_form=pred, reference_form=ref)

    def entry(a: str, b: str) -> str:
        return compare_prepared(prepare(a), prepare(b), config, deadline, allow_lists=False).status

    structured = compare_structures(pred, ref, entry, _scalar)
    if structured is not None:  # tuples and matrices entry by entry, sets in braces
        return EquivalenceResult(status=structured[0], method=structured[1], predicted_form=pred,
                                 reference_form=ref)
    p_text, r_text = degrees_to_radians(pred), degrees_to_radians(ref)
    quick = decide(p_text, r_text, config.rel_tol, config.min_digits)
    if quick is not None:  # the worker's verdict, reached in this process
        status, method, p_form, r_form = quick
        return EquivalenceResult(status=status, method=method, predicted_form=p_form, reference_form=r_form)
    return _symbolic(pred, ref, config, deadline)


def _set_and_number(pred: str, ref: str) -> bool:
    """An interval, inequality or union against a constant: never equal (`x >= 5` is not `5`)."""
    for one, other in ((pred, ref), (ref, pred)):
        reading = read(other)
        if read_set(one) is not None and reading is not None and not reading.names and len(reading.sides) == 1:
            return True
    return False


def _scalar(text: str) -> bool:
    """A single number or expression (not a tuple, a set, an equation or a relation)."""
    reading = read(text)
    return infinity(text) is not None or (reading is not None and len(reading.sides) == 1)


def symbolic_in_worker(pred: str, ref: str, rel_tol: float, min_digits: int) -> ComparePayload:
    """`symbolic.compare_answers`, imported where it runs: in the bounded worker, so that the
    calling process loads SymPy never (the worker has it already)."""
    from mathlens.analyze.grading.symbolic import compare_answers

    return compare_answers(pred, ref, rel_tol, min_digits)


def _symbolic(pred: str, ref: str, config: EquivalenceConfig, deadline: float) -> EquivalenceResult:
    from mathlens.analyze.verify.budget import run_bounded

    budget = max(0.05, min(config.timeout_s, deadline - time.monotonic()))
    # waiting for a worker that replaces a killed one counts against the response's budget too
    outcome = run_bounded(symbolic_in_worker, degrees_to_radians(pred), degrees_to_radians(ref), config.rel_tol,
                          config.min_digits, timeout_s=budget, ready_s=budget)
    if outcome.status == "timeout":
        return EquivalenceResult(status="timeout", method="symbolic", error=outcome.error)
    if outcome.status != "ok":
        return EquivalenceResult(status="unparseable", method="symbolic", error=outcome.error)
    status, method, p_form, r_form, error = outcome.value
    return EquivalenceResult(status=status, method=method, predicted_form=p_form, reference_form=r_form,
                             error=error)


def _named_as(predicted: str, subject: str | None, reference: str) -> str:
    """The answer with the name the response gave it (`\\cos(x) = \\frac{42}{59}`), when the
    reference names its value too; otherwise the answer as found."""
    if subject is None or len(split_equals(predicted)) > 1:
        return predicted
    sides = split_equals(reference)
    if len(sides) == 2 and lhs_kind(sides[0]) in ("name", "variable") and sides[1].strip():
        return f"{subject} = {predicted}"
    return predicted


#: a number, then one letter that is an SI unit's symbol ("2500 m", "3.5 kg" is read by the unit words)
_UNIT_LETTER = re.compile(r"^(.*\d)\s+[mgsLlhKNJWVA]\.?$")


def _other_forms(predicted: str, reference: str) -> list[str]:
    """Other forms of one stated answer, each compared when the answer as read is not equal: the
    two exact forms of "0.25, i.e. 25%" (the same value stated twice, so either counts), the
    number of "2500 m", and a duration in two units in minutes, hours or seconds, against a
    reference with no letter (against `5m` the letter may be a name)."""
    forms = list(restated_forms(predicted) or ())
    if re.search(r"[A-Za-z]", reference):
        return forms
    forms += duration_forms(predicted)  # "2 hours and 30 minutes" against 150, 2.5 or 9000
    unit = _UNIT_LETTER.match(predicted.strip())
    return [*forms, unit.group(1)] if unit else forms


def _against(predicted: str | None, references: list[str], config: EquivalenceConfig,
             subject: str | None = None, until: float | None = None
             ) -> tuple[VerdictStatus, str | None, EquivalenceResult | None]:
    """Compare with each accepted reference; the first equal one wins."""
    if not references:
        return "no_reference", None, None
    if not predicted:
        return "unparseable", references[0], None
    best: EquivalenceResult | None = None
    for ref in references:
        result = equivalent(_named_as(predicted, subject, ref), ref, config, until)
        if result.equal:
            return "correct", ref, result
        for form in _other_forms(predicted, ref):
            again = equivalent(_named_as(form, subject, ref), ref, config, until)
            if again.equal:
                return "correct", ref, again
        if best is None or (best.status != "different" and result.status == "different"):
            best = result
    assert best is not None
    status: VerdictStatus = {"different": "incorrect", "timeout": "unverifiable"}.get(  # type: ignore[assignment]
        best.status, "unparseable")
    if status == "unparseable" and best.error.startswith("reference"):
        status = "unverifiable"  # our reference could not be read: not the response's fault
    return status, references[0], best


def _names_value(answer: str, value: str, config: EquivalenceConfig) -> bool:
    """The answer is the option's value, or states it among other words ("a total of 6kg")."""
    if equivalent(answer, value, config).equal:
        return True
    compact = re.sub(r"\s+", "", value)
    if not compact:
        return False
    pattern = r"(?<![\w.])" + r"\s*".join(map(re.escape, compact)) + r"(?![\w.]*\d)"
    return re.search(pattern, answer) is not None


def _check_choice(fa: FinalAnswer, question: Question, config: EquivalenceConfig) -> AnswerVerdict:
    choices = question.choices or {}
    expected = None
    for ref in question.answers:
        expected = choice_label(ref, choices) if ref.strip() in choices or len(ref.strip()) <= 3 else None
        if expected is None:
            expected = next((k for k, v in choices.items() if equivalent(ref, v, config).equal), None)
        if expected:
            break
    if expected is None:
        return AnswerVerdict(status="no_reference", predicted=fa.text, reference=None, how=fa.how,
                             span=fa.span, note="no answer names one of the options")
    if fa.choice is not None:
        status: VerdictStatus = "correct" if fa.choice == expected else "incorrect"
        return AnswerVerdict(status=status, predicted=fa.text, reference=expected, how=fa.how, span=fa.span,
                             choice=ChoiceCheck(label=fa.choice, expected=expected, form="label"))
    if fa.text:
        for label, value in choices.items():
            if _names_value(fa.text, value, config):
                right = label == expected
                status = config.value_only_choice if right else "incorrect"
                return AnswerVerdict(
                    status=status, predicted=fa.text, reference=expected, how=fa.how, span=fa.span,
                    choice=ChoiceCheck(label=label, expected=expected, form="value_only"),
                    note=f"gave the value of option {label} instead of its label")
    return AnswerVerdict(status="unparseable" if not fa.text else "incorrect", predicted=fa.text,
                         reference=expected, how=fa.how, span=fa.span,
                         choice=ChoiceCheck(label=None, expected=expected, form="none"))


#: why a part has no verdict: nothing was read for it (its label, such as "(b)", was not found)
_PART_MISSING = "no answer to this part was found"
_PART_CUT = "no answer to this part was found before the token cap cut the response"


_PART_FITTED = ("the response labels no part; its one final answer is read for this part, the only one "
                "whose reference is of its kind (words or math)")


def _lone_answer_part(fa: FinalAnswer, parts: list[Part]) -> int | None:
    """For a response that labels none of the graded parts and gives one final answer: the index
    of the one part whose reference is of that answer's kind, a word answer ("converges") or math
    ("1/3"), or None when no part or several fit."""
    if fa.parts or not fa.text or len(parts) < 2:
        return None

    def kind(text: str) -> str | None:
        return "word" if answer_word(text) is not None else "math" if MATHY.search(text) else None

    mine = kind(fa.text)
    fits = [i for i, part in enumerate(parts) if mine is not None and kind(part.answer or part.answers[0]) == mine]
    return fits[0] if len(fits) == 1 else None


def check_answer(response: str | None, question: Question, config: EquivalenceConfig = DEFAULT_CONFIG,
                 cut: bool = False) -> AnswerVerdict:
    """Extract the final answer of `response` and compare it with the question's references.

    Questions with lettered parts that carry answers are checked part by part: the whole is
    `correct` when every part is, `incorrect` when any part is, else the weakest part status.
    `cut` says the token cap cut the response: unless it marks an answer the cut did not reach
    (`readers.answers.cut_short`), it states none, and the verdict is ``no_answer`` with the reason
    in `note` (`how` and `span` still show where the work stopped). With graded parts the same
    holds for the last part written, the one the cut ran into; the parts written before it keep
    their verdicts, and the whole is ``no_answer`` when no part is ``incorrect`` and one is. A part
    for which nothing is read is ``no_answer`` when it comes after every part read in a cut
    response, else ``unparseable``; its `note` says why.
    """
    fa = extract_final_answer(response or "", question)
    until = time.monotonic() + config.timeout_s  # one budget for every comparison of the response
    graded_parts = [p for p in question.parts if p.answer or p.answers]
    if cut and not graded_parts:
        why = cut_short(fa, response or "")
        if why is not None:
            return AnswerVerdict(status="no_answer", predicted=None,
                                 reference=question.answers[0] if question.answers else None,
                                 how=fa.how, span=fa.span, note=why)
    if question.choices:
        return _check_choice(fa, question, config)
    if graded_parts:
        # the last part written is the one the cut ran into: its reading is where the work stopped
        last = fa.parts[-1] if cut and fa.parts else None
        stopped = cut_short(last, response or "") if last is not None else None
        verdicts = []
        founds = [fa.part(part.label.lower()) for part in graded_parts]
        fitted = _lone_answer_part(fa, graded_parts) if not (cut and cut_short(fa, response or "")) else None
        if fitted is not None:
            founds[fitted] = PartAnswer(label=graded_parts[fitted].label.lower(), text=fa.text, how=fa.how,
                                        span=fa.span)
        last_found = max((i for i, f in enumerate(founds) if f is not None), default=-1)
        for i, (part, found) in enumerate(zip(graded_parts, founds, strict=True)):
            refs = [a for a in [part.answer, *part.answers] if a]
            if stopped and found is last:
                verdicts.append(PartVerdict(label=part.label, status="no_answer", predicted=None,
                                            reference=refs[0], span=found.span if found else None, note=stopped))
                continue
            if found is None and len(graded_parts) > 1:
                # a part after every part read, in a cut response: the cut came before its answer
                missing: VerdictStatus = "no_answer" if cut and i > last_found else "unparseable"
                verdicts.append(PartVerdict(label=part.label, status=missing, predicted=None, reference=refs[0],
                                            note=_PART_CUT if missing == "no_answer" else _PART_MISSING))
                continue
            predicted = found.text if found else fa.text
            status, ref, comparison = _against(predicted, refs, config, until=until)
            span = found.span if found else fa.span
            verdicts.append(PartVerdict(label=part.label, status=status, predicted=predicted, reference=ref,
                                        comparison=comparison, span=span, note=_PART_FITTED if i == fitted else ""))
        statuses = {v.status for v in verdicts}
        overall: VerdictStatus = ("correct" if statuses == {"correct"} else "incorrect" if "incorrect" in statuses
                                  else "no_answer" if "no_answer" in statuses
                                  else "unparseable" if "unparseable" in statuses else "unverifiable")
        note = next((f"part ({v.label}): {v.note}" for v in verdicts if v.note), "")
        # in a cut response the whole reading is where the work stopped, unless it is a marked answer
        whole = None if overall == "no_answer" or (cut and cut_short(fa, response or "")) else fa.text
        return AnswerVerdict(status=overall, predicted=whole, reference=None, how=fa.how, span=fa.span,
                             parts=verdicts, note=note)
    asked = (asked_value(fa.text, question.text) if fa.text and not any("=" in a for a in question.answers)
             else None)
    if asked is not None:
        value, expression = asked
        status, ref, comparison = _against(value, list(question.answers), config, None, until)
        return AnswerVerdict(status=status, predicted=fa.text, reference=ref, how=fa.how, span=fa.span,
                             comparison=comparison, note=f"compared as the value of {expression}, "
                                                         "the expression the question asks for")
    status, ref, comparison = _against(fa.text, list(question.answers), config, fa.subject, until)
    return AnswerVerdict(status=status, predicted=fa.text, reference=ref, how=fa.how, span=fa.span,
                         comparison=comparison)
