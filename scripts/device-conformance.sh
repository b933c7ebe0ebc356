#!/usr/bin/env bash
# The conformance suite on the GPU machine (docs/conformance.md): CUDA, and
# WebGPU through NVIDIA's Vulkan driver when a loader is there (or carried
# in .gl/ by scripts/webgpu-device-check.sh prepare). Under 5 minutes (45 checks, three backends, cold caches).
#
#   (device) scripts/device-conformance.sh [BUILD_DIR]     (default build-dev)
#
# Prints the table and writes it to $OUT/conformance.txt (or
# ./device-conformance-out), each check's progress to conformance-progress.log.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-build-dev}" in /*) build=$1 ;; *) build=$root/${1:-build-dev} ;; esac
out=${OUT:-$root/device-conformance-out}
mkdir -p "$out"
export RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-device-cache} CUDA_MODULE_LOADING=EAGER
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rk=$build/tools/rk/rk
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json

# WebGPU needs a Vulkan loader; NVIDIA's ICD is named explicitly.
if ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 && ls "$root"/.gl/*.deb > /dev/null 2>&1; then
    for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
fi
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ]; then export VK_DRIVER_FILES=$nvidia_icd; fi

{
    echo "$(date -u '+%Y-%m-%d %H:%M UTC') $(git -C "$root" describe --always --dirty 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
    echo "\$ rk conformance --backend cuda --backend webgpu --backend cpu"
} | tee "$out/conformance.txt"
t0=$SECONDS
timeout --kill-after=10 280 "$rk" conformance --backend cuda --backend webgpu --backend cpu --timeout 60 \
    2> "$out/conformance-progress.log" | tee -a "$out/conformance.txt"
rc=${PIPESTATUS[0]}
echo "exit $rc after $((SECONDS - t0)) s" | tee -a "$out/conformance.txt"
exit "$rc"
