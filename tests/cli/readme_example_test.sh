#!/usr/bin/env bash
# Compiles and runs the C example in README.md against this build, so the
# README's API example keeps working.
#   readme_example_test.sh SOURCE_DIR LIBRARY_DIR
set -euo pipefail
src_dir="$1"
lib_dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The first ```c block of the README.
awk '/^```c$/ { inside = 1; next } /^```$/ && inside { exit } inside { print }' "$src_dir/README.md" >"$work/example.c"
[[ -s "$work/example.c" ]] || { echo "FAIL: no C example in README.md"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -I"$src_dir/include" "$work/example.c" -o "$work/example" \
    -L"$lib_dir" -lringkernel -Wl,-rpath,"$lib_dir"
RK_BACKEND=cpu "$work/example" >"$work/out.txt"
cat "$work/out.txt"
grep -q '^42 (handler status 0)$' "$work/out.txt" || { echo "FAIL: unexpected output"; exit 1; }
echo "PASS: README example"
