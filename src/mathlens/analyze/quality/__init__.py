"""Output-quality flags: empty, echoed, looping or wrong-script responses, found without a model.

Entry points: `quality_flags(response, system_role=..., prompt=..., finish_reason=...)` for one
response, `record_quality(record)` for a run record, `likely_cause(flags)` and
`degenerate_warning(flags)` for a set of them. See `flags.py` for every threshold.
"""

from mathlens.analyze.quality.flags import DEGENERATE_FLAGS, QualityConfig, QualityFlags, quality_flags
from mathlens.analyze.quality.summary import (
    COUNTED_FLAGS,
    WARNING_SHARE,
    degenerate_warning,
    flag_counts,
    flags_raised,
    likely_cause,
    likely_cause_of,
    record_prompts,
    record_quality,
    run_flags,
    warning_of,
)

__all__ = [
    "COUNTED_FLAGS", "DEGENERATE_FLAGS", "WARNING_SHARE", "QualityConfig", "QualityFlags", "degenerate_warning",
    "flag_counts", "flags_raised", "likely_cause", "likely_cause_of", "quality_flags", "record_prompts",
    "record_quality", "run_flags", "warning_of",
]
