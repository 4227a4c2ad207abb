#!/usr/bin/env bash
# The main job on the embedded defaults: offline, sample data, packaged models.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/karma data stats data/sample
