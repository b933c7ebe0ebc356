#!/bin/bash
# Issue 17 on the GPU machine's 16-core host, in one call (about 5 minutes):
# Release builds of a new tree and of a base commit, then `rk bench queue
# kernel --json` of each, alternated REPS times (floors and library in the
# same process: the ratios are what to read), then the persistent round trip
# alone and the persistent 64-byte throughput alone (bench_cpu rtt / tput,
# the new tree's program, each right after its floor) with either library,
# in turn.
#
#   (device) scripts/device-floor.sh [BASE_COMMIT] [REPS] [NEW_COMMIT]
#
# Defaults: base 867bfa4, 3 reps, new = this working tree. NEW_COMMIT (any
# commit or branch of this repository, e.g. a helper's branch that is not
# checked out here) is built from `git archive` like the base.
#
# The GPU machine has no libffi headers, so build on the development
# machine and carry the builds: REPS 0 only builds (base and new, Release,
# rk and bench_cpu) into $RK_FLOOR_WORK and exits. In /work/main, for
# example:
#
#   RK_FLOOR_WORK=build-floorwork scripts/device-floor.sh c293fb4 0 s9-floor
#   (device, carry build-floorwork)
#   RK_FLOOR_WORK=build-floorwork scripts/device-floor.sh c293fb4 3 s9-floor
#
# Success: every run exits 0 with errors 0; in the new runs, the medians of
# "round trip persistent" vs_floor <= 2.5, "spsc queue ... batches" >= 0.8,
# "one at a time" >= 0.5, "ring kernel persistent, 64 B" >= 0.5 (the
# bench_cpu lines print the same ratios: "ratio").
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-867bfa4}
reps=${2:-3}
newrev=${3:-}
out=${OUT:-/tmp/device-floor}
work=${RK_FLOOR_WORK:-/tmp/rk-floor}
mkdir -p "$out" "$work"
export RK_CACHE_DIR=$work/cache
date -u
echo "cores $(nproc), $(grep -m1 'model name' /proc/cpuinfo)"
uptime

build() { # build SRC DIR
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$2.log" 2>&1 &&
        cmake --build "$2" -j "$(nproc)" --target rk bench_cpu >> "$2.log" 2>&1 || {
        echo "build of $1 failed:"
        tail -20 "$2.log"
        exit 1
    }
}
# Builds already in $work (a second call on a warm machine) are reused.
if [ ! -x "$work/base/tools/rk/rk" ]; then
    rm -rf "$work/base-src" && mkdir -p "$work/base-src"
    git -C "$root" archive "$base" | tar -x -C "$work/base-src" || exit 1
    build "$work/base-src" "$work/base"
fi
if [ ! -x "$work/new/tools/rk/rk" ]; then
    if [ -n "$newrev" ]; then
        rm -rf "$work/new-src" && mkdir -p "$work/new-src"
        git -C "$root" archive "$newrev" | tar -x -C "$work/new-src" || exit 1
        build "$work/new-src" "$work/new"
    else
        build "$root" "$work/new"
    fi
fi
echo "built: new ${newrev:-this tree at} $(git -C "$root" rev-parse --short "${newrev:-HEAD}"), base $base"
[ "$reps" -gt 0 ] || exit 0

summary() {
    if ! command -v python3 > /dev/null; then
        grep -E '"(name|messages_per_second|p50_us|vs_floor|errors)"' "$1"
        return
    fi
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("commit", d.get("commit"), "|", d.get("host_cpu"))
for r in d.get("results") or []:
    n = r.get("name") or ""
    if "client" in n or "raw send" in n:
        continue
    print("  %-48s %10.4g/s p50 %-8s vs_floor %-8s errors %s" % (n, r.get("messages_per_second") or 0,
          r.get("p50_us"), "%.3f" % r["vs_floor"] if r.get("vs_floor") is not None else "-", r.get("errors")))
PY
}
for i in $(seq 1 "$reps"); do
    for which in base new; do
        echo "=== $which run $i"
        LD_LIBRARY_PATH=$work/$which timeout 300 "$work/$which/tools/rk/rk" bench queue kernel --json \
            > "$out/$which-$i.json" 2> "$out/$which-$i.err"
        echo "exit $?"
        summary "$out/$which-$i.json"
    done
done
for i in $(seq 1 "$reps"); do
    for which in base new; do
        echo "=== rtt, tput $which $i"
        LD_LIBRARY_PATH=$work/$which timeout 120 "$work/new/bench/bench_cpu" rtt 200000
        LD_LIBRARY_PATH=$work/$which timeout 120 "$work/new/bench/bench_cpu" tput 10000000
    done
done
