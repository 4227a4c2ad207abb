#!/usr/bin/env bash
# The main job on the embedded defaults, offline: answer the first question of the synthetic sample
# data with SmolLM2 (llama.cpp, packaged weights), the causal graph built on the fly from the other
# sample videos, and the hybrid retriever (packaged all-MiniLM-L6-v2 embeddings + FAISS).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/karma ask "$@"
