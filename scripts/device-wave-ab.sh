#!/bin/bash
# The wave's seed table through two builds side by side on one GPU, in
# alternating rounds: BASE (an earlier commit's build, e.g. the hand-made
# showcase before the wave moved onto sim.h) and NEW, and NEW again under
# each variant (a string for RK_SIM_DEFINES, the library's tuning macros,
# where a word env:NAME=VALUE sets an environment variable instead; one
# with RK_SIM_TRACE=1 also writes trace-<name>-<round>.txt, read by
# scripts/sim-trace-summary.py).
# Then heat3d 64^3 through both builds, the CUDA simulation tests of NEW
# and, with SAN=1, compute-sanitizer on the persistent kernels.
# Everything lands in $OUT: seed-<name>-<round>.json, heat-<name>-<round>.txt,
# tests.log, san.log; a line per run on stdout.
#
#   scripts/device-wave-ab.sh BASE_BUILD NEW_BUILD [VARIANT ...]
#
# The wave's former hand-written persistent kernel, the rival the library
# is measured against, is commit 6cb29b4 (the last before the wave moved
# onto sim.h): git worktree add ../wave-showcase 6cb29b4, then
# cmake -S ../wave-showcase -B BASE_BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release
# and cmake --build BASE_BUILD --target rk heat3d_bench. Build both here and
# carry them (the binaries find their library by absolute path: keep the
# same path on the GPU machine, e.g. with a symlink).
#
# Environment: ROUNDS (default 3), SEED_ARGS (extra seed-table options),
# HEAT=0 (no heat3d), HEAT_VARIANTS=1 (heat3d under each variant too), TESTS=0 (no tests), SAN=1 (sanitizers), SEED=0 (no seed tables), OUT,
# TAR=FILE (everything in $OUT also packed into FILE after every stage: the device tool brings back only
# a few loose files, so give it $OUT_OF_THE_TOOL/r.tgz and keep OUT elsewhere, e.g. /tmp/r; a run cut off
# by the tool's time limit still returns the stages it finished), TEST_DEFINES (RK_SIM_DEFINES for the
# tests and the sanitizers: the tuning macros a change of defaults would set).
set -u
base=${1:?usage: device-wave-ab.sh BASE_BUILD NEW_BUILD [VARIANT ...]}
new=${2:?usage: device-wave-ab.sh BASE_BUILD NEW_BUILD [VARIANT ...]}
shift 2
out=${OUT:-$PWD/wave-ab-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-wave-ab-cache} CUDA_MODULE_LOADING=EAGER
pack() { [ -z "${TAR:-}" ] || tar czf "$TAR" -C "$out" .; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$out/device.txt"

variant() { # variant VARIANT: its macros in $defs, its env:NAME=VALUE words as NAME=VALUE in $envs
    defs= envs=
    for w in $1; do
        case "$w" in env:*) envs="$envs ${w#env:}" ;; *) defs="$defs $w" ;; esac
    done
}
seed() { # seed NAME BUILD VARIANT ROUND
    local start=$(date +%s%N)
    local trace=
    case "$3" in *RK_SIM_TRACE=1*) trace="$out/trace-$1-$4.txt" ;; esac
    variant "$3"
    env $envs RK_SIM_TRACE_FILE="$trace" RK_SIM_DEFINES="$defs" LD_LIBRARY_PATH="$2" timeout 240 "$2/tools/rk/rk" bench seed-table --backend cuda --json \
        ${SEED_ARGS:-} > "$out/seed-$1-$4.json" 2> "$out/seed-$1-$4.err"
    echo "seed $1 round $4: exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
}
heat() { # heat NAME BUILD ROUND [VARIANT]
    variant "${4:-}"
    env $envs RK_SIM_DEFINES="$defs" LD_LIBRARY_PATH="$2" timeout 120 "$2/examples/heat3d/heat3d_bench" cuda 64 200 \
        persistent,traditional > "$out/heat-$1-$3.txt" 2>&1
    echo "heat $1 round $3: exit $?"
}

[ "${SEED:-1}" = 1 ] || ROUNDS=0
for round in $(seq 1 "${ROUNDS:-3}"); do
    seed base "$base" "" "$round"
    seed new "$new" "" "$round"
    k=0
    for v in "$@"; do
        k=$((k + 1))
        echo "v$k = $v" > "$out/variant-v$k.txt"
        seed "v$k" "$new" "$v" "$round"
    done
    if [ "${HEAT:-1}" = 1 ]; then
        heat base "$base" "$round"
        heat new "$new" "$round"
        if [ "${HEAT:-1}" = 1 ] && [ "${HEAT_VARIANTS:-0}" = 1 ]; then
            k=0
            for v in "$@"; do
                k=$((k + 1))
                case "$v" in *RK_SIM_TRACE=1*) continue ;; esac
                heat "v$k" "$new" "$round" "$v"
            done
        fi
    fi
    pack
done

if [ "${TESTS:-1}" = 1 ]; then
    for t in tests/sim/test_sim_ordering_cuda tests/sim/test_sim_heat3d_cuda tests/sim/test_sim_inflight_cuda \
             tests/sim/test_sim_together_cuda tests/sim/test_sim_errors_cuda tests/showcase/test_showcase_wave_cuda; do
        [ -x "$new/$t" ] || { echo "$t: not built"; continue; }
        start=$(date +%s%N)
        RK_SIM_DEFINES="${TEST_DEFINES:-}" LD_LIBRARY_PATH="$new" timeout 120 "$new/$t" cuda >> "$out/tests.log" 2>&1
        echo "$t cuda: exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/tests-summary.txt"
        pack
    done
fi
if [ "${SAN:-0}" = 1 ]; then
    # The persistent kernels under compute-sanitizer: the wave's (the demo,
    # short), heat3d's (a small bench) and the ordering mix's.
    san() { # san TOOL NAME COMMAND...
        local tool=$1 name=$2
        shift 2
        RK_SIM_DEFINES="${TEST_DEFINES:-}" LD_LIBRARY_PATH="$new" timeout 240 compute-sanitizer --tool "$tool" "$@" > "$out/san-$tool-$name.log" 2>&1
        echo "$tool $name: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san-$tool-$name.log" | tail -1))" | tee -a "$out/san-summary.txt"
        pack
    }
    # The seed table's racecheck and the showcase test's memcheck run past 240 s: SAN_SEED=1 adds them.
    [ "${SAN_SEED:-0}" = 1 ] && san racecheck seed-table "$new/tools/rk/rk" bench seed-table --backend cuda --quick
    san racecheck heat3d "$new/examples/heat3d/heat3d_bench" cuda 16 20 persistent
    san racecheck wave "$new/tools/rk/rk" demo wave --backend cuda --size 128 --frames 20 --no-tty --no-calibrate
    # the launch-per-command patterns under racecheck trip the test's 60 s wait (a hang, H200, session 22)
    RK_SIM_TEST_PATTERN=persistent san racecheck sim-ordering "$new/tests/sim/test_sim_ordering_cuda" cuda
    san memcheck heat3d "$new/examples/heat3d/heat3d_bench" cuda 16 20 persistent
    san memcheck wave "$new/tools/rk/rk" demo wave --backend cuda --size 128 --frames 20 --no-tty --no-calibrate
    [ "${SAN_SEED:-0}" = 1 ] && san memcheck showcase-wave "$new/tests/showcase/test_showcase_wave_cuda" cuda
    san memcheck sim-ordering "$new/tests/sim/test_sim_ordering_cuda" cuda
fi
pack
