#!/bin/bash
# Builds and runs bench/cuda/host_reads.cu on a machine with an NVIDIA GPU
# and nvcc: how a warp's loads of host-mapped memory overlap, the facts the
# persistent simulations' relay is built around (docs/simulations.md,
# session 19). Prints the device, date and commit with the figures.
#
#   scripts/device-host-reads.sh [ARCH]     (default sm_90)
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/rk-host-reads
nvcc -O2 -arch="${1:-sm_90}" bench/cuda/host_reads.cu -o "$out"
"$out" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
