#!/bin/bash
# The portability suite (tests/portability/, issue 18) on the GPU machine:
# every kernel from one DSL source on the CPU, the CUDA output on the host,
# WGSL on WebGPU (NVIDIA's Vulkan driver when its ICD is there, after
# scripts/webgpu-device-check.sh has unpacked the loader) and CUDA on the GPU,
# each compared with its plain C reference. Under a minute; prints one line a
# case and the runs per executor.
#
#   (device) scripts/device-portability.sh [BUILD]     default: build-dev
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${1:-build-dev}
[ -x "$build/tests/transpile/diff/transpile_diff_corpus" ] || { echo "no transpile_diff_corpus in $build"; exit 2; }
# Binaries name the development machine's source path.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if [ -n "$src" ] && [ "$src" != "$root" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
export RK_WEBGPU_LIB="${RK_WEBGPU_LIB:-$root/.deps/webgpu/package/libwebgpu_wrapper.so}"
export RK_CACHE_DIR="${RK_CACHE_DIR:-/tmp/rk-device-cache}" CUDA_MODULE_LOADING=EAGER
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$build/tools/rk/rk" info 2>&1 | grep -iE "^ *(cuda|webgpu)|name" | head -6
t0=$SECONDS
timeout --kill-after=5 55 "$build/tests/transpile/diff/transpile_diff_corpus" --portability
rc=$?
echo "portability suite: exit $rc after $((SECONDS - t0)) s"
exit $rc
