#!/bin/sh
# The CPU queue rows beside their floors with both threads pinned to chosen
# CPU pairs and unpinned, on the GPU machine's host (issue 17): how much of
# the one-at-a-time ratio is where the scheduler put the threads.
# Usage: scripts/device-cpu-pin.sh BUILD_DIR [MESSAGES] [ROUNDS]
set -u
b=${1:?build dir}; n=${2:-5000000}; r=${3:-3}
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node'
lscpu -e=CPU,CORE,SOCKET,NODE | head -20
for pair in none auto "1 2" "2 3" "1 9" "3 11" "1 15"; do
    echo "== qpin $pair"
    "$b/bench/bench_cpu" qpin $pair "$n" "$r"
done
# rk bench's own rows with its default pinning (--cpus auto) and without.
for cpus in auto none; do
    echo "== rk bench queue kernel --pairs 3 --cpus $cpus"
    "$b/tools/rk/rk" bench queue kernel --pairs 3 --cpus $cpus 2>&1 | grep -v "rk_kernel_call\|raw send"
done
