#!/usr/bin/env bash
# Runs karma's whole test suite on this machine: sets up what is missing (idempotent), starts the
# local Neo4j server the graph-store tests use, runs pytest, and stops Neo4j again if it started it
# (a server that was already running, e.g. one open in Neo4j Browser, is left running).
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
  exit 1
fi
exit $rc
