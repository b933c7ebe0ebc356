#!/bin/bash
# Builds and runs bench/cuda/host_poll.cu on a machine with an NVIDIA GPU
# and nvcc: a host thread and one GPU warp in ping-pong through host-mapped
# memory, the warp polling with one read in flight or with reads of several
# copies of the host's word in flight (docs/simulations.md, session 19).
# Prints the device, date and commit with the figures; exits 77 without a GPU.
#
#   scripts/device-host-poll.sh [ARCH]     (default sm_90)
set -eu
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/rk-host-poll
nvcc -O2 -std=c++17 -arch="${1:-sm_90}" bench/cuda/host_poll.cu -o "$out"
"$out" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
