#!/bin/bash
# Builds and runs bench/cuda/l2_lines.cu on a machine with an NVIDIA GPU
# and nvcc: how a multiprocessor's strong load of a line of the L2 depends
# on the line (the L2's partitions), which the persistent simulation's
# bands' polls of the log meet (docs/simulations.md, session 30). Prints
# the device, date and commit with the figures.
#
#   scripts/device-l2-lines.sh [ARCH]     (default sm_90)
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/rk-l2-lines
nvcc -O2 -arch="${1:-sm_90}" bench/cuda/l2_lines.cu -o "$out"
date -u
"$out" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
