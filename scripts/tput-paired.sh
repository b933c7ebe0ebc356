#!/bin/bash
# Paired measurement of the batched ring-kernel row (`bench_cpu tput`: the
# persistent 64-byte throughput in batches of 256, right after its floor,
# every reply checked) with two libraries, alternated, on one machine.
#
#   scripts/tput-paired.sh BASE_BUILD NEW_BUILD [PAIRS] [MESSAGES]
#
# BASE_BUILD and NEW_BUILD are Release build trees (cmake
# -DCMAKE_BUILD_TYPE=Release). NEW_BUILD's bench_cpu runs both times; the
# library comes from BASE_BUILD (LD_LIBRARY_PATH) or from NEW_BUILD (its
# runpath). Defaults: 20 pairs of 2 M messages.
#
# On a shared machine each single ratio swings widely (the floor and the row
# run a fraction of a second apart and meet different loads), so it runs
# many short pairs under `nice -n -10` (when allowed) and prints the medians
# and quartiles of each side's own ratios, and how many pairs the new
# library won (its ratio over base's ratio in the same pair).
set -u
base=${1:?BASE_BUILD}
new=${2:?NEW_BUILD}
pairs=${3:-20}
msgs=${4:-2000000}
prog=$new/bench/bench_cpu
[ -x "$prog" ] || { echo "no $prog: build bench_cpu in $new first" >&2; exit 1; }
nice_cmd=()
nice -n -10 true 2>/dev/null && nice_cmd=(nice -n -10)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
date -u
echo "cores $(nproc), $(grep -m1 'model name' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
for i in $(seq 1 "$pairs"); do
    for side in base new; do
        if [ $side = base ]; then
            line=$(LD_LIBRARY_PATH="$base" "${nice_cmd[@]}" "$prog" tput "$msgs") || failed=1
        else
            line=$("${nice_cmd[@]}" "$prog" tput "$msgs") || failed=1
        fi
        echo "$side $line" | tee -a "$log"
    done
done
# Each line ends "... ratio R"; the kernel's rate is the figure after "256:".
awk '
    { side = $1; r[side, ++n[side]] = $NF
      for (f = 2; f < NF; f++) if ($f == "256:") k[side, n[side]] = $(f + 1)
      if ($0 !~ /errors 0\)/) bad++ }
    function median(arr, side, cnt,   i, j, t, v) {
        for (i = 1; i <= cnt; i++) v[i] = arr[side, i]
        for (i = 2; i <= cnt; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        q1 = v[int((cnt + 3) / 4)]; q3 = v[int((3 * cnt + 1) / 4)]
        return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
    }
    END {
        for (s = 0; s < 2; s++) {
            side = s ? "new" : "base"
            m = median(r, side, n[side]); a = q1; b = q3
            printf "%-4s ratio median %.2f (quartiles %.2f-%.2f), kernel median %.1f M msg/s, %d runs\n",
                   side, m, a, b, median(k, side, n[side]), n[side]
        }
        wins = 0
        for (i = 1; i <= n["new"] && i <= n["base"]; i++) wins += r["new", i] > r["base", i]
        printf "new ratio above base ratio in %d of %d pairs; lines without errors 0: %d\n", wins, n["new"], bad + 0
        exit bad > 0
    }' "$log" || failed=1
exit $failed
