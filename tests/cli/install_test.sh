#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds a small consumer
# against it twice: with CMake's find_package(ringkernel) and with
# pkg-config. Both consumers must run, open the CPU backend and compile a
# stencil kernel that includes <ringkernel/dsl_stencil.h> without -I, with a
# fresh kernel cache so the compiler really runs from the installed library.
# The CMake consumer also uses the installed rk_embed helper and handler_file.
# When libringkernel.a was installed (RK_STATIC), the same program is linked
# with it too, through find_package(ringkernel COMPONENTS static) and through
# pkg-config --static, and must run without libringkernel.so.
#   install_test.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
# SANITIZERS: the build's RK_SANITIZE; consumers are built with the same
# -fsanitize flags, as a sanitized library needs its runtime in the program.
set -euo pipefail

build_dir="$1"
src_dir="$2"
sanitize="${3:-}"
san_flags=""
if [[ -n "$sanitize" ]]; then
    san_flags="-fsanitize=$sanitize -fno-omit-frame-pointer"
    [[ "$sanitize" == *undefined* ]] && san_flags+=" -fsanitize=float-cast-overflow"
fi
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

static_lib="$libdir/libringkernel.a"
have_static=0
if [[ -e "$static_lib" ]]; then
    have_static=1
    # The archive, like the shared library, offers the public API only.
    internal="$(nm -g --defined-only "$static_lib" | awk 'NF == 3 {print $3}' | grep -v '^rk_[a-z]' || true)"
    [[ -z "$internal" ]] || { echo "FAIL: libringkernel.a has global non-API symbols:"; echo "$internal" | head; exit 1; }
fi

# check_static PROGRAM: linked with libringkernel.a, it does not need the .so.
# (Here-strings, not pipes into grep -q: under pipefail an early exit of grep
# would fail the writer with SIGPIPE.)
check_static() {
    if grep -q 'NEEDED.*libringkernel' <<<"$(readelf -d "$1")"; then
        echo "FAIL: $1 needs libringkernel.so although linked with libringkernel.a"; exit 1
    fi
    grep -q ' T rk_kernel_launch$' <<<"$(nm "$1")" || { echo "FAIL: $1 does not contain rk_kernel_launch"; exit 1; }
}

# 1. CMake package (with the static component when the archive is installed:
# one configure and build for both programs keeps this cheap).
cmake -S "$src_dir/tests/cli/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DRK_CONSUMER_STATIC=$((have_static ? 1 : 0)) -DCMAKE_C_FLAGS="$san_flags" \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAIL: find_package(ringkernel)"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
env -u LD_LIBRARY_PATH "$work/cmake-build/consumer" || { echo "FAIL: CMake consumer"; exit 1; }
if ((have_static)); then
    check_static "$work/cmake-build/consumer_static"
    env -u LD_LIBRARY_PATH "$work/cmake-build/consumer_static" || { echo "FAIL: CMake consumer of libringkernel.a"; exit 1; }
fi

# 2. pkg-config.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags="$(pkg-config --cflags --libs ringkernel)" || { echo "FAIL: pkg-config ringkernel"; exit 1; }
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
# shellcheck disable=SC2086 # flags are words on purpose
cc -std=c11 -Wall -Wextra -Werror $san_flags "$src_dir/tests/cli/consumer/main.c" -o "$work/pc-consumer" $flags \
    -Wl,-rpath,"$libdir"
env -u LD_LIBRARY_PATH "$work/pc-consumer" || { echo "FAIL: pkg-config consumer"; exit 1; }
rm -rf "$RK_CACHE_DIR" # the second consumer compiles afresh too
env -u LD_LIBRARY_PATH "$work/pc-consumer" || { echo "FAIL: pkg-config consumer, second run"; exit 1; }

# 3. pkg-config --static: the archive asked for by name (-lringkernel alone
# takes the .so when both are there), then what --static adds after it.
if ((have_static)); then
    static_flags="$(pkg-config --cflags --libs --static ringkernel)" || { echo "FAIL: pkg-config --static"; exit 1; }
    for lib in -lffi -ldl -lm; do
        grep -qw -- "$lib" <<<"$static_flags" || { echo "FAIL: pkg-config --static lacks $lib: $static_flags"; exit 1; }
    done
    static_flags="${static_flags/-lringkernel/-Wl,-Bstatic -lringkernel -Wl,-Bdynamic}"
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror $san_flags "$src_dir/tests/cli/consumer/main.c" -o "$work/pc-static-consumer" \
        $static_flags
    check_static "$work/pc-static-consumer"
    env -u LD_LIBRARY_PATH "$work/pc-static-consumer" || { echo "FAIL: pkg-config --static consumer"; exit 1; }
fi
static_note=""
((have_static)) && static_note="; libringkernel.a through find_package(... COMPONENTS static) and pkg-config --static"
echo "PASS: install, find_package and pkg-config, stencil kernels from the installed prefix$static_note"
