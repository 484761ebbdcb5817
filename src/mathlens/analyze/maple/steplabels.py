"""Step labels from judge-free detectors, merged with the judge's, and counted (f_l).

A label counts once per step whoever gave it: a step the judge and a detector both call
incoherent adds 1 to f_incoherent_output, not 2.
"""

from __future__ import annotations

from collections import Counter

from mathlens.analyze.maple.judge import JudgedStep
from mathlens.analyze.maple.labels import INCOHERENT, NO_SOLUTION, LabelSet
from mathlens.analyze.quality.detect import IncoherenceConfig, incoherence, is_no_solution


def detector_labels(
    steps: list[str], text: str, has_answer: bool, labels: LabelSet, cfg: IncoherenceConfig
) -> list[JudgedStep]:
    """Judge-free labels: incoherent steps (or the whole text), and no solution at the last step."""
    out: list[JudgedStep] = []
    if labels.get(INCOHERENT) is not None:
        for i, step in enumerate(steps, start=1):
            hits = incoherence(step, cfg)
            if hits:
                out.append(
                    JudgedStep(
                        step=i,
                        labels=[INCOHERENT],
                        source="detector",
                        reason="; ".join(f"{h.check}: {h.detail}" for h in hits),
                    )
                )
        if not out and steps:
            hits = incoherence(text, cfg)
            if hits:
                out.append(
                    JudgedStep(
                        step=len(steps),
                        labels=[INCOHERENT],
                        source="detector",
                        reason="whole text: " + "; ".join(f"{h.check}: {h.detail}" for h in hits),
                    )
                )
    if labels.get(NO_SOLUTION) is not None and is_no_solution(text, has_answer):
        out.append(
            JudgedStep(step=max(len(steps), 1), labels=[NO_SOLUTION], source="detector", reason="no final answer found")
        )
    return out


def merge_labels(*groups: list[JudgedStep]) -> list[JudgedStep]:
    """Union of labels per step (a label counts once per step whoever gave it)."""
    merged: dict[int, JudgedStep] = {}
    for group in groups:
        for s in group:
            if s.step in merged:
                old = merged[s.step]
                merged[s.step] = old.model_copy(
                    update={
                        "labels": list(dict.fromkeys([*old.labels, *s.labels])),
                        "reason": "; ".join(r for r in (old.reason, s.reason) if r),
                    }
                )
            else:
                merged[s.step] = s
    return [merged[k] for k in sorted(merged)]


def label_counts(steps: list[JudgedStep]) -> dict[str, int]:
    """f_l: the number of steps that carry each label."""
    return dict(Counter(label for s in steps for label in s.labels))
