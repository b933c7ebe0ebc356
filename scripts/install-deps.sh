#!/usr/bin/env bash
# Installs what ringkernel needs to build and test on Debian 12, and nothing
# that is already there. Safe to run again: with everything present it only
# checks and exits. Packages come from the machine's own apt sources.
#
#   scripts/install-deps.sh          # build + test dependencies
#   RK_SKIP_WEBGPU=1 scripts/...     # skip the optional WebGPU runtime step
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Debian package -> why we need it.
packages=(
    build-essential  # gcc, make, libc headers; gcc's ASan/UBSan/TSan runtimes
    cmake            # the build (3.20 or newer)
    ninja-build      # fast parallel builds
    pkg-config       # finds libffi; consumers use ringkernel.pc
    libffi-dev       # the CPU backend calls kernels with any argument list
    git              # commit id in `rk bench`, fresh clones
    clang            # libFuzzer targets (tests/fuzz); clang++ compiles the MSL output against the Metal shim (tests/metal)
    libclang-rt-dev  # clang's fuzzer and sanitizer runtimes
    python3          # small checks in tests and scripts
    libopenmpi-dev   # optional MPI channels (src/mpi); the build skips them without it
    openmpi-bin      # mpirun for the 2-rank channel test
)

say() { printf 'install-deps: %s\n' "$*"; }

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    say "this script knows Debian/Ubuntu (apt); install these by hand: ${packages[*]}"
    exit 1
fi

is_installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if ((${#missing[@]})); then
    as_root=()
    if [[ "$(id -u)" != 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            say "missing ${missing[*]}; run as root or install sudo"
            exit 1
        fi
        as_root=(sudo)
    fi
    say "installing ${missing[*]}"
    "${as_root[@]}" apt-get update -qq
    export RK_APT_UPDATED=1 # install-webgpu.sh need not update again
    # dpkg's progress lines go to a log, shown only when the install fails.
    log="$(mktemp)"
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 \
        --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        say "apt-get install failed (output above)"
        exit 1
    fi
    rm -f "$log"
else
    say "build dependencies present"
fi

# Optional: the WebGPU runtime (Dawn) and a Vulkan driver for it. Its own
# script checks what is there; the library builds and runs without it.
if [[ -x "$here/install-webgpu.sh" && -z "${RK_SKIP_WEBGPU:-}" ]]; then
    "$here/install-webgpu.sh" || say "WebGPU runtime not installed (optional; the reason is above, and the WebGPU backend will report it too)"
fi
