#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds a small consumer
# against it twice: with CMake's find_package(ringkernel) and with
# pkg-config. Both consumers must run, open the CPU backend and compile a
# stencil kernel that includes <ringkernel/dsl_stencil.h> without -I, with a
# fresh kernel cache so the compiler really runs from the installed library.
# The CMake consumer also uses the installed rk_embed helper and handler_file.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build_dir="$1"
src_dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
for f in include/ringkernel/ringkernel.h include/ringkernel/device.h bin/rk; do
    [[ -e "$prefix/$f" ]] || { echo "FAIL: $f not installed"; exit 1; }
done
libdir="$(dirname "$(find "$prefix" -name 'libringkernel.so' | head -n1)")"
[[ -d "$libdir" ]] || { echo "FAIL: libringkernel.so not installed"; exit 1; }

# The installed rk runs from the prefix with no environment set (its RPATH
# finds the library), and keeps WebGPU when Dawn was installed beside it.
# LD_BIND_NOW: every symbol rk and the library need must resolve now, not lazily.
env -u LD_LIBRARY_PATH -u RK_WEBGPU_LIB LD_BIND_NOW=1 "$prefix/bin/rk" info --json >"$work/info.json" \
    || { echo "FAIL: installed rk info without LD_LIBRARY_PATH"; exit 1; }
python3 - "$work/info.json" "$libdir" <<'PY' || exit 1
import json, os, sys
d = json.load(open(sys.argv[1]))
names = {b["name"]: b for b in d["backends"]}
assert names["cpu"]["available"], "installed rk: cpu unavailable"
if os.path.exists(os.path.join(sys.argv[2], "ringkernel", "libwebgpu_wrapper.so")):
    assert names["webgpu"]["available"], "installed rk: Dawn installed but webgpu unavailable: %s" % names["webgpu"]["reason"]
PY

export RK_CACHE_DIR="$work/cache"

# 1. CMake package.
cmake -S "$src_dir/tests/cli/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAIL: find_package(ringkernel)"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/cmake-build/consumer" || { echo "FAIL: CMake consumer"; exit 1; }

# 2. pkg-config.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags="$(pkg-config --cflags --libs ringkernel)" || { echo "FAIL: pkg-config ringkernel"; exit 1; }
# shellcheck disable=SC2086 # flags are words on purpose
# The installed library exports the public API only (cmake/public_symbols.map).
# Beyond rk_*, only the internals the MPI plugin calls back into (the map lists them).
plugin_needs=""
if [[ -e "$libdir/libringkernel_mpi.so" ]]; then
    plugin_needs="$(nm -D --undefined-only "$libdir/libringkernel_mpi.so" | awk '$2 ~ /^rk__/ {print $2}')"
    exported="$(nm -D --defined-only "$libdir/libringkernel.so" | awk '{print $3}')"
    for sym in $plugin_needs; do
        grep -qxF "$sym" <<<"$exported" || { echo "FAIL: the MPI plugin needs $sym, which the installed library hides"; exit 1; }
    done
fi
internal="$(nm -D --defined-only "$libdir/libringkernel.so" | awk '{print $3}' | grep -v '^rk_[a-z]' \
    | grep -vxF -f <(printf '%s\n' $plugin_needs) || true)"
[[ -z "$internal" ]] || { echo "FAIL: the installed library exports non-API symbols:"; echo "$internal" | head; exit 1; }
grep -qxF rk_kernel_launch <<<"$(nm -D --defined-only "$libdir/libringkernel.so" | awk '{print $3}')" \
    || { echo "FAIL: rk_kernel_launch not exported"; exit 1; }

# A prefix outside the loader's path: the consumer records it (-rpath), as a user would.
cc -std=c11 -Wall -Wextra -Werror "$src_dir/tests/cli/consumer/main.c" -o "$work/pc-consumer" $flags -Wl,-rpath,"$libdir"
env -u LD_LIBRARY_PATH "$work/pc-consumer" || { echo "FAIL: pkg-config consumer"; exit 1; }
rm -rf "$RK_CACHE_DIR" # the second consumer compiles afresh too
env -u LD_LIBRARY_PATH "$work/pc-consumer" || { echo "FAIL: pkg-config consumer, second run"; exit 1; }
echo "PASS: install, find_package and pkg-config, stencil kernels from the installed prefix"
