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

# The installed rk runs from the prefix, with no build tree around.
LD_LIBRARY_PATH="$libdir" "$prefix/bin/rk" info >"$work/info.txt" || { echo "FAIL: installed rk info"; exit 1; }
grep -q cpu "$work/info.txt" || { echo "FAIL: installed rk info does not list cpu"; exit 1; }

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
cc -std=c11 -Wall -Wextra -Werror "$src_dir/tests/cli/consumer/main.c" -o "$work/pc-consumer" $flags
LD_LIBRARY_PATH="$libdir" "$work/pc-consumer" || { echo "FAIL: pkg-config consumer"; exit 1; }
rm -rf "$RK_CACHE_DIR" # the second consumer compiles afresh too
LD_LIBRARY_PATH="$libdir" "$work/pc-consumer" || { echo "FAIL: pkg-config consumer, second run"; exit 1; }
echo "PASS: install, find_package and pkg-config, stencil kernels from the installed prefix"
