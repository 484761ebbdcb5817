#!/usr/bin/env bash
# The main job on the embedded model: put a built-in calculus exam to Gemma 3 270M, analyse every
# response, and print where the run and its summary are. Re-running it makes no model calls.
set -euo pipefail
cd "$(dirname "$0")/.."
EXAM=${1:-calc3-exam1}
DIR=${2:-runs/demo}
ML=${VENV:-.venv}/bin/mathlens
if [ -f "$DIR/manifest.json" ]; then
  "$ML" run --resume "$DIR"
else
  "$ML" run "$EXAM" --model embedded --out "$DIR"
fi
"$ML" analyze "$DIR"
"$ML" show "$DIR"
