"""Quality flags of run records, their counts, the likely cause, and the run-level warning.

A run is called *mostly degenerate* when more than `WARNING_SHARE` (50%) of its `ok` records are
degenerate; the report opens with a banner and `mathlens run` / `mathlens show` end with a warning
naming the share and the likely cause.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from mathlens.analyze.quality.flags import DEGENERATE_FLAGS, QualityConfig, QualityFlags, quality_flags
from mathlens.items.schema import Question
from mathlens.rounding import percent
from mathlens.runs.records import RunRecord

#: Share of ok records above which a run is called mostly degenerate.
WARNING_SHARE = 0.5
#: Counted per model and configuration, in this order.
COUNTED_FLAGS = (*DEGENERATE_FLAGS, "truncated", "no_final_answer")

_CAUSES = {
    "echo": "copy the prompt or system role, as a base (not instruction-tuned) model does",
    "repetition_loop": "loop, repeating the same text until the token cap (a repeat penalty, stop sequences or an "
                       "instruction-tuned model may help)",
    "empty": "are empty: the model stopped at once (check the chat template and stop sequences)",
    "wrong_script": "are not in Latin script or are unreadable symbols (the model is answering in another language "
                    "or its output is garbled)",
}


def record_prompts(rec: RunRecord) -> tuple[str, str]:
    """(system role, last user prompt) of the messages a record sent."""
    system = "\n".join(m.content for m in rec.messages if m.role == "system")
    users = [m.content for m in rec.messages if m.role == "user"]
    return system, users[-1] if users else ""


def record_quality(rec: RunRecord, question: Question | None = None,
                   config: QualityConfig | None = None) -> QualityFlags | None:
    """The quality flags of a run record, against the system role and prompt it actually sent;
    None for a failed request (status `error`), which has no response to judge."""
    if rec.status != "ok":
        return None
    system, prompt = record_prompts(rec)
    return quality_flags(rec.response, system_role=system, prompt=prompt, finish_reason=rec.finish_reason,
                         question=question, config=config)


def flag_counts(flags: Iterable[QualityFlags | None]) -> dict[str, int]:
    """`flagged` (records with flags), `degenerate`, and the count of each flag.

    >>> flag_counts([QualityFlags(echo=True, truncated=True), QualityFlags(), None])["degenerate"]
    1
    """
    counts: Counter[str] = Counter()
    counts["flagged"] = 0
    for f in flags:
        if f is None:
            continue
        counts["flagged"] += 1
        counts["degenerate"] += f.degenerate
        for name in COUNTED_FLAGS:
            counts[name] += bool(getattr(f, name))
    return {k: counts[k] for k in ("flagged", "degenerate", *COUNTED_FLAGS)}


def flags_raised(counts: Mapping[str, int]) -> str:
    """Each flag counted in `counts` (`flag_counts`, or a group's counts) that was raised, in words;
    "" when none was.

    >>> flags_raised({"flagged": 5, "degenerate": 2, "echo": 2, "repetition_loop": 1, "truncated": 0})
    'echo 2, repetition loop 1'
    """
    return ", ".join(f"{name.replace('_', ' ')} {counts[name]}" for name in COUNTED_FLAGS if counts.get(name))


def likely_cause(flags: Iterable[QualityFlags]) -> str:
    """One sentence naming the most common failure among `flags`.

    >>> likely_cause([QualityFlags(echo=True), QualityFlags(echo=True), QualityFlags()])
    'most responses copy the prompt or system role, as a base (not instruction-tuned) model does'
    """
    return likely_cause_of(flag_counts(flags))


def likely_cause_of(counts: Mapping[str, int]) -> str:
    """`likely_cause` from counts (`flag_counts`: `flagged` and the count of each flag), so that a
    stored summary can name the cause without its flags."""
    flagged = counts.get("flagged", 0)
    found = {name: counts.get(name, 0) for name in DEGENERATE_FLAGS if counts.get(name, 0)}
    if not found:
        if flagged and counts.get("truncated", 0) * 2 > flagged:
            return "most responses hit the token cap; a larger --max-tokens may let them finish"
        return "no dominant failure: the responses look like attempts at the questions"
    name, n = max(found.items(), key=lambda kv: (kv[1], -DEGENERATE_FLAGS.index(kv[0])))
    cause = _CAUSES[name]
    if n * 2 > flagged:
        return f"most responses {cause}"
    return f"the most common failure ({n} of {flagged} responses): they {cause}"


def degenerate_warning(flags: Iterable[QualityFlags | None], share: float = WARNING_SHARE) -> str | None:
    """A warning when more than `share` of the flagged (ok) records are degenerate, else None.

    >>> degenerate_warning([QualityFlags(empty=True), QualityFlags(empty=True), QualityFlags()])[:26]
    '2 of 3 responses (67%) are'
    """
    return warning_of(flag_counts(flags), share)


def warning_of(counts: Mapping[str, int], share: float = WARNING_SHARE, *,
               sampled_from: int | None = None) -> str | None:
    """`degenerate_warning` from counts (`flag_counts`). With `sampled_from`, the counts are of a
    sample of that many responses, and the warning says so."""
    flagged, bad = counts.get("flagged", 0), counts.get("degenerate", 0)
    if not flagged or bad / flagged <= share:
        return None
    scope = f"{bad} of {flagged} responses ({percent(bad / flagged)})"
    if sampled_from is not None and sampled_from > flagged:
        scope = f"{bad} of {flagged} sampled responses ({percent(bad / flagged)} of a spread sample of the run's " \
                f"{sampled_from})"
    return (f"{scope} are degenerate: {likely_cause_of(counts)}. "
            "Scores computed on them describe the failure, not the model's reasoning.")


def run_flags(records: Iterable[RunRecord],
              stored: Mapping[str, QualityFlags | None] | None = None) -> dict[str, QualityFlags | None]:
    """Quality flags of every record: those stored by the answers analysis (`stored`, record key ->
    flags, see `mathlens.analyze.grading.analyzer.stored_quality`) where it has them, else computed
    from the record without reloading its question (so a lettered part's missing answer is not
    looked for)."""
    stored = stored or {}
    return {rec.key: stored[rec.key] if rec.key in stored else record_quality(rec) for rec in records}
