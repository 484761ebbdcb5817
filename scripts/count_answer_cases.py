"""Count the answer-checking cases of tests/cases/answers/ by phenomenon.

Reads responses_reading.yaml, responses_comparing.yaml, pairs_comparing.yaml and conventions.yaml
and the map of phenomena (phenomena.yaml), and prints for each phenomenon its equal and not-equal
cases and how many are whole responses (chat output included) or answer pairs, then the totals.
A case is one expected verdict (see tests/support/answer_cases.py). Counting only: nothing is
checked here (tests/unit/test_answers_phenomena.py runs the cases).

    .venv/bin/python scripts/count_answer_cases.py [--json]
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.answer_cases import all_cases, by_phenomenon, count, unlisted_groups


def main() -> int:
    counts = by_phenomenon()
    total = count(all_cases())
    if "--json" in sys.argv:
        print(json.dumps({"phenomena": [{"section": s, "phenomenon": p, **asdict(c)} for (s, p), c in counts.items()],
                          "total": asdict(total), "unlisted": unlisted_groups()}, indent=1))
        return 0
    print(f"{'section':12s} {'phenomenon':68s} {'equal':>5s} {'not':>5s} {'whole':>5s} {'pairs':>5s}")
    for (section, name), c in counts.items():
        print(f"{section:12s} {name[:68]:68s} {c.equal:5d} {c.not_equal:5d} {c.whole:5d} {c.pairs:5d}")
    print(f"{'':12s} {'all':68s} {total.equal:5d} {total.not_equal:5d} {total.whole:5d} {total.pairs:5d}")
    print(f"\n{total.total} cases, {total.whole} of them whole responses ({100 * total.whole / total.total:.1f}%)")
    missing = unlisted_groups()
    if missing:
        print("groups not listed exactly once in phenomena.yaml: " + ", ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
