#!/usr/bin/env bash
# Builds llama-cpp-python's wheel once per build recipe and keeps it outside the clone, so a fresh
# clone (CI) and every virtual environment on the machine reuse it. Prints the wheel's path (last line).
#
#   bash scripts/build_llama_wheel.sh dispatch   # several x86 CPU variants, the best picked at run time
#   bash scripts/build_llama_wheel.sh portable   # one AVX2/FMA/F16C build (GGML_NATIVE=OFF)
#
# Why not pip's own wheel cache: it is keyed by the source archive alone, not by CMAKE_ARGS, so a
# changed build recipe would silently get the old wheel back. Here the folder is
# ~/.cache/karma/wheels/llama-cpp-python-<version>-<hash of the recipe>/ (KARMA_WHEELS to put it
# elsewhere); the recipe is the version, the CMake arguments and the CPU variant list.
#
# Resumable: the source is unpacked and built in that folder's src/ and build/ (scikit-build-core's
# persistent build-dir), so a build that is killed goes on where it stopped when run again; they are
# deleted once the wheel is there. CMAKE_BUILD_PARALLEL_LEVEL (default 2) sets the compile jobs.
#
# dispatch: GGML_BACKEND_DL=ON builds each backend as a loadable module and GGML_CPU_ALL_VARIANTS=ON
# one CPU module per instruction-set level (libggml-cpu-haswell.so, -skylakex, -icelake, -zen4 ...),
# all installed next to libllama.so in llama_cpp/lib. ggml scores the modules against the CPU it
# runs on and loads the best one. llama-cpp-python 0.3.36 does not point ggml to that folder (ggml
# looks in the executable's folder and the working directory), so karma does:
# pipelines/backends/ggml_cpu.py.
#
# Which variants: each one compiles the whole CPU backend again (about 6 minutes on one busy core),
# and ggml's full x86 list has 14. KARMA_LLAMA_CPU_VARIANTS (default below) keeps the levels that
# change the kernels most: x64 (any x86-64: every machine loads something), haswell (AVX2/FMA, what
# the portable build is), skylakex (AVX-512), icelake (+VBMI, VNNI) and zen4 (+BF16: Zen 4/5 and
# Sapphire Rapids and later). A dropped level falls to the next lower kept one, e.g. cascadelake ->
# skylakex, alderlake (AVX-VNNI) -> haswell, sandybridge -> x64, sapphirerapids loses only AMX -> zen4.
# KARMA_LLAMA_CPU_VARIANTS=all builds ggml's list unchanged. The list is cut out of the vendored
# ggml/src/CMakeLists.txt of the unpacked source (the only change made to it), checked afterwards.
# KARMA_LLAMA_SDIST=<llama_cpp_python-<version>.tar.gz> uses a downloaded source archive instead of
# pip download; KARMA_LLAMA_PREPARE_ONLY=1 stops once the source is unpacked and cut (prints it).
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_VERSION="0.3.36"  # the llama-cpp-python pin of pyproject.toml's [llamacpp] extra
PY=${KARMA_BUILD_PYTHON:-.venv/bin/python}
VARIANTS=""
case "${1:-}" in
  dispatch)
    CMAKE="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DCMAKE_INSTALL_BINDIR=llama_cpp/lib"
    VARIANTS=${KARMA_LLAMA_CPU_VARIANTS:-x64 haswell skylakex icelake zen4}
    ;;
  portable) CMAKE="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF" ;;
  *)
    echo "usage: build_llama_wheel.sh dispatch|portable" >&2
    exit 2
    ;;
esac
# The portable key stays what it was before variants existed (the hash of version + CMake arguments).
recipe="$LLAMA_VERSION $CMAKE"
if [[ -n "$VARIANTS" && "$VARIANTS" != "all" ]]; then
  recipe="$recipe variants=$VARIANTS"
fi
key=$(echo "$recipe" | sha256sum | cut -c1-12)
DIR=${KARMA_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/karma/wheels}/llama-cpp-python-$LLAMA_VERSION-$key
wheel=$(ls "$DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2> /dev/null | head -n 1 || true)
if [[ -n "$wheel" ]]; then
  echo "$wheel"
  exit 0
fi
echo "[llama-wheel] building llama-cpp-python $LLAMA_VERSION ($1: $CMAKE${VARIANTS:+; CPU variants: $VARIANTS}) in $DIR" >&2
mkdir -p "$DIR"
[[ -f "$DIR/started" ]] || date +%s > "$DIR/started"  # a resumed build reports the time since the first start
start=$(cat "$DIR/started")
src="$DIR/src/llama_cpp_python-$LLAMA_VERSION"
if [[ ! -f "$src/.karma-ready" ]]; then
  rm -rf "$DIR/src" "$DIR/build"
  mkdir -p "$DIR/src"
  sdist=${KARMA_LLAMA_SDIST:-}
  if [[ -z "$sdist" ]]; then
    "$PY" -m pip --disable-pip-version-check download -q --no-deps --no-binary :all: \
      "llama-cpp-python==$LLAMA_VERSION" -d "$DIR/src"
    sdist="$DIR/src/llama_cpp_python-$LLAMA_VERSION.tar.gz"
  fi
  tar -xzf "$sdist" -C "$DIR/src"
  cmakelists="$src/vendor/llama.cpp/ggml/src/CMakeLists.txt"
  if [[ -n "$VARIANTS" && "$VARIANTS" != "all" ]]; then
    all=$(sed -n '/GGML_SYSTEM_ARCH STREQUAL "x86"/,/elseif/s/^ *ggml_add_cpu_backend_variant(\([a-z0-9_]*\).*/\1/p' "$cmakelists" | tr '\n' ' ')
    for v in $VARIANTS; do
      if [[ " $all" != *" $v "* ]]; then
        echo "[llama-wheel] KARMA_LLAMA_CPU_VARIANTS: '$v' is not one of ggml's x86 variants ($all)" >&2
        exit 2
      fi
    done
    for v in $all; do
      if [[ " $VARIANTS " != *" $v "* ]]; then
        sed -i "/^ *ggml_add_cpu_backend_variant($v[ )]/d" "$cmakelists"
      fi
    done
    kept=$(sed -n '/GGML_SYSTEM_ARCH STREQUAL "x86"/,/elseif/s/^ *ggml_add_cpu_backend_variant(\([a-z0-9_]*\).*/\1/p' "$cmakelists" | tr '\n' ' ')
    if [[ "$(echo $kept | tr ' ' '\n' | sort)" != "$(echo $VARIANTS | tr ' ' '\n' | sort)" ]]; then
      echo "[llama-wheel] cutting the variant list failed: kept '$kept', wanted '$VARIANTS'" >&2
      exit 2
    fi
  fi
  touch "$src/.karma-ready"
fi
if [[ -n "${KARMA_LLAMA_PREPARE_ONLY:-}" ]]; then  # stop with the source unpacked (and cut): its folder
  echo "$src"
  exit 0
fi
# --no-deps: the wheel alone. build-dir: scikit-build-core keeps CMake's build there (resumable).
CMAKE_ARGS="$CMAKE" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$PY" -m pip --disable-pip-version-check wheel -q --no-cache-dir --no-deps \
  -C build-dir="$DIR/build" "$src" -w "$DIR/out"
mv "$DIR"/out/llama_cpp_python-"$LLAMA_VERSION"-*.whl "$DIR/"
rm -rf "$DIR/out" "$DIR/src" "$DIR/build"
echo "[llama-wheel] built in $(($(date +%s) - start)) s since the first start (resumed runs included)" >&2
ls "$DIR"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1
