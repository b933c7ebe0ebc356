#!/usr/bin/env bash
# Tries the WebGPU backend on a machine with a real GPU and its Vulkan driver
# (the GPU machine lent to sessions: NVIDIA's ICD at
# /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json, no network, maybe no
# Vulkan loader). Two steps:
#
#   scripts/webgpu-device-check.sh prepare   # here, with the network
#       builds build-webgpu-check/ (Release, tests), fetches the Vulkan loader
#       .deb into .gl/ and Dawn into .deps/webgpu/ (scripts/install-webgpu.sh);
#       then run on the GPU machine with carry [".gl", ".deps/webgpu",
#       "build-webgpu-check"]:
#   scripts/webgpu-device-check.sh run       # there, offline
#       unpacks the loader if the machine lacks one, points Vulkan at the
#       NVIDIA driver, and runs rk info, the WebGPU tests (simulations
#       included), rk demo and the relaunch benchmark. A log goes to $OUT/webgpu-device-check.log when
#       $OUT is set.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build-webgpu-check"
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json

say() { printf 'webgpu-device-check: %s\n' "$*"; }

prepare() {
  set -e
  bash "$ROOT/scripts/install-webgpu.sh"
  # The Vulkan loader (and what EGL/GL need, should Dawn try them) as .debs
  # for the GPU machine, which cannot fetch anything.
  if ! git -C "$ROOT" check-ignore -q .gl 2>/dev/null; then
    local exclude
    exclude="$(git -C "$ROOT" rev-parse --git-path info/exclude)"
    mkdir -p "$(dirname "$exclude")" && echo /.gl/ >> "$exclude"
  fi
  mkdir -p "$ROOT/.gl" /tmp/amd64/partial
  local o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  apt-get "${o[@]}" update -qq
  (cd "$ROOT/.gl" && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRK_BUILD_TESTS=ON >/dev/null
  ninja -C "$BUILD" -j2 ringkernel rk test_webgpu_device test_webgpu_ring test_webgpu_transpiled bench_webgpu_ring \
    test_sim_webgpu test_sim_ordering_webgpu
  # The binaries carry this tree's absolute paths (rpath, the examples they
  # read): run re-creates them there.
  echo "$ROOT" > "$BUILD/source-dir.txt"
  # Object files are not needed there; keep the carried size small.
  find "$BUILD" -name '*.o' -delete
  du -sh "$BUILD" "$ROOT/.deps/webgpu" "$ROOT/.gl" 2>/dev/null
  say "prepared; on the GPU machine run: bash scripts/webgpu-device-check.sh run"
  say "with carry: [\".gl\", \".deps/webgpu\", \"build-webgpu-check\"]"
}

run_step() { # name, command...
  local name="$1"
  shift
  say "---- $name: $*"
  local t0=$SECONDS
  "$@"
  local rc=$?
  say "---- $name: exit $rc after $((SECONDS - t0)) s"
  return $rc
}

run_checks() {
  [ -x "$BUILD/tools/rk/rk" ] || { say "no build at $BUILD: run 'prepare' here first and carry build-webgpu-check"; return 2; }
  # The Vulkan loader: use the machine's, else the carried one.
  # NVIDIA's Vulkan ICD (libGLX_nvidia) also needs glvnd's libraries.
  if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1' || ! ldconfig -p 2>/dev/null | grep -q 'libGLdispatch.so.0'; then
    if ls "$ROOT"/.gl/*.deb >/dev/null 2>&1; then
      say "no Vulkan loader here: unpacking the carried .debs"
      for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" /; done
      ldconfig
    else
      say "no Vulkan loader here and none carried in .gl/"
    fi
  fi
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NVIDIA_ICD" ]; then export VK_DRIVER_FILES="$NVIDIA_ICD"; fi
  say "VK_DRIVER_FILES=${VK_DRIVER_FILES:-(unset)}"
  # Re-create the build's absolute source path, which its binaries use.
  local src
  src="$(cat "$BUILD/source-dir.txt" 2>/dev/null || echo "$ROOT")"
  if [ "$src" != "$ROOT" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$ROOT" "$src" && say "linked $src -> $ROOT"
  fi
  export RK_WEBGPU_LIB="${RK_WEBGPU_LIB:-$ROOT/.deps/webgpu/package/libwebgpu_wrapper.so}"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  local failed=0
  run_step "rk info" "$BUILD/tools/rk/rk" info || failed=1
  for t in test_webgpu_device test_webgpu_ring test_webgpu_transpiled; do
    run_step "$t" "$BUILD/tests/webgpu/$t" || failed=1
  done
  # Simulations on WebGPU (docs/simulations.md): both patterns, the CPU within tolerance, the ordering mix.
  for t in test_sim_webgpu test_sim_ordering_webgpu; do
    run_step "$t" "$BUILD/tests/sim/$t" webgpu || failed=1
  done
  run_step "rk demo" env RK_BACKEND=webgpu "$BUILD/tools/rk/rk" demo || failed=1
  run_step "relaunch benchmark" "$BUILD/tests/webgpu/bench_webgpu_ring" 5000 2000000 || failed=1
  say "done: $([ $failed = 0 ] && echo 'all steps passed' || echo 'some steps FAILED')"
  return $failed
}

case "${1:-run}" in
  prepare) prepare ;;
  run)
    if [ -n "${OUT:-}" ]; then
      run_checks 2>&1 | tee "$OUT/webgpu-device-check.log"
      exit "${PIPESTATUS[0]}"
    fi
    run_checks
    ;;
  *) echo "usage: $0 [prepare|run]" >&2; exit 2 ;;
esac
