"""MAPLE (seed 001_c607caa65db8a290.txt): error labels, step judging and the MAPLE score.

    >>> maple_score({"calculation_error": 1}, default_labels().weights(), v=1.0, r=1.0).e > 0
    True

See docs/maple.md. Entry points: `analyze_run(store, MapleOptions(...))` for a run,
`run_audit(load_audit_data(path), judge, labels)` for the judge audit.
"""

from mathlens.analyze.maple.audit import AuditMetrics, audit_metrics, load_audit_data, run_audit
from mathlens.analyze.maple.discover import Discovery, discover_clusters, draft_label_set
from mathlens.analyze.maple.judge import StepJudgement, judge_steps, reflect
from mathlens.analyze.maple.labels import Label, LabelSet, default_labels, load_label_set, save_label_set
from mathlens.analyze.maple.pipeline import MapleOptions, analyze_run
from mathlens.analyze.maple.results import MapleResult, SolutionMaple
from mathlens.analyze.maple.score import MapleParts, error_rate, maple_score

__all__ = [
    "AuditMetrics", "Discovery", "Label", "LabelSet", "MapleOptions", "MapleParts", "MapleResult", "SolutionMaple",
    "StepJudgement", "analyze_run", "audit_metrics", "default_labels", "discover_clusters", "draft_label_set",
    "error_rate", "judge_steps", "load_audit_data", "load_label_set", "maple_score", "reflect", "run_audit",
    "save_label_set",
]
