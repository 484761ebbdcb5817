#!/usr/bin/env bash
# Run the whole test suite in the project's environment (after scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${VENV:-.venv}/bin
"$BIN/ruff" check src tests bench
"$BIN/mypy"
"$BIN/lint-imports"
set +e
"$BIN/python" -m pytest -q -rs "$@"
rc=$?
set -e
# pytest exits 5 when it collected nothing; that is not a pass.
if [ "$rc" -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi
exit "$rc"
