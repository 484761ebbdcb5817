"""MAPLE (seed 001_c607caa65db8a290.txt): error labels, step judging and the MAPLE score.

    >>> from mathlens.analyze.maple import default_labels, maple_score
    >>> maple_score({"calculation_error": 1}, default_labels().weights(), v=1.0, r=1.0).e > 0
    True

See docs/maple.md. Entry points: the `maple` analyzer (`analyzer.py`; run it with
`mathlens.analyze.registry.run_one(store, "maple", options, judge=...)`) for a run, whose results
are the `MAPLE` document (`results.py`); `run_audit(load_audit_data(path), judge, labels)` for the
judge audit; `import_human_labels(store, path)` for the step-label agreement of the judge with
people (`agreement.py`, the `MAPLE_AGREEMENT` document; the file formats in `human.py`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mathlens.analyze.maple.agreement import MAPLE_AGREEMENT, import_human_labels
    from mathlens.analyze.maple.audit import AuditMetrics, audit_metrics, load_audit_data, run_audit
    from mathlens.analyze.maple.discover import Discovery, discover_clusters, draft_label_set
    from mathlens.analyze.maple.judge import StepJudgement, judge_steps, reflect
    from mathlens.analyze.maple.labels import Label, LabelSet, default_labels, load_label_set, save_label_set
    from mathlens.analyze.maple.pipeline import MapleOptions, MapleResult, score_run
    from mathlens.analyze.maple.results import MAPLE, MapleSummary, SolutionMaple
    from mathlens.analyze.maple.score import MapleParts, error_rate, maple_score

# Exports are loaded on first use, so that importing one light module of the package (for example
# `score`) does not pull in the judge and model machinery.
_EXPORTS = {
    "MAPLE_AGREEMENT": "agreement", "import_human_labels": "agreement",
    "AuditMetrics": "audit", "audit_metrics": "audit", "load_audit_data": "audit", "run_audit": "audit",
    "Discovery": "discover", "discover_clusters": "discover", "draft_label_set": "discover",
    "StepJudgement": "judge", "judge_steps": "judge", "reflect": "judge",
    "Label": "labels", "LabelSet": "labels", "default_labels": "labels", "load_label_set": "labels",
    "save_label_set": "labels", "MapleOptions": "pipeline", "score_run": "pipeline",
    "MapleResult": "pipeline", "MAPLE": "results", "MapleSummary": "results", "SolutionMaple": "results",
    "MapleParts": "score", "error_rate": "score", "maple_score": "score",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "MAPLE", "MAPLE_AGREEMENT", "AuditMetrics", "Discovery", "Label", "LabelSet", "MapleOptions", "MapleParts",
    "MapleResult", "MapleSummary", "SolutionMaple", "StepJudgement", "audit_metrics", "default_labels",
    "discover_clusters", "draft_label_set", "error_rate", "import_human_labels", "judge_steps", "load_audit_data",
    "load_label_set", "maple_score", "reflect", "run_audit", "save_label_set", "score_run",
]
