#!/bin/bash
# Issue 17's ratios on the GPU machine in one call (about 3 minutes): `rk
# bench queue kernel --pairs 5` (the CPU rows, each beside its floor, five
# alternated pairs, the median pair) and `rk bench cuda` (the CUDA round
# trip beside the tagged-word ping-pong), RUNS times each, as JSON under
# $OUT with a one-line-per-row summary.
#   (here)   cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-rel rk
#   (device) scripts/device-ratios.sh BUILD_DIR [RUNS]       carry: BUILD_DIR (no object files)
# Success: errors 0 everywhere; vs_floor: one at a time >= 0.5, batches
# >= 0.8, the pipelined ring kernel row >= 0.5, the CPU round trip <= 2.5,
# the CUDA round trip <= 1.2 (its p99 <= 2x the floor's: in the note).
set -u
build=${1:?build dir}
runs=${2:-2}
out=${OUT:-/tmp/device-ratios}
mkdir -p "$out"
export LD_LIBRARY_PATH=$build CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=/tmp/rk-ratios-cache
date -u
echo "cores $(nproc), $(grep -m1 'model name' /proc/cpuinfo), $(uptime)"
summary() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("commit", d.get("commit"), "|", d.get("date"), "|", d.get("device"))
for r in d.get("results") or []:
    n = r.get("name") or ""
    if "client" in n or "raw send" in n:
        continue
    v = r.get("vs_floor")
    print("  %-66s %9.4g/s p50 %-7s p99 %-7s vs_floor %-6s errors %s  %s" % (n[:66], r.get("messages_per_second") or 0,
          r.get("p50_us"), r.get("p99_us"), "%.2f" % v if v is not None else "-", r.get("errors"), (r.get("note") or "")[:110]))
PY
}
for i in $(seq 1 "$runs"); do
    echo "=== cpu run $i"
    timeout 240 "$build/tools/rk/rk" bench queue kernel --pairs 5 --json > "$out/cpu-$i.json" 2> /dev/null
    echo "exit $?"
    summary "$out/cpu-$i.json"
    echo "=== cuda run $i"
    timeout 120 "$build/tools/rk/rk" bench cuda --json > "$out/cuda-$i.json" 2> /dev/null
    echo "exit $?"
    summary "$out/cuda-$i.json"
done
