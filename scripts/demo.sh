#!/usr/bin/env bash
# The main job on the embedded model: put the first questions of a built-in Calculus III exam, with
# the calculus study's four kinds of prompt ablation (coordinates, function expressions, instruction
# keywords, notation), to the default embedded model (Qwen2.5-Coder 0.5B Instruct), analyse every
# response (reasoning flow with step checks, final answers, output quality, sensitivity), grade the
# answers with the same model as judge, and write the HTML report.
# Re-running it makes no model calls: every response comes from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
EXAM=${1:-calc3-exam1}
DIR=${2:-runs/demo}
LIMIT=${DEMO_LIMIT:-4}
ML=${VENV:-.venv}/bin/mathlens
if [ -f "$DIR/manifest.json" ]; then
  "$ML" run --resume "$DIR"
else
  "$ML" run "$EXAM" --model embedded --limit "$LIMIT" --ablate coordinates,expressions,keywords,notation \
    --max-tokens 512 --out "$DIR"
fi
"$ML" analyze "$DIR"
# The judge's reply is one JSON object with points and a short reason per rubric criterion.
"$ML" grade "$DIR" --judge embedded --max-tokens 400
"$ML" report "$DIR"
"$ML" show "$DIR"
echo
echo "run directory: $DIR"
echo "report:        $DIR/report.html   (or: $ML view $(dirname "$DIR"))"
