"""System roles and user prompts.

`EXAM_SYSTEM_ROLE` restates the calculus seed's Table 5 (role, notation, format) in our words: the
model answers as a student, shows every step, and writes keyboard math with no LaTeX or markup.
It also asks for numbered steps and a closing "Final answer:" line, which makes steps and answers
easier to find. The closing-line request is placed after the work on purpose: worded as "end with
a line that starts with 'Final answer:'", small instruction-tuned models (Qwen2.5 0.5B) often reply
with that line alone and nothing before it.

`CALCULUS_STUDY_ROLE` is the seed's Table 5 itself, restated in our words with its three
instructions (role, notation, format) and nothing added: no numbered steps, no closing line.
`SYSTEM_ROLES` names both for `mathlens run --system-role NAME`; docs/exam-setup.md says how the
choice changes step counts and segmentation.
"""

from __future__ import annotations

from mathlens.errors import UnknownNameError
from mathlens.items.schema import Question
from mathlens.models.base import Message

EXAM_SYSTEM_ROLE = (
    "You are an undergraduate student sitting a written exam. Answer every question in full and "
    "show each step of your work.\n"
    "Write mathematics in plain keyboard notation only, the way it would look written on paper: "
    "for example f(x) = x^2/4, sqrt(x+2), ln(x), <-8, 1>. Do not use LaTeX or any other markup: "
    "no $ signs, no \\( \\), no backslashes, no \\frac.\n"
    "Number your steps. After your work, write one last line that starts with 'Final answer:' and "
    "gives your answers."
)

CALCULUS_STUDY_ROLE = (
    "You are an undergraduate student taking an exam. Answer each question thoroughly and completely, "
    "showing all of your steps.\n"
    "Do not use LaTeX or any kind of math markup. Write math only in plain notation a person can read, "
    "for example f(x)=x^2/4 rather than \\frac{x^2}{4}.\n"
    "Do not write $$, \\( \\) or backslashes. Write math the way it would look on paper, using the "
    "characters on a keyboard."
)

#: The system roles `--system-role` knows by name.
SYSTEM_ROLES: dict[str, str] = {
    "exam": EXAM_SYSTEM_ROLE,
    "calculus-study": CALCULUS_STUDY_ROLE,
}
#: The role a run uses when `--system-role` is not given.
DEFAULT_SYSTEM_ROLE = "exam"


def named_system_role(name: str) -> str:
    """The text of the system role called `name`; `UnknownNameError` (listing the known names) else.

    >>> named_system_role("calculus-study").startswith("You are an undergraduate student")
    True
    """
    if name not in SYSTEM_ROLES:
        raise UnknownNameError("system role", name, SYSTEM_ROLES)
    return SYSTEM_ROLES[name]


#: Stop sequences that end a turn of the Gemma chat template, or a new question being invented.
DEFAULT_STOP: tuple[str, ...] = ("<end_of_turn>", "<start_of_turn>", "\nQuestion:")


def question_message(question: Question, text: str | None = None, context: str | None = None) -> Message:
    """The user turn for a question; `text` replaces the question's own text (ablation variants),
    `context` is retrieved material placed before it (retrieval configurations)."""
    body = text if text is not None else question.prompt_text()
    if context:
        body = f"{context}\n\nQuestion:\n{body}"
    return Message(role="user", content=body, images=tuple(question.images))
