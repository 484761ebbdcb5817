#!/usr/bin/env bash
# Set up mathlens from nothing: a virtual environment with every dependency, llama-cpp-python
# built with flags that are safe on every x86-64 CPU, and a check that the embedded model runs.
#
#   scripts/setup.sh            # .venv with everything (embedded model, retrieval, report, dev tools)
#   scripts/setup.sh --browser  # also install Debian's chromium for the report's browser tests (root only)
#
# Environment: PYTHON (interpreter, default python3.11 or python3), VENV (default .venv),
# MATHLENS_WHEEL_DIR (where the llama.cpp wheel is cached, default ~/.cache/mathlens/wheels).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
LLAMA_VERSION=0.3.36
# Default llama.cpp builds select AVX-512/AMX kernels at build time, which crash on the first eval
# on some CPUs; these flags build portable AVX2 kernels instead.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_BF16=OFF"
FLAGS_ID=$(printf '%s' "$LLAMA_VERSION $LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
WHEEL_DIR=${MATHLENS_WHEEL_DIR:-$HOME/.cache/mathlens/wheels}/llama-cpp-python-$LLAMA_VERSION-$FLAGS_ID

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

pick_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  for p in python3.11 python3.12 python3.13 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      echo "$p"; return
    fi
  done
  echo "mathlens needs Python >= 3.11" >&2; exit 1
}

if [ ! -x "$VENV/bin/python" ]; then
  PY=$(pick_python)
  say "creating $VENV with $PY"
  "$PY" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"
$PIP install --quiet --upgrade pip wheel setuptools

# torch is pinned to a CPU-usable release before anything pulls in a default (CUDA) build.
if ! "$VENV/bin/python" -c 'import torch' >/dev/null 2>&1; then
  say "installing torch (CPU) for the offline sentence embedder"
  $PIP install --quiet "torch==2.13.0"
fi

say "installing mathlens and its dependencies"
$PIP install --quiet -e ".[embedded,retrieval,report,dev,interop,ray]"
# An editable install leaves the package's bytecode to be written on first import, which a shell
# with PYTHONDONTWRITEBYTECODE set never does: every command would compile src/ again (about 0.1 s of
# each start). Compile it once here; a source file edited later is simply compiled in memory again.
"$VENV/bin/python" -m compileall -q src >/dev/null

if ! ls "$WHEEL_DIR"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  say "building llama-cpp-python $LLAMA_VERSION (first time only, a few minutes on 2 cores)"
  mkdir -p "$WHEEL_DIR"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" $PIP wheel --quiet --no-deps --no-cache-dir -w "$WHEEL_DIR" \
    "llama-cpp-python==$LLAMA_VERSION"
fi
WHEEL=$(ls "$WHEEL_DIR"/llama_cpp_python-*.whl | head -n 1)
if ! "$VENV/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" \
    >/dev/null 2>&1 || [ "$(cat "$VENV/.llama-flags" 2>/dev/null)" != "$FLAGS_ID" ]; then
  say "installing llama-cpp-python from $WHEEL"
  $PIP install --quiet --force-reinstall --no-deps "$WHEEL"
  $PIP install --quiet "$WHEEL[server]"
  echo "$FLAGS_ID" > "$VENV/.llama-flags"
fi

say "checking that the embedded model generates (the first time also assembles and verifies its weights)"
set +e
"$VENV/bin/python" -m mathlens.models.providers.selfcheck
check=$?
set -e
if [ "$check" -eq 3 ]; then
  echo "the embedded model's weights are missing or damaged: see the message above" >&2
  exit 1
elif [ "$check" -ne 0 ]; then
  echo "the embedded model failed its check (a crash means a wrongly built llama.cpp):" \
    "remove $WHEEL_DIR and run this script again" >&2
  exit 1
fi

if [ "${1:-}" = "--browser" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "installing Debian's chromium for the browser tests"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      say "chromium not found and cannot be installed here: browser tests will be skipped"
    fi
  fi
fi
say "ready: $VENV/bin/mathlens"
