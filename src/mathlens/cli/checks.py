"""`mathlens check` (one answer against a reference) and `mathlens steps` (the step checks of one
solution): the library's `check_answer` and `verify_steps` (`mathlens.api`) on the command line."""

from __future__ import annotations

import typer

from mathlens.cli.analyze import _read_text
from mathlens.cli.common import JSON_OPTION, emit_json, escape, out_console, user_errors
from mathlens.errors import UserError


@user_errors
def check(
    response: str = typer.Argument(..., help="the response (a file, '-' for stdin, or the text itself)"),
    reference: list[str] = typer.Option(..., "--reference", "-r", help="an accepted answer (repeatable)"),
    question: str = typer.Option("", "--question", help="the question text or file"),
    choice: list[str] = typer.Option(None, "--choice", "-c", help="multiple choice: LABEL=TEXT (repeatable)"),
    cut: bool = typer.Option(False, "--cut", help="the token cap cut the response: only an answer it marks counts"),
    as_json: bool = JSON_OPTION,
) -> None:
    """Check a response's final answer against a reference.

    Exits 0 whatever the verdict."""
    from mathlens.analyze.verify.budget import prestart

    prestart()
    from mathlens.api import check_answer

    text = _read_text(response)
    choices: dict[str, str] = {}
    for c in choice or []:
        label, sep, value = c.partition("=")
        if not sep or not label.strip():
            raise UserError(f"--choice takes LABEL=TEXT (not {c!r})")
        choices[label.strip()] = value.strip()
    verdict = check_answer(text, reference, question=_read_text(question) if question else None,
                           choices=choices or None, cut=cut)
    if as_json:
        emit_json(verdict)
        return
    how = f" ({verdict.comparison.method})" if verdict.comparison is not None else ""
    read = "none stated" if verdict.status == "no_answer" else escape(verdict.predicted)
    out_console.print(f"[bold]{escape(verdict.status)}[/]{escape(how)}: answer {read!s}, "
                      f"reference {escape(verdict.reference)!s}", highlight=False, markup=True)
    if verdict.note:
        out_console.print(verdict.note, highlight=False, markup=False)


@user_errors
def steps(
    solution: str = typer.Argument(..., help="a file with the solution, '-' for stdin, or the text itself"),
    question: str = typer.Option("", "--question", help="question text or file (its definitions are used)"),
    as_json: bool = JSON_OPTION,
) -> None:
    """Check every step of one solution, claim by claim.

    Each claim is true, false (with what it should be) or undecided."""
    from mathlens.analyze.verify.budget import prestart

    prestart()
    from mathlens.api import verify_steps

    text = _read_text(solution)
    if not text.strip():
        raise UserError("the solution is empty")
    checked = verify_steps(text, _read_text(question) if question else None)
    if as_json:
        emit_json({"steps": checked})
        return
    for s in checked:
        sure = f", {s.confidence} confidence" if s.confidence else ""
        out_console.print(f"step {s.index + 1}: {s.verdict}{sure}: {s.text}", highlight=False, markup=False)
        for c in s.claims:
            should = f" (it is {c.expected})" if c.status == "invalid" and c.expected else ""
            out_console.print(f"    {c.status}: {c.text}{should}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("check")(check)
    app.command("steps")(steps)
