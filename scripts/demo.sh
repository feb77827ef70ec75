#!/usr/bin/env bash
# Builds fabmem and runs the main job, each step printed:
#   1. the two-process fabric demo: an exporter writes a pattern into 2 MiB of
#      fabric memory and ships the 64-byte handle through a pipe; an importer
#      maps it, checks the pattern and writes a reply the exporter then reads;
#   2. the same exchange written purely against NVIDIA's cuda.h, run on the
#      driver emulation (lib/fabmem/libcuda.so.1).
# A fabmemd for this user starts on demand and leaves by itself when idle.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")"/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo "== fabmem: two processes share memory through a fabric handle =="
./build/examples/fabric_demo
echo
echo "== the same, as an unmodified cuda.h program on the driver emulation =="
./build/examples/cuda_fabric_exchange
