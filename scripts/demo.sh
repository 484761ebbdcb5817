#!/usr/bin/env bash
# The main job on the embedded model: put the first question of two built-in exams (Calculus III's
# gradient question, the calculus study's Table 1 example, and Calculus I's domain and range), with
# the calculus study's four kinds of prompt ablation (coordinates, function expressions, instruction
# keywords, notation), to Qwen2.5-Coder 1.5B Instruct; analyse every response (reasoning flow with
# step checks, final answers, output quality, sensitivity); grade the original answers with the same
# model as judge, reconciled with the answer checker; write the HTML report.
# The settings (model, two questions, 768-token cap, the exam role) were chosen so that at least 80%
# of the responses end with a final answer and the whole demo fits in about 10 minutes on 2 idle
# cores; docs/install.md has the measurements. Re-running it makes no model calls: every response
# comes from the cache.
#
#   scripts/demo.sh [EXAMS] [RUN_DIR]     EXAMS: space-separated built-in exams (first question of each)
#   DEMO_MODEL, DEMO_LIMIT, DEMO_MAX_TOKENS override the model, questions per exam and token cap;
#   DEMO_MODEL_OPTION one model option for the solver and the judge (n_threads=1 on a busy machine,
#   where llama.cpp's threads wait for each other).
set -euo pipefail
cd "$(dirname "$0")/.."
read -ra EXAMS <<< "${1:-calc3-exam1 calc1-exam1}"
DIR=${2:-runs/demo}
MODEL=${DEMO_MODEL:-embedded/qwen2.5-coder-1.5b}
LIMIT=${DEMO_LIMIT:-1}
MAX_TOKENS=${DEMO_MAX_TOKENS:-768}
ML=${VENV:-.venv}/bin/mathlens
OPT=()
JOPT=()
if [ -n "${DEMO_MODEL_OPTION:-}" ]; then OPT=(-M "$DEMO_MODEL_OPTION"); JOPT=(-J "$DEMO_MODEL_OPTION"); fi
if [ -f "$DIR/manifest.json" ]; then
  "$ML" run --resume "$DIR"
else
  "$ML" run "${EXAMS[@]}" --model "$MODEL" --limit "$LIMIT" --ablate coordinates,expressions,keywords,notation \
    --max-tokens "$MAX_TOKENS" --system-role exam "${OPT[@]}" --out "$DIR"
fi
"$ML" analyze "$DIR"
# The judge's reply is one JSON object with points and a short reason per rubric criterion; it is shown
# mathlens' checks, and a decisive final-answer verdict supplies that criterion's points.
"$ML" grade "$DIR" --judge "$MODEL" "${JOPT[@]}" --max-tokens 400
"$ML" report "$DIR"
"$ML" show "$DIR"
echo
echo "run directory: $DIR"
echo "report:        $DIR/report.html   (or: $ML view $(dirname "$DIR"))"
