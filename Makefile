SHELL := /bin/bash
.PHONY: setup demo test lint

# Set up a fresh machine (idempotent).
setup:
	bash scripts/setup.sh

# The main job on the embedded defaults (offline, sample data).
demo: setup
	bash scripts/demo.sh

# The whole test suite (starts and stops a local Neo4j).
test:
	bash scripts/test.sh

lint: setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check .
