#!/usr/bin/env bash
# Time `make demo` as a new user meets it: a fresh clone of this repository, an empty response cache,
# the embedded models' weights and the llama.cpp wheel already cached (as after any earlier setup).
# Prints the wall time of each step and the share of responses that end with a final answer.
#
#   scripts/time_demo.sh [WORK_DIR]       (default: a new temporary folder; run it on an idle machine)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$(mktemp -d -t mathlens-demo-XXXX)}
git clone --quiet "$SRC" "$WORK/mathlens"
cd "$WORK/mathlens"
export MATHLENS_CACHE_DIR="$WORK/cache"
start=$(date +%s)
make setup > "$WORK/setup.log" 2>&1
setup_done=$(date +%s)
make demo > "$WORK/demo.log" 2>&1
end=$(date +%s)
echo "setup (venv, dependencies, self-check): $((setup_done - start)) s"
echo "demo (run, analyze, grade, report, show): $((end - setup_done)) s  ($(( (end - setup_done) / 60 )) min $(( (end - setup_done) % 60 )) s)"
.venv/bin/python - runs/demo <<'PY'
import sys
from mathlens.analyze.grading.answer_records import ANSWERS

doc = ANSWERS.read(sys.argv[1])
o = doc.summary.overall if doc is not None else None
if o is not None:
    print(f"responses with a final answer: {o.answered} of {o.records} ({o.answered / o.records:.0%}); "
          f"truncated {o.truncated}; correct {o.counts.get('correct', 0)}")
PY
echo "logs: $WORK/setup.log $WORK/demo.log; report: $WORK/mathlens/runs/demo/report.html"
