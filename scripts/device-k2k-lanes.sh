#!/bin/bash
# Issue 14's throughput (>= 100 M msg/s device only through the 4-stage
# chain) with the lanes of src/device/cuda/channel_lanes.cu, on the GPU
# machine, in one call of at most ~3 minutes: `rk bench k2k` of main's build
# (BASE_DIR) beside this branch's (NEW_DIR), rounds alternated, at 15 warps
# a stage (the lanes by default there) and the branch at one warp (its hop);
# LANES_VARIANTS adds branch variants to each round ("LABEL=NAME=VALUE,...",
# space-separated, e.g. "resv=RK_CUDA_RING_DEFINES=RK_LANES_RESV"); then the
# branch's tests at 15 warps a stage (LANES_TEST_ENV: "NAME=VALUE ..." for
# them): the chain, test_k2k_stream with 10 M messages, errors, terminate,
# loop, the relay into CUDA, the conformance suite's channel checks (all
# sharing one module cache, so each handler compiles once); then, if time
# is left, the RK_LANES_PROFILE measurement (cycles a lanes pass spends
# where, per stage: "lanes-prof" lines) of the branch and of each variant.
#   (here)   git archive <main> | tar -x -C build-base-src
#            cmake -S build-base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-base rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay
#   (device) scripts/device-k2k-lanes.sh [NEW_DIR [BASE_DIR]]   carry: build-rel build-base
# A "block of 16 warps" is 15 workers and the control warp: the most that
# keep 128 registers a thread (cuda_ring_layout.h, RK_CUDA_MAX_ORDERED_WARPS).
# Success: every test exits 0; the branch's 15-warp rows show "device only"
# >= 100 M msg/s (issue 14; main: 89.6-90.2 M, session 14) and one1 keeps
# main's hop (1.04-1.09 us; the one-warp kernel has no lanes).
# LANES_ROUNDS (default 2) rounds; LANES_BUDGET_S (default 150): steps not
# started by then are skipped. LANES_RACECHECK=1 adds compute-sanitizer's
# racecheck of test_k2k_chain at 15 warps a stage after the tests.
# Session 15's calls: lanes-1..3 in device-runs.md ("session 15: lanes"); session 16's: "session 16: lanes".
set -u
unset RK_CUDA_K2K_LANES RK_CUDA_ORDERED_WARPS RK_CUDA_RING_DEFINES
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
new=${1:-build-rel}
base=${2:-build-base}
budget=${LANES_BUDGET_S:-150}
out_dir=${OUT:-/tmp/k2k-lanes-out}
mkdir -p "$out_dir"
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
echo "=== commit $(git log --oneline -1 2>/dev/null)"
run() { # run LABEL LIMIT COMMAND...
    local label=$1 limit=$2
    shift 2
    if [ "$SECONDS" -gt "$budget" ]; then
        echo "=== $label: skipped (budget)"
        return
    fi
    # Never past the call's hard limit (LANES_HARD_S, default 172 s).
    local left=$((${LANES_HARD_S:-172} - SECONDS))
    [ "$left" -lt "$limit" ] && limit=$left
    echo "=== $label: $* ($SECONDS s, limit $limit s)"
    timeout -k 2 "$limit" "$@" 2>&1 | tail -"${RUN_TAIL:-3}"
    echo "=== $label: exit ${PIPESTATUS[0]}"
}
w15=RK_CUDA_ORDERED_WARPS=15
ab() { # ab FILE VARIANT...: device-k2k-ab.sh, its summary here, everything in $out_dir/FILE
    local file=$1
    shift
    K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-25} scripts/device-k2k-ab.sh "$@" > "$out_dir/$file" 2>&1
    grep -A20 'A/B summary' "$out_dir/$file" | grep -v '^=== k2k'
}
# A variant "LABEL=NAME=VALUE,...": a '+' in a value stands for a space
# (RK_CUDA_RING_DEFINES=A+B: two macros).
variant() { local v=${1//+/ }; echo "${v%%=*}=$new,$w15,${v#*=}"; }
variants=()
for v in ${LANES_VARIANTS:-}; do variants+=("$(variant "$v")"); done
specs=()
for ((r = 0; r < ${LANES_ROUNDS:-2}; r++)); do
    round=()
    # LANES_FIXED: which of main's and the branch's own rows each round has (default both).
    [[ " ${LANES_FIXED:-main lanes} " == *" main "* ]] && round+=(main15="$base",$w15)
    [[ " ${LANES_FIXED:-main lanes} " == *" lanes "* ]] && round+=(lanes15="$new",$w15)
    round+=("${variants[@]}")
    # Odd rounds in reverse: no variant always runs first or last.
    if ((r % 2)); then for ((i = ${#round[@]} - 1; i >= 0; i--)); do specs+=("${round[i]}"); done
    else specs+=("${round[@]}"); fi
done
# LANES_ONCE: variants run once, after the rounds (same form).
for v in ${LANES_ONCE:-}; do specs+=("$(variant "$v")"); done
echo "=== A/B ($SECONDS s)"
ab ab.txt "${specs[@]}" one1="$new"
export RK_CUDA_ORDERED_WARPS=15
for e in ${LANES_TEST_ENV:-}; do export "${e//+/ }"; done
echo "=== tests at 15 warps, ${LANES_TEST_ENV:-the defaults} ($SECONDS s)"
t="$new/tests/k2k"
# LANES_TESTS: which of them (default all).
want() { [[ " ${LANES_TESTS:-chain stream errors terminate loop relay conformance} " == *" $1 "* ]]; }
want chain && run "chain, 15 warps" 30 "$t/test_k2k_chain" cuda
want stream && run "stream 10 M, 15 warps" 30 "$t/test_k2k_stream" cuda 10000000
want errors && run "errors, 15 warps" 30 "$t/test_k2k_errors" cuda
want terminate && run "terminate, 15 warps" 30 "$t/test_k2k_terminate" cuda
want loop && run "loop, 15 warps" 20 "$t/test_k2k_loop" cuda
want relay && run "relay to cuda, 15 warps" 20 "$t/test_k2k_relay" to cuda
want conformance && RUN_TAIL=14 run "conformance channel checks, 15 warps" 45 env LD_LIBRARY_PATH="$new" "$new/tools/rk/rk" \
    conformance --backend cuda --check channel --timeout 20
# LANES_RACECHECK=1: compute-sanitizer racecheck of the chain at 15 warps a
# stage (4 messages; line numbers from RK_CUDA_LINEINFO), its summary here.
if [ -n "${LANES_RACECHECK:-}" ] && command -v compute-sanitizer > /dev/null; then
    RUN_TAIL=12 run "racecheck, chain, 15 warps" 75 sh -c "RK_CUDA_LINEINFO=1 compute-sanitizer --tool racecheck \
        --error-exitcode 9 --print-limit 20 --log-file $out_dir/racecheck-chain.log $t/test_k2k_chain cuda 4 \
        > /dev/null 2>&1; rc=\$?; grep -E 'RACECHECK SUMMARY|Error|Warning|at .*channel' $out_dir/racecheck-chain.log \
        | head -12; exit \$rc"
fi
# Where a lanes pass's cycles go, per stage (printed by each kernel as it ends).
unset RK_CUDA_RING_DEFINES
profile() { # profile LABEL EXTRA_DEFINES
    RUN_TAIL=14 run "profile $1, 15 warps" 30 env RK_CUDA_RING_DEFINES="RK_LANES_PROFILE $2" LD_LIBRARY_PATH="$new" \
        sh -c "$new/tools/rk/rk bench k2k --backend cuda --messages 1000000 > $out_dir/prof-$1.txt 2>&1; \
        rc=\$?; grep -E 'lanes-prof |device only  ' $out_dir/prof-$1.txt | cut -c1-330; exit \$rc"
}
# LANES_PROFILE: "LABEL=MACRO+MACRO ..." (default "lanes=": the branch as built; "none": no profile).
for v in ${LANES_PROFILE:-lanes=}; do
    [ "$v" = none ] && break
    d=${v#*=}
    profile "${v%%=*}" "${d//+/ }"
done
echo "=== done ($SECONDS s)"
