#!/bin/bash
# Issue 14's per-hop latency (one warp a stage, the lean loop of
# src/device/cuda/channel_solo.cu) on the GPU machine, in one call of about
# three minutes: `rk bench k2k --backend cuda` alternated between main's
# build and the branch's (and optional candidates), ROUNDS rounds, so every
# figure has its base beside it from the same card; then the branch's CUDA
# K2K tests and the conformance suite's channel checks.
#   (here)   git archive <main> | tar -x -C /tmp/hop/base-src
#            cmake -S /tmp/hop/base-src -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-base rk
#            cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-rel rk test_k2k_chain test_k2k_loop test_k2k_stream test_k2k_terminate \
#                test_k2k_errors test_k2k_relay test_k2k_nvrtc
#            mkdir -p build-micro && nvcc -O3 -arch=sm_90 -std=c++17 -o build-micro/cuda_k2k_chain \
#                bench/cuda_k2k_chain.cu    (optional: the floor's rows printed first)
#   (device) scripts/device-k2k-hop.sh [BASE_DIR [NEW_DIR [ROUNDS [CANDIDATE=DIR[,ENV=V...] ...]]]]
#            carry: build-base build-rel (and any candidate's build; build-micro if built)
# Each candidate is a label, a build and settings, as scripts/device-k2k-ab.sh
# takes them; the lean loop's variants are template macros set per run
# through RK_CUDA_RING_DEFINES (space-separated, so one NVRTC module each),
# e.g. noarm=build-rel,RK_CUDA_RING_DEFINES=RK_LEAN_ARMED=0 (the lean loop without its armed begin)
# (one argument); each joins every round, after base and new.
# K2K_MESSAGES (default 200000) per bench run; STAGES_ONLY=1: the benches
# only (no tests after them). Session 13 ran it twice, about 70 s each with
# five variants.
# TEST_DEFINES (optional): RK_CUDA_RING_DEFINES for a second gate and for
# every test after the benches (a candidate's macros, tested as it ran).
# MICRO_VARIANTS: the microbenchmark's rows (default 0,2,13,15).
# Success: every test passes and the summary's "new" (or candidate) rows
# show a per hop p50 below base's in every round (issue 14: <= 1 us); the
# "one kernel" figure each row's note prints is what the hop subtracts
# (same run).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
base=${1:-build-base}
new=${2:-build-rel}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
extra=("$@")
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
echo "=== commit $(git log --oneline -1 2>/dev/null)"
# Binaries and CTest files name the development machine's source paths.
for b in "$base" "$new"; do
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null)
    [ -n "$src" ] && [ ! -e "$src" ] && mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
done
failed=0
# The floor beside the chain (bench/cuda_k2k_chain.cu, when built): device
# hops of the floor's layout, the lean loop's, and the coalesced one.
if [ -x build-micro/cuda_k2k_chain ]; then
    echo "=== floor: build-micro/cuda_k2k_chain 5000 1 ${MICRO_VARIANTS:-0,2,13,15}"
    timeout 30 build-micro/cuda_k2k_chain 5000 1 "${MICRO_VARIANTS:-0,2,13,15}" 2>&1 | tail -6
fi
# HOP_PROBE=1 (session 16, hop-1): where the library's hop goes, before the A/B.
#  1. the library's chain traced (RK_LEAN_TRACE: each lean pass's stamps and
#     a source's planned host passes, each kernel's SM; raw lines in
#     $OUT/lib-trace.log, scripts/k2k-hop-trace.awk summarizes them);
#  2. the microbenchmark's hop with its four stages on chosen SMs: a map (every
#     hop between SM pair 2f,2f+1 and pair 2j,2j+1, f = 0 and the library
#     source's pair), then the floor and the library-like variant on the
#     library's own SMs and on other sets;
#  3. the SASS of the stage's and sink's NVRTC cubins (build-micro/*.cubin,
#     built on the development machine) and of the microbenchmark.
# HOP_PROBE=trace: step 1 only.
if [ "${HOP_PROBE:-0}" = 1 ] || [ "${HOP_PROBE:-0}" = trace ]; then
    od=${OUT:-/tmp/hop-probe}
    mkdir -p "$od"
    echo "=== trace: RK_CUDA_RING_DEFINES=RK_LEAN_TRACE rk bench k2k --messages 20000"
    RK_CACHE_DIR=/tmp/rk-lt-cache RK_CUDA_RING_DEFINES=RK_LEAN_TRACE LD_LIBRARY_PATH="$new" timeout -k 5 60 \
        "$new/tools/rk/rk" bench k2k --backend cuda --messages 20000 > "$od/lib-trace.log" 2>&1
    echo "=== trace: exit $?"
    grep -E '^k2k +4-stage chain, K2K channels \(per hop\)' "$od/lib-trace.log"
    grep -E '^rk-lt exit' "$od/lib-trace.log" | head -12
    [ -f scripts/k2k-hop-trace.awk ] && awk -f scripts/k2k-hop-trace.awk "$od/lib-trace.log"
    # The chain's SMs in stage order: its first four kernels with a channel.
    libsms=$(awk 'BEGIN {n = 0} /^rk-lt exit/ && ($6 != "0" || $8 != "0") && n < 4 {sm[n] = $4; i[n] = $6; o[n] = $8; n++}
        END {c = -1; for (k = 0; k < n; k++) if (i[k] == "0") c = k
             s = ""; for (h = 0; h < 4 && c >= 0; h++) {s = s (h ? "," : "") sm[c]; x = -1
                 for (k = 0; k < n; k++) if (i[k] == o[c] && o[c] != "0") x = k; c = x}
             print s}' "$od/lib-trace.log")
    echo "=== the library's chain ran on SMs $libsms"
fi
if [ "${HOP_PROBE:-0}" = 1 ]; then
    if [ -x build-micro/cuda_k2k_chain ]; then
        first=${libsms%%,*}
        src_tpc=$(( ${first:-0} / 2 ))
        echo "=== map: build-micro/cuda_k2k_chain map 1 3000 0 $src_tpc"
        timeout 60 build-micro/cuda_k2k_chain map 1 3000 0 "$src_tpc" 2>&1 | tee "$od/map.log" | cut -c1-2000
        sets="adj=124,126,128,130;near=0,2,4,6;spread=0,40,80,120"
        [ -n "$libsms" ] && sets="lib=$libsms;$sets"
        echo "=== sets: CHAIN_SETS=$sets build-micro/cuda_k2k_chain 5000 1 1,6,7"
        CHAIN_SETS="$sets" timeout 90 build-micro/cuda_k2k_chain 5000 1 1,6,7 2>&1 | tee "$od/sets.log"
    fi
    sass=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
    echo "=== sass: ${sass:-no cuobjdump}"
    if [ -n "$sass" ]; then
        for f in build-micro/*.cubin; do [ -f "$f" ] && "$sass" -sass "$f" | gzip > "$od/$(basename "$f" .cubin).sass.gz"; done
        "$sass" -sass build-micro/cuda_k2k_chain 2>/dev/null | gzip > "$od/micro.sass.gz"
        ls -la "$od"/*.sass.gz
    fi
fi
run() { # run LABEL LIMIT COMMAND...
    local label=$1 limit=$2
    shift 2
    echo "=== $label: $*"
    LD_LIBRARY_PATH="$new" timeout -k 5 "$limit" "$@" 2>&1 | tail -${RUN_TAIL:-3}
    local rc=${PIPESTATUS[0]}
    echo "=== $label: exit $rc"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && failed=1
}
# The gate: the 4-stage chain with the branch (also compiles its handlers).
run gate 60 "$new/tests/k2k/test_k2k_chain" cuda
solo=()
if [ -n "${TEST_DEFINES:-}" ]; then
    solo=(env RK_CUDA_RING_DEFINES="$TEST_DEFINES")
    run "gate (RK_CUDA_RING_DEFINES=$TEST_DEFINES)" 30 "${solo[@]}" "$new/tests/k2k/test_k2k_chain" cuda
fi
variants=()
for ((r = 0; r < rounds; r++)); do variants+=(base="$base" new="$new" "${extra[@]}"); done
# The whole A/B output to a file ($OUT when set); here a line per run (the
# chain's end-to-end p50 and the one kernel's beside the hop), then the summary.
ab=${OUT:-$(mktemp -d)}/k2k-hop-ab.log
K2K_MESSAGES=${K2K_MESSAGES:-200000} K2K_BENCH_LIMIT_S=${K2K_BENCH_LIMIT_S:-30} scripts/device-k2k-ab.sh "${variants[@]}" > "$ab" 2>&1
awk '/^=== /{label=$2} /^k2k\/4-stage chain, K2K channels \(per hop\):/{print "  run " label " " $0}' "$ab" | sed 's/k2k\/4-stage chain, K2K channels (per hop): //'
sed -n '/k2k A\/B summary/,$p' "$ab"
[ "${STAGES_ONLY:-0}" = 1 ] && exit 0
k2k=$new/tests/k2k
[ ${#solo[@]} -gt 0 ] && echo "=== tests below: RK_CUDA_RING_DEFINES=$TEST_DEFINES"
run loop 30 "${solo[@]}" "$k2k/test_k2k_loop" cuda
run stream 40 "${solo[@]}" "$k2k/test_k2k_stream" cuda 2000000
run terminate 30 "${solo[@]}" "$k2k/test_k2k_terminate" cuda
run errors 30 "${solo[@]}" "$k2k/test_k2k_errors" cuda
run relay-to 30 "${solo[@]}" "$k2k/test_k2k_relay" to cuda
RUN_TAIL=14 run conformance-channels 90 "${solo[@]}" "$new/tools/rk/rk" conformance --backend cuda --check channel --timeout 30
echo "device-k2k-hop: $([ $failed -eq 0 ] && echo 'all tests ok or skipped' || echo 'SOME TESTS FAILED')"
exit $failed
