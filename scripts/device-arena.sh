#!/bin/bash
# The CUDA channel arena on the GPU machine (issue 14), in one call (about
# 3 minutes; every step has its own limit):
#  1. the chain and loop tests on cuda, plain (the arena must not break them);
#  2. compute-sanitizer memcheck on the chain test (four kernels, channels
#     connected while they run) and on the loop test: 0 errors expected,
#     the channels being carved from the arena reserved before the first
#     kernel launched;
#  3. the control: the chain under memcheck with RK_CUDA_CHANNEL_ARENA_MB=0
#     (no arena, each channel its own cuMemAlloc after the launches). The
#     "Invalid __global__ read ... inside the nearest allocation" report of
#     issue 14 is expected back (exit 9): that shows the arena is what
#     silenced it. This step's verdict is "reproduced" or "NOT reproduced";
#     it never fails the script.
#
#   (here)   cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release
#            ninja -C build-dev test_k2k_chain test_k2k_loop
#   (device) scripts/device-arena.sh build-dev          carry: build-dev
#
# Output: stdout, and when $OUT is set also $OUT/arena-summary.log and
# $OUT/arena-<step>.log per step. Exit 0 when steps 1 and 2 pass.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-dev}
case $build in /*) ;; *) build=$root/$build ;; esac
out=${OUT:-}
logs=${out:-$(mktemp -d)}
[ -n "$out" ] && mkdir -p "$out" && exec > >(tee -a "$out/arena-summary.log") 2>&1
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-arena-cache}
failed=0
verdicts=()
messages=${ARENA_SANITIZER_MESSAGES:-32}

step() { # step NAME LIMIT COMMAND...; sets rc
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS log=$logs/arena-$name.log
    echo "=== $name: $*"
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    echo "=== $name: exit $rc in $((SECONDS - t0)) s"
}
verdict() { verdicts+=("$(printf '%-22s %s' "$1" "$2")"); }

date -u
echo "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1
# Binaries name the development machine's source path.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi
k2k=$build/tests/k2k
for t in test_k2k_chain test_k2k_loop; do
    if [ ! -x "$k2k/$t" ]; then
        echo "device-arena: $k2k/$t is missing (build it here and carry the build)"
        exit 2
    fi
done
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

for t in chain loop; do
    step "$t-cuda" 40 "$k2k/test_k2k_$t" cuda
    if [ $rc -eq 0 ]; then verdict "$t-cuda" ok; else verdict "$t-cuda" "FAILED (exit $rc)"; failed=1; fi
done

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
if [ -z "$sanitizer" ]; then
    echo "device-arena: no compute-sanitizer on PATH"
    verdict memcheck "FAILED (no compute-sanitizer)"
    failed=1
else
    # Instrumented kernels are slow: the watchdog and the tests' waits widen.
    # API errors are not reported (the launch path's parameter probe: see
    # scripts/device-k2k.sh); a device error still gives exit 9.
    export RK_CUDA_WATCHDOG_MS=600000 RK_K2K_TIME_SCALE=3
    "$sanitizer" --version 2>&1 | tail -1
    api=()
    "$sanitizer" --help 2>&1 | grep -q -- --report-api-errors && api=(--report-api-errors no)
    for t in chain loop; do
        step "memcheck-$t" 90 "$sanitizer" --tool memcheck --error-exitcode 9 "${api[@]}" "$k2k/test_k2k_$t" cuda \
            "$messages"
        errors=$(grep -c "Invalid __global__" "$logs/arena-memcheck-$t.log")
        if [ $rc -eq 0 ]; then
            verdict "memcheck-$t" "ok (0 errors)"
        else
            verdict "memcheck-$t" "FAILED (exit $rc, $errors invalid access report(s))"
            failed=1
        fi
    done
    step memcheck-chain-no-arena 90 env RK_CUDA_CHANNEL_ARENA_MB=0 "$sanitizer" --tool memcheck --error-exitcode 9 \
        "${api[@]}" "$k2k/test_k2k_chain" cuda "$messages"
    errors=$(grep -c "Invalid __global__" "$logs/arena-memcheck-chain-no-arena.log")
    if [ $rc -eq 9 ] && [ "$errors" -gt 0 ]; then
        verdict memcheck-no-arena "reproduced (exit 9, $errors invalid access report(s)): the arena is the fix"
    else
        verdict memcheck-no-arena "NOT reproduced (exit $rc, $errors report(s)): the arena may not be what changed"
    fi
fi

echo
echo "=== summary ($SECONDS s)"
for v in "${verdicts[@]}"; do echo "  $v"; done
echo "device-arena: $([ $failed -eq 0 ] && echo 'chain and loop pass, memcheck clean' || echo 'SOME STEPS FAILED')"
exit $failed
