#!/usr/bin/env bash
# Builds llama.cpp's own C++ `llama-server` (parallel slots, continuous batching) from the llama.cpp
# sources vendored in the llama-cpp-python release that scripts/setup.sh installed, so the server and
# the in-process backend run the same llama.cpp. Optional: nothing in `make test` or `make demo`
# needs it; benchmarks/bench_eval.py --native uses it to measure concurrent serving.
#
# Cache: ~/.cache/karma/llama-server/<version>/bin/llama-server (outside the clone, so fresh clones
# on the same machine reuse the ~5-minute build). Prints the binary's path on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${KARMA_VENV:-$ROOT/.venv}
[[ -x "$VENV/bin/python" ]] || { echo "run scripts/setup.sh first (no $VENV)" >&2; exit 1; }
VERSION=$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('llama-cpp-python'))")
CACHE=${KARMA_LLAMA_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/karma/llama-server}/$VERSION
BIN="$CACHE/bin/llama-server"
if [[ -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi
mkdir -p "$CACHE/src"
echo "[llama-server] fetching the llama-cpp-python $VERSION source release (vendored llama.cpp)" >&2
"$VENV/bin/python" -m pip --disable-pip-version-check download -q --no-deps --no-binary :all: \
  -d "$CACHE/src" "llama-cpp-python==$VERSION"
SDIST=$(ls "$CACHE"/src/llama_cpp_python-"$VERSION".tar.gz)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
tar xzf "$SDIST" -C "$WORK"
LLAMA="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
GENERATOR=()
command -v ninja > /dev/null && GENERATOR=(-G Ninja)
echo "[llama-server] building (about 5 minutes on 2 cores)" >&2
# No web UI (it would be fetched from Hugging Face), no curl (no model downloads), portable x86 flags.
cmake -S "$LLAMA" -B "$WORK/build" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > "$WORK/cmake.log" 2>&1 \
  || { tail -30 "$WORK/cmake.log" >&2; exit 1; }
cmake --build "$WORK/build" --target llama-server -j "$(nproc)" > "$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log" >&2; exit 1; }
mkdir -p "$CACHE/bin"
install -m 755 "$WORK/build/bin/llama-server" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
echo "$BIN"
