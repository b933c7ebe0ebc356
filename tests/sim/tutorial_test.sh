#!/usr/bin/env bash
# Compiles and runs the tutorial in docs/simulations.md against this build:
# every ```c block of the page, in order, is one program.
#   tutorial_test.sh SOURCE_DIR LIBRARY_DIR
set -euo pipefail
src_dir="$1"
lib_dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
awk '/^```c$/ { inside = 1; next } /^```$/ && inside { inside = 0; print ""; next } inside { print }' \
    "$src_dir/docs/simulations.md" >"$work/tutorial.c"
[[ -s "$work/tutorial.c" ]] || { echo "FAIL: no C code in docs/simulations.md"; exit 1; }
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$src_dir/include" "$work/tutorial.c" -o "$work/tutorial" \
    -L"$lib_dir" -lringkernel -Wl,-rpath,"$lib_dir"
"$work/tutorial" cpu | tee "$work/out.txt"
grep -q '^persistent: particle 3 at x = ' "$work/out.txt" || { echo "FAIL: no persistent line"; exit 1; }
grep -q '^patterns agree: yes$' "$work/out.txt" || { echo "FAIL: the patterns disagree"; exit 1; }
echo "PASS: docs/simulations.md tutorial"
