#!/usr/bin/env bash
# karma's local Neo4j 5.26 LTS Community server (no Docker): start | stop | status | install.
# First `start` assembles Neo4j and its Browser from Maven Central (Java 17 + Maven) into the
# git-ignored .cache/neo4j/home, binds 127.0.0.1 only (Bolt 7687, Browser http://127.0.0.1:7474/browser/)
# and waits until it answers; `stop` sends SIGTERM and waits. Both are idempotent. Details: docs/neo4j.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${KARMA_PYTHON_BIN:-.venv/bin/python}
if [[ ! -x $PY ]]; then
  echo "neo4j.sh: $PY not found; run 'bash scripts/setup.sh' first (or set KARMA_PYTHON_BIN)" >&2
  exit 1
fi
if [[ $# -lt 1 ]]; then
  echo "usage: bash scripts/neo4j.sh start|stop|status|install [--timeout SECONDS]" >&2
  exit 2
fi
exec "$PY" -m graph.neo4j "$@"
