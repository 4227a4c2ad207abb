#!/usr/bin/env bash
# `make demo`: one sample question answered without and with the causal graph, side by side, by the
# model that reads (qwen2.5-coder-1.5b through llama.cpp, loglik: karma ask's defaults), with the fact
# that decided it (scripts/demo.py). Offline: the graph is built on the fly from the other sample
# videos, the hybrid retriever uses the packaged all-MiniLM-L6-v2 embeddings.
# With arguments it is `karma ask ARGS` instead, e.g. `bash scripts/demo.sh --ckg off --show-prompt`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -gt 0 ]]; then
  exec .venv/bin/karma ask "$@"
fi
exec .venv/bin/python scripts/demo.py
