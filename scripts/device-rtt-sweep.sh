#!/bin/bash
# Issue 17's CUDA round trip against its floor under the ring template's
# tuning macros, in one call (about 3-4 minutes): `rk bench cuda --json`
# (the tagged-word floor, then the ring's rows) once per setting of
# $RK_CUDA_RING_DEFINES, alternated in ROUNDS rounds; a line per run with
# the floor, the ring's p50/p99 and their ratio, then medians per setting.
#   (here)   ninja -C build-rel rk
#   (device) scripts/device-rtt-sweep.sh BUILD_DIR ROUNDS "SETTING" ...   carry: BUILD_DIR
# A SETTING is "" (the defaults) or "A=1 B=2" (macros of src/device/cuda/ring.cu).
set -u
build=${1:?build dir}; rounds=${2:?rounds}; shift 2
out=${OUT:-/tmp/rtt-sweep}
mkdir -p "$out"
export LD_LIBRARY_PATH=$build CUDA_MODULE_LOADING=EAGER
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
for r in $(seq 1 "$rounds"); do
    i=0
    for setting in "$@"; do
        i=$((i + 1))
        f="$out/rtt-$i-$r.json"
        RK_CACHE_DIR=/tmp/rtt-cache-$i RK_CUDA_RING_DEFINES="$setting" timeout 90 "$build/tools/rk/rk" bench cuda --json > "$f" 2> /dev/null
        python3 - "$f" "$i" "$setting" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rows = {r["name"]: r for r in d.get("results") or []}
fl = rows.get("floor: tagged-word ping-pong, mapped memory", {}); rt = rows.get("round trip persistent, 64 B", {})
iso = rows.get("round trip persistent, isolated", {})
print("setting %s [%s]: floor %.3f/%.3f  ring %.3f/%.3f  x%.3f p99 x%.2f  isolated %.3f  errors %s" % (sys.argv[2], sys.argv[3],
      fl.get("p50_us", 0), fl.get("p99_us", 0), rt.get("p50_us", 0), rt.get("p99_us", 0), rt.get("vs_floor") or 0,
      (rt.get("p99_us", 0) / fl["p99_us"]) if fl.get("p99_us") else 0, iso.get("p50_us", 0), rt.get("errors")))
PY
    done
done | tee "$out/sweep.txt"
python3 - "$out/sweep.txt" <<'PY'
import re, sys, statistics
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"setting (\d+) \[(.*)\]: .* x([\d.]+) p99 x([\d.]+)\s+isolated ([\d.]+)", line)
    if m: runs.setdefault((int(m.group(1)), m.group(2)), []).append((float(m.group(3)), float(m.group(4)), float(m.group(5))))
for (i, s), v in sorted(runs.items()):
    print("median %d [%s]: p50 x%.3f  p99 x%.2f  isolated %.3f us  (%d runs)" % (i, s, statistics.median(a for a, _, _ in v),
          statistics.median(b for _, b, _ in v), statistics.median(c for _, _, c in v), len(v)))
PY
