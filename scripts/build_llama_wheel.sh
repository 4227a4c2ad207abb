#!/usr/bin/env bash
# Builds llama-cpp-python's wheel once per build recipe and keeps it outside the clone, so a fresh
# clone (CI) and every virtual environment on the machine reuse it. Prints the wheel's path (last line).
#
#   bash scripts/build_llama_wheel.sh dispatch   # every x86 CPU variant, the best picked at run time
#   bash scripts/build_llama_wheel.sh portable   # one AVX2/FMA/F16C build (GGML_NATIVE=OFF)
#
# Why not pip's own wheel cache: it is keyed by the source archive alone, not by CMAKE_ARGS, so a
# changed build recipe would silently get the old wheel back. Here the folder is
# ~/.cache/karma/wheels/llama-cpp-python-<version>-<hash of the CMake arguments>/ (KARMA_WHEELS to put
# it elsewhere). About 4 minutes on 2 cores for portable, 20 for dispatch (it compiles the CPU backend
# once per x86 variant, from SSE4.2 to AVX-512 BF16 / AMX).
#
# dispatch: GGML_BACKEND_DL=ON builds each backend as a loadable module and GGML_CPU_ALL_VARIANTS=ON
# one CPU module per instruction-set level (libggml-cpu-haswell.so, -skylakex, -icelake,
# -sapphirerapids ...), all installed next to libllama.so in llama_cpp/lib. ggml scores the modules
# against the CPU it runs on and loads the best one. llama-cpp-python 0.3.36 does not point ggml to
# that folder (ggml looks in the executable's folder and the working directory), so karma does:
# pipelines/backends/ggml_cpu.py.
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_VERSION="0.3.36"  # the llama-cpp-python pin of pyproject.toml's [llamacpp] extra
PY=${KARMA_BUILD_PYTHON:-.venv/bin/python}
case "${1:-}" in
  dispatch) CMAKE="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DCMAKE_INSTALL_BINDIR=llama_cpp/lib" ;;
  portable) CMAKE="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF" ;;
  *)
    echo "usage: build_llama_wheel.sh dispatch|portable" >&2
    exit 2
    ;;
esac
key=$(echo "$LLAMA_VERSION $CMAKE" | sha256sum | cut -c1-12)
DIR=${KARMA_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/karma/wheels}/llama-cpp-python-$LLAMA_VERSION-$key
wheel=$(ls "$DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2> /dev/null | head -n 1 || true)
if [[ -n "$wheel" ]]; then
  echo "$wheel"
  exit 0
fi
echo "[llama-wheel] building llama-cpp-python $LLAMA_VERSION ($1: $CMAKE) into $DIR" >&2
start=$(date +%s)
tmp="$DIR.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
# --no-cache-dir: never take pip's cached wheel of another recipe. --no-deps: the wheel alone.
CMAKE_ARGS="$CMAKE" "$PY" -m pip --disable-pip-version-check wheel -q --no-cache-dir --no-deps \
  --no-binary llama-cpp-python "llama-cpp-python==$LLAMA_VERSION" -w "$tmp"
rm -rf "$DIR"
mv "$tmp" "$DIR"
echo "[llama-wheel] built in $(($(date +%s) - start)) s" >&2
ls "$DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1
