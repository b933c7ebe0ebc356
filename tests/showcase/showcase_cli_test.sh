#!/bin/sh
# rk demo wave and rk bench seed-table on the CPU backend, non-interactively.
#   showcase_cli_test.sh CASE RK_BINARY
set -u
case_name=$1
rk=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RK_BACKEND=cpu

fail() { echo "FAIL ($case_name): $*"; cat "$tmp/out" 2>/dev/null; exit 1; }
expect() { grep -q -- "$1" "$tmp/out" || fail "output lacks '$1'"; }
run() { "$@" > "$tmp/out" 2>&1; echo $?; }

case $case_name in
demo-cpu)
    # Timing both patterns first takes 330 waited commands each; under a
    # sanitizer (RK_TEST_SANITIZER, set by CMake) on a loaded machine the
    # persistent ones took minutes, so it is left out there.
    calibrate=""
    [ -z "${RK_TEST_SANITIZER:-}" ] || calibrate="--no-calibrate"
    # shellcheck disable=SC2086
    rc=$(run "$rk" demo wave --frames 20 --no-tty --size 64 --fps 120 $calibrate)
    [ "$rc" = 0 ] || fail "exit $rc"
    expect "rk demo wave summary"
    expect "persistent on cpu"
    expect "finite throughout"
    expect "commands fit in 16.7 ms"
    ;;
demo-traditional)
    rc=$(run "$rk" demo wave --pattern traditional --frames 10 --no-tty --size 48 --no-calibrate --steps-per-frame 3)
    [ "$rc" = 0 ] || fail "exit $rc"
    expect "traditional on cpu"
    expect "10 at 60 fps, 30 time steps"
    ;;
demo-png)
    rc=$(run "$rk" demo wave --frames 3 --no-tty --size 40 --png "$tmp/frames" --no-calibrate --quiet)
    [ "$rc" = 0 ] || fail "exit $rc"
    for i in 00000 00001 00002; do
        f="$tmp/frames/wave_$i.png"
        [ -s "$f" ] || fail "no $f"
        [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "$f is not a PNG"
    done
    [ ! -e "$tmp/frames/wave_00003.png" ] || fail "more frames than asked for"
    ;;
demo-bad-options)
    for args in "--pattern sideways" "--speed 0.9" "--fps 0" "--size 3" "--backend nosuch" "--frames"; do
        # shellcheck disable=SC2086
        rc=$(run "$rk" demo wave $args --no-tty)
        [ "$rc" = 2 ] || fail "rk demo wave $args: exit $rc, want 2"
    done
    rc=$(run "$rk" demo wave --help)
    [ "$rc" = 0 ] || fail "--help: exit $rc"
    expect "--pattern"
    ;;
seed-table)
    # The fewest samples that still fill every row: under a sanitizer on a
    # loaded machine each persistent command can take 100 ms or more, and
    # --quick's three runs of 300 mixed commands then took over 300 s.
    few="--quick --repeats 5 --mixed-repeats 1 --batch-steps 50"
    # shellcheck disable=SC2086
    rc=$(run "$rk" bench seed-table $few --size 48 --json)
    [ "$rc" = 0 ] || fail "exit $rc"
    grep -v '^running seed-table' "$tmp/out" > "$tmp/seed.json"
    expect '"tool": "rk bench seed-table"'
    expect '"queries_differing": 0'
    if command -v python3 > /dev/null; then
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["rows"]) == 6, d' "$tmp/seed.json" \
            || fail "the JSON does not parse"
        python3 "$here/../../scripts/seed_table_chart.py" "$tmp/seed.json" -o "$tmp/seed.svg" || fail "chart failed"
        grep -q "<svg" "$tmp/seed.svg" || fail "no SVG"
    fi
    # shellcheck disable=SC2086
    rc=$(run "$rk" bench seed-table $few --size 32)
    [ "$rc" = 0 ] || fail "table: exit $rc"
    expect "commands per 60 FPS frame"
    expect "0 differ"
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo "ok: $case_name"
