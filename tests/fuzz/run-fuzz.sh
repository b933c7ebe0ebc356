#!/bin/sh
# Builds the transpiler's libFuzzer target with clang, ASan and UBSan, and
# fuzzes for SECONDS (default 60). New inputs go to a scratch directory; the
# checked-in corpus (tests/fuzz/corpus) stays small and is only read.
#   tests/fuzz/run-fuzz.sh 600
# Environment: RK_FUZZ_BUILD (build dir, default build-fuzz), RK_FUZZ_JOBS
# (parallel fuzzing processes, default 1), RK_FUZZ_WORK (scratch corpus dir),
# RK_FUZZ_RUNS: instead of SECONDS, exactly that many inputs from the fixed
# seed RK_FUZZ_SEED (default 1) -- the same inputs on every machine, as CI
# runs it: a gate must not fail on what a random search happened to find
# that day. Finding new crashes is the time-based run's job.
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${RK_FUZZ_BUILD:-$root/build-fuzz}
work=${RK_FUZZ_WORK:-$build/fuzz-work}
jobs=${RK_FUZZ_JOBS:-1}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRK_BUILD_FUZZERS=ON -DRK_SANITIZE=address,undefined >/dev/null
ninja -C "$build" fuzz_transpile
if [ -n "${RK_FUZZ_RUNS:-}" ] && [ -z "${RK_FUZZ_WORK:-}" ]; then
    work=$build/fuzz-work-fixed # starts empty, so that the run is the same anywhere
    rm -rf "$work"
fi
mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# The LeakSanitizer settings of every ASan test (suppressions for the GPU
# driver stack, two-frame allocation stacks), as cmake/sanitizers.cmake
# wrote them; the caller's LSAN_OPTIONS come after and win. For a crash's
# full allocation stack, replay its input with LSAN_OPTIONS=malloc_context_size=30.
LSAN_OPTIONS="$(cat "$build/lsan_options")${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# With several jobs libFuzzer writes fuzz-N.log files into the current directory.
cd "$build"
parallel=""
if [ "$jobs" -gt 1 ]; then parallel="-jobs=$jobs -workers=$jobs"; fi
length="-max_total_time=$seconds"
if [ -n "${RK_FUZZ_RUNS:-}" ]; then length="-runs=$RK_FUZZ_RUNS -seed=${RK_FUZZ_SEED:-1}"; fi
# -timeout: any single input taking over 10 s is a hang; -rss_limit_mb bounds memory.
# shellcheck disable=SC2086
exec "$build/tests/fuzz/fuzz_transpile" $length -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -dict="$root/tests/fuzz/c.dict" -print_final_stats=1 $parallel \
    "$work" "$root/tests/fuzz/corpus"
