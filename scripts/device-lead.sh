#!/bin/bash
# The lead's device checks of this wave (floors, soak), in one call:
#   cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DRK_BUILD_TESTS=OFF && ninja -C build-dev rk
#   (device) scripts/device-lead.sh build-dev        carry: build-dev
# Prints everything; also $OUT/lead.log.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${1:-build-dev}
out=${OUT:-/tmp}
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=/tmp/rk-device-cache
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rk=$build/tools/rk/rk
step() { local limit=$1; shift; echo "=== $* (limit $limit s) $(date -u +%T)"; local t0=$SECONDS
    timeout --kill-after=5 "$limit" "$@"; echo "=== exit $? after $((SECONDS - t0)) s"; }
{
    date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
    step 150 "$rk" bench queue kernel cuda
    step 130 "$rk" bench soak --backend cpu --messages 1000000000 --quiet
    step 130 "$rk" bench soak --backend cuda --messages 1000000000 --quiet
} 2>&1 | tee "$out/lead.log"
