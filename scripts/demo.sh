#!/usr/bin/env bash
# Builds fabmem and runs the main job: the demo, each step printed.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")"/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
exec ./build/examples/model_demo
