#!/usr/bin/env bash
# Every numeric option of rk refuses values that are not finite, out of its
# range, negative, malformed, or 0 where 0 means nothing: exit 2, with a
# message naming the option, before anything runs.
#   cli_numbers_test.sh PATH/TO/rk
set -uo pipefail
rk="$1"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
failures=0

# refused OPTION ARGS...: rk ARGS... must exit 2 and name --OPTION on stderr.
refused() {
    local option="$1"; shift
    timeout 20 "$rk" "$@" >/dev/null 2>"$err"
    local got=$?
    if [[ $got != 2 ]] || ! grep -q -- "--$option" "$err"; then
        echo "FAIL: rk $* exited $got (expected 2 naming --$option): $(head -c 300 "$err")" >&2
        failures=$((failures + 1))
    fi
}

# Values no number option accepts: all of them through the two parsers (a
# real number and an integer), a few through each command.
for v in inf -inf nan NaN 1e400 -1 " -1" -0.5 abc "" 1x 0x10 99999999999999999999; do
    refused seconds demo --backend cpu --seconds "$v"
    refused messages demo --backend cpu --messages "$v"
done
for v in inf -1 1e400; do
    refused fps demo wave --no-tty --fps "$v"
    refused messages bench --messages "$v"
    refused repeats bench seed-table --repeats "$v"
done
# Each option's own range (the issue's cases: huge, zero where meaningless).
for v in 1e20 1e30 0 31536001; do refused seconds demo --backend cpu --seconds "$v"; done
for v in 0 65537; do refused batch demo --backend cpu --batch "$v"; done
for v in 0 1048577; do refused queue demo --backend cpu --queue "$v"; done
refused workers demo --backend cpu --workers 65537
refused size demo wave --no-tty --size 16385
refused size demo wave --no-tty --size 4
refused frames demo wave --no-tty --frames -3
for v in 0 0.5 1001 1e30; do refused fps demo wave --no-tty --fps "$v"; done
for v in 0 100001; do refused steps-per-frame demo wave --no-tty --steps-per-frame "$v"; done
for v in 0 0.8 1e30; do refused speed demo wave --no-tty --speed "$v"; done
for v in 1 0.995 1e30; do refused damping demo wave --no-tty --damping "$v"; done
for v in 1001 1e30; do refused drops demo wave --no-tty --drops "$v"; done
refused seed demo wave --no-tty --seed 1.5
refused messages bench --messages 1e13
refused messages bench --messages 1000000000001
refused size bench seed-table --size 16385
refused repeats bench seed-table --repeats 10000001
refused mixed-repeats bench seed-table --mixed-repeats 100001
refused batch-steps bench seed-table --batch-steps 100000001
refused blocks bench seed-table --blocks 65536
refused threads bench seed-table --threads 1025
for v in 0 65 -1 1e3 inf; do refused halo transpile --halo "$v" /dev/null; done
for v in 0x4 2000x2 -1x2 infxinf 4; do refused tile transpile --tile "$v" /dev/null; done

# In range still works (the demo runs a moment on the CPU).
if ! timeout 60 "$rk" demo --backend cpu --seconds 0.2 --quiet >/dev/null 2>"$err"; then
    echo "FAIL: rk demo --seconds 0.2 did not succeed: $(head -c 300 "$err")" >&2
    failures=$((failures + 1))
fi
[[ $failures == 0 ]] || { echo "$failures failures" >&2; exit 1; }
echo "all numeric options refuse bad values"
