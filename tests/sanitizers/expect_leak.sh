#!/bin/sh
# expect_leak.sh LEAK_CHECK MODE: runs one of leak_check's deliberate leaks
# under the caller's LSAN_OPTIONS (CTest sets the project's) and checks that
# LeakSanitizer reported it (library, callback: a leak in project code) or
# that lsan.supp hid it (driver: a leak inside the driver).
set -u
exe=$1 mode=$2
out=$("$exe" "$mode" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
    echo "expect_leak.sh: $mode: $*" >&2
    exit 1
}
case "$mode" in
library | callback)
    [ "$rc" -ne 0 ] || fail "exit status 0: the leak was not reported (LSAN_OPTIONS='${LSAN_OPTIONS:-}')"
    printf '%s\n' "$out" | grep -q "ERROR: LeakSanitizer: detected memory leaks" ||
        fail "exit status $rc without a LeakSanitizer report"
    # The allocation is the transpiler's (src/transpile), not the driver's.
    printf '%s\n' "$out" | grep -q "#1 .*/src/transpile/" || fail "no leak allocated in src/transpile"
    ;;
driver)
    [ "$rc" -eq 0 ] || fail "exit status $rc: the driver's own leak was not suppressed"
    printf '%s\n' "$out" | grep -q "libvulkan_lvp.so" ||
        fail "lsan.supp's lavapipe line was not used (LSAN_OPTIONS='${LSAN_OPTIONS:-}')"
    ;;
*) fail "unknown mode" ;;
esac
echo "expect_leak.sh: $mode: as expected"
