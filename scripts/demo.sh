#!/usr/bin/env bash
# The main job on the embedded model: put a built-in Calculus III exam (with ablation variants of
# its coordinates and instruction keywords) to Gemma 3 270M, analyse every response (reasoning flow,
# final answers, sensitivity), grade it with the same model as judge, and write the HTML report.
# Re-running it makes no model calls: every response comes from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
EXAM=${1:-calc3-exam1}
DIR=${2:-runs/demo}
ML=${VENV:-.venv}/bin/mathlens
if [ -f "$DIR/manifest.json" ]; then
  "$ML" run --resume "$DIR"
else
  "$ML" run "$EXAM" --model embedded --ablate coordinates,keywords --max-tokens 256 --out "$DIR"
fi
"$ML" analyze "$DIR"
# The 270M judge is weak and slow; a short cap keeps the demo quick (unusable verdicts are "ungraded").
"$ML" grade "$DIR" --judge embedded --max-tokens 192
"$ML" report "$DIR"
"$ML" show "$DIR"
echo
echo "run directory: $DIR"
echo "report:        $DIR/report.html   (or: $ML view $(dirname "$DIR"))"
