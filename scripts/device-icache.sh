#!/bin/bash
# Builds and runs bench/cuda/icache.cu on a machine with an NVIDIA GPU
# and nvcc: how fast a warp runs code it has not run lately (the i-cache), a fact the
# persistent simulations' relay is built around (docs/simulations.md,
# session 20). Prints the device, date and commit with the figures.
#
#   scripts/device-icache.sh [ARCH]     (default sm_90)
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/rk-icache
nvcc -O2 -arch="${1:-sm_90}" bench/cuda/icache.cu -o "$out"
"$out" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
