"""From elements to the prompt variants a run sends: one per element, optional pairs and paraphrases.

`question_variants(question, options)` is what the planner calls when `manifest.ablation` is set;
`options` is that dict: ``{"elements": ["all"] | [types...], "pairs": bool, "paraphrases": bool}``
(optionally ``"max_pairs"``, ``"max_paraphrases"`` and ``"max_words"``). It is a pure, fast function
of the question text, so `--dry-run` can count requests and every resume plans the same variants.

``all`` means the five typed elements (`ELEMENT_TYPES`). Single content words (type ``word``) are
sent only when named, alone or beside ``all`` (``["all", "words"]``): a prompt has many more words
than typed elements, so including them in ``all`` would multiply the requests of every existing
ablation run and change the meaning of its robustness.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from mathlens.errors import UnknownNameError, UserError
from mathlens.items.schema import Question
from mathlens.solve.ablation.elements import (
    _LABEL,
    ELEMENT_TYPES,
    KEYWORD_SYNONYMS,
    OPTIONAL_TYPES,
    Edit,
    Element,
    ElementType,
    extract_elements,
)
from mathlens.solve.ablation.words import DEFAULT_MAX_WORDS, word_elements
from mathlens.solve.variant import Variant

#: Names accepted on the command line (`--ablate coordinates,keywords`) -> element type.
TYPE_ALIASES: dict[str, ElementType] = {
    **{t: t for t in (*ELEMENT_TYPES, *OPTIONAL_TYPES)},
    "coordinates": "coordinate", "numbers": "coordinate", "numerical": "coordinate", "references": "coordinate",
    "expressions": "expression", "math": "expression", "functions": "expression", "function": "expression",
    "keywords": "keyword", "instructions": "keyword", "instruction": "keyword",
    "notations": "notation", "symbols": "notation", "symbol": "notation",
    "language": "linguistic", "linguistics": "linguistic",
    "words": "word", "content_words": "word",
}
#: Every element type in the order variants are listed: typed elements, then the optional ones.
_ORDER: dict[ElementType, int] = {t: i for i, t in enumerate((*ELEMENT_TYPES, *OPTIONAL_TYPES))}
DEFAULT_MAX_PAIRS = 20
DEFAULT_MAX_PARAPHRASES = 3


@dataclass(frozen=True)
class AblationOptions:
    """Which variants to build. `types` are canonical element types."""

    types: tuple[ElementType, ...] = ELEMENT_TYPES
    pairs: bool = False
    paraphrases: bool = False
    max_pairs: int = DEFAULT_MAX_PAIRS
    max_paraphrases: int = DEFAULT_MAX_PARAPHRASES
    max_words: int = DEFAULT_MAX_WORDS

    @classmethod
    def from_dict(cls, options: dict[str, Any] | None) -> AblationOptions:
        """Read the manifest's `ablation` dict; unknown element types raise a `UserError`.

        `all` adds the typed elements and can stand beside `words` (`all,words`)."""
        options = dict(options or {})
        raw = options.get("elements") or ["all"]
        if isinstance(raw, str):
            raw = [p for p in raw.split(",") if p.strip()]
        types: list[ElementType] = []
        for name in raw:
            key = str(name).strip().lower()
            if key == "all":
                types.extend(t for t in ELEMENT_TYPES if t not in types)
                continue
            if key not in TYPE_ALIASES:
                raise UnknownNameError("element type", key, [*TYPE_ALIASES, "all"])
            if TYPE_ALIASES[key] not in types:
                types.append(TYPE_ALIASES[key])
        try:
            max_pairs = int(options.get("max_pairs", DEFAULT_MAX_PAIRS))
            max_para = int(options.get("max_paraphrases", DEFAULT_MAX_PARAPHRASES))
            max_words = int(options.get("max_words", DEFAULT_MAX_WORDS))
        except (TypeError, ValueError):
            raise UserError("ablation max_pairs, max_paraphrases and max_words must be whole numbers") from None
        return cls(types=tuple(sorted(types, key=_ORDER.__getitem__)), pairs=bool(options.get("pairs")),
                   paraphrases=bool(options.get("paraphrases")), max_pairs=max(0, max_pairs),
                   max_paraphrases=max(0, max_para), max_words=max(0, max_words))


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """Apply non-overlapping splices to `text` and tidy the seams they leave.

    >>> apply_edits("Find f at x = 2", [Edit(6, 15)])
    'Find f'
    """
    ordered = sorted(edits, key=lambda e: e.start, reverse=True)
    for a, b in itertools.pairwise(ordered):
        if b.end > a.start:
            raise ValueError(f"edits overlap: {b} and {a}")
    out = text
    for e in ordered:
        out = out[:e.start] + e.replacement + out[e.end:]
        pos = e.start + len(e.replacement)
        if e.capitalize_next:
            m = re.compile(r"[ \t]*(?:\((?:[a-z]|[ivx]+)\)[ \t]+)?").match(out, pos)
            k = m.end() if m else pos
            if k < len(out) and out[k].islower():
                out = out[:k] + out[k].upper() + out[k + 1:]
        # A removal can leave a space before punctuation or at the end of a line.
        if 0 < pos < len(out) and out[pos - 1] == " " and out[pos] in ",.;:?!":
            out = out[:pos - 1] + out[pos:]
    return "\n".join(line.rstrip() for line in out.split("\n")).strip()


def _overlaps(a: Element, b: Element) -> bool:
    return any(x.start < y.end and y.start < x.end for x in a.edits for y in b.edits)


def _paraphrases(text: str, limit: int) -> list[tuple[str, str]]:
    """A few rule-based rewordings that keep the meaning: (template name, text)."""
    out: list[tuple[str, str]] = []
    first_word = re.match(r"\s*([A-Za-z]+)", text)
    if first_word and first_word.group(1).lower() in KEYWORD_SYNONYMS:
        s = first_word.start(1)
        out.append(("polite request", text[:s] + "Please " + text[s].lower() + text[s + 1:]))
    first_line, sep, rest = text.partition("\n")
    m = re.match(r"\s*(?:Find|Compute|Calculate|Determine|Evaluate)\s+(the\s+.+?)[.]?\s*$", first_line, re.S)
    if m and not _LABEL.search(first_line) and not re.search(r"[.?!;]\s", m.group(1)):
        out.append(("question form", f"What is {m.group(1)}?{sep}{rest}"))
    out.append(("task framing", f"Solve the following problem.\n\n{text}"))
    seen = {text}
    kept = []
    for name, t in out:
        if t not in seen:
            seen.add(t)
            kept.append((name, t))
    return kept[:limit]


def text_variants(text: str, options: AblationOptions | dict[str, Any] | None = None) -> list[Variant]:
    """The variants of one prompt text (what `question_variants` builds from a question's prompt).

    >>> [v.question_text for v in text_variants("Find f'(2) at x = 1", {"elements": ["coordinate"]})]
    ["Find f'(2)"]
    """
    opts = options if isinstance(options, AblationOptions) else AblationOptions.from_dict(options)
    singles: list[tuple[Variant, Element]] = []
    seen = {text.strip()}
    counters: dict[str, int] = {}
    elements = extract_elements(text)
    if "word" in opts.types:
        elements += word_elements(text, opts.max_words)
    for el in elements:
        if el.type not in opts.types:
            continue
        new = apply_edits(text, el.edits)
        if not new or new in seen:
            continue
        seen.add(new)
        counters[el.type] = counters.get(el.type, 0) + 1
        name = f"{el.type}-{counters[el.type]}"
        singles.append((Variant(name=name, kind="ablation", element_type=el.type, element_text=el.text,
                                question_text=new, meaning_preserving=el.meaning_preserving), el))
    variants = [v for v, _ in singles]
    if opts.pairs:
        n_pairs = 0
        for (va, ea), (vb, eb) in itertools.combinations(singles, 2):
            if n_pairs >= opts.max_pairs:
                break
            if _overlaps(ea, eb):
                continue
            new = apply_edits(text, [*ea.edits, *eb.edits])
            if not new or new in seen:
                continue
            seen.add(new)
            n_pairs += 1
            variants.append(Variant(
                name=f"pair-{va.name}+{vb.name}", kind="pair", element_type=f"{ea.type}+{eb.type}",
                element_text=f"{ea.text} + {eb.text}", question_text=new,
                meaning_preserving=ea.meaning_preserving and eb.meaning_preserving))
    if opts.paraphrases:
        for k, (template, new) in enumerate(_paraphrases(text, opts.max_paraphrases), start=1):
            if new in seen:
                continue
            seen.add(new)
            variants.append(Variant(name=f"paraphrase-{k}", kind="paraphrase", element_type="paraphrase",
                                    element_text=template, question_text=new, meaning_preserving=True))
    return variants


def question_variants(question: Question, options: dict[str, Any] | None) -> list[Variant]:
    """Prompt variants of `question` for an ablation run (the original is not included).

    Each variant names the element it changed (`element_type`, `element_text`), carries the full
    prompt text to send (`question_text`), and says whether the change keeps the meaning.
    """
    return text_variants(question.prompt_text(), options)
