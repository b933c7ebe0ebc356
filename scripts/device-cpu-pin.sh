#!/bin/sh
# The CPU queue rows beside their floors on the GPU machine's host (issue
# 17): pinned to chosen CPU pairs or not, and with each number of pauses a
# waiting side makes between looks ($RK_BENCH_RING_PAUSES, bench_cpu.h).
# Usage: scripts/device-cpu-pin.sh BUILD_DIR [MESSAGES] [ROUNDS] [PAIRS] [PAUSES]
#   PAIRS:  e.g. "none auto 1,2 1,9" (default "none auto")
#   PAUSES: e.g. "1 4 16 64" (default: the build's own)
set -u
b=${1:?build dir}; n=${2:-5000000}; r=${3:-3}; pairs=${4:-none auto}; pauses=${5:-default}
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node'
for p in $pauses; do
    for pair in $pairs; do
        echo "== pauses $p, qpin $pair"
        if [ "$p" = default ]; then
            "$b/bench/bench_cpu" qpin $(echo "$pair" | tr , ' ') "$n" "$r"
        else
            RK_BENCH_RING_PAUSES=$p "$b/bench/bench_cpu" qpin $(echo "$pair" | tr , ' ') "$n" "$r"
        fi
    done
done
