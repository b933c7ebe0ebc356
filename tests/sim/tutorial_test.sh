#!/usr/bin/env bash
# Compiles and runs the tutorial in docs/simulations.md against this build:
# every ```c block of the page, in order, is one program.
#   tutorial_test.sh SOURCE_DIR LIBRARY_DIR [DEVICE]   (DEVICE: cpu by default; 77 when it has no device)
set -euo pipefail
src_dir="$1"
lib_dir="$2"
device="${3:-cpu}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
awk '/^```c$/ { inside = 1; next } /^```$/ && inside { inside = 0; print ""; next } inside { print }' \
    "$src_dir/docs/simulations.md" >"$work/tutorial.c"
[[ -s "$work/tutorial.c" ]] || { echo "FAIL: no C code in docs/simulations.md"; exit 1; }
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$src_dir/include" "$work/tutorial.c" -o "$work/tutorial" \
    -L"$lib_dir" -lringkernel -Wl,-rpath,"$lib_dir"
set +e
"$work/tutorial" "$device" 2>"$work/err.txt" | tee "$work/out.txt"
rc=${PIPESTATUS[0]}
set -e
cat "$work/err.txt" >&2
if [[ $rc -ne 0 ]]; then
    # A GPU backend without a device here is a skip (CTest: 77), anything else a failure.
    grep -q "choosing the device" "$work/err.txt" && { echo "SKIP: no $device device"; exit 77; }
    echo "FAIL: the tutorial exited with $rc"
    exit 1
fi
expect() { grep -q "$1" "$work/out.txt" || { echo "FAIL: $2"; exit 1; }; }
expect '^persistent: particle 3 at x = ' "no persistent line"
expect '^traditional: particle 3 at x = ' "no traditional line"
expect '^refused: rk_sim_send: rows 256 ' "a row outside the partition was not refused with its reason"
expect '^patterns agree: yes$' "the patterns disagree"
expect '^host model agrees: yes ' "the simulation disagrees with the host model"
echo "PASS: docs/simulations.md tutorial on $device"
