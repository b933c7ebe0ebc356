#!/usr/bin/env bash
# Checks the rk command's behaviour that scripts rely on: help, exit codes,
# backend listing, the demo's verified run and parseable JSON.
#   cli_test.sh CASE PATH/TO/rk
# Exit 0 pass, 1 fail, 77 skip.
set -uo pipefail

case_name="$1"
rk="$2"
out="$(mktemp)" err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT

fail() {
    echo "FAIL ($case_name): $*" >&2
    echo "--- stdout" >&2; cat "$out" >&2
    echo "--- stderr" >&2; cat "$err" >&2
    exit 1
}

# run EXPECTED_EXIT ARGS...: runs rk, checks its exit code.
run() {
    local want="$1"; shift
    "$rk" "$@" >"$out" 2>"$err"
    local got=$?
    [[ "$got" == "$want" ]] || fail "rk $* exited $got, expected $want"
}

contains() { grep -q -- "$2" "$1" || fail "expected $(basename "$1") to contain '$2'"; }

# json_check PYTHON_EXPRESSION: parses stdout as JSON (as d) and asserts the expression.
json_check() {
    command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
    python3 - "$out" "$1" <<'PY' || fail "JSON check failed: $1"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
ok = eval(sys.argv[2], {"d": d})
if not ok:
    print("JSON assertion false:", sys.argv[2], file=sys.stderr)
    sys.exit(1)
PY
}

case "$case_name" in
help)
    run 0 --help; contains "$out" "usage: rk"
    # The commands beyond the first level and the environment the library reads.
    for word in "rk demo wave" "rk demo pipeline" "rk bench seed-table" "rk bench k2k" \
        RK_BACKEND RK_CACHE_DIR RK_WEBGPU_LIB "CC " "130"; do
        contains "$out" "$word"
    done
    for c in info demo bench transpile conformance; do
        run 0 "$c" --help; contains "$out" "usage: rk $c"
    done
    run 0 help demo; contains "$out" "usage: rk demo"
    run 0 --version; contains "$out" "rk 0."
    ;;
usage-errors)
    run 2
    run 2 no-such-command; contains "$err" "unknown command"
    run 2 info --no-such-option; contains "$err" "unknown option"
    run 2 demo --seconds abc; contains "$err" "seconds"
    run 2 demo --mode nope; contains "$err" "mode"
    run 2 bench no-such-group
    run 2 conformance --backend no-such-backend; contains "$err" "no backend named"
    ;;
info)
    run 0 info; contains "$out" "cpu"; contains "$out" "automatic selection"
    run 0 info --json
    json_check 'any(b["name"] == "cpu" and b["available"] and len(b["devices"]) >= 1 for b in d["backends"]) and d["selected"] is not None'
    RK_BACKEND=cpu "$rk" info --json >"$out" 2>"$err" || fail "RK_BACKEND=cpu rk info failed"
    json_check 'd["selected"] == "cpu:0" and d["rk_backend_env"] == "cpu"'
    # Counts a backend cannot tell are null, not 0.
    json_check 'all(dev.get(k) is None or dev[k] > 0 for b in d["backends"] for dev in b["devices"] for k in ("total_memory", "multiprocessors"))'
    # A named backend that cannot be selected fails the command.
    RK_BACKEND=nonesuch "$rk" info >"$out" 2>"$err"
    rc=$?
    [[ $rc == 2 ]] || fail "RK_BACKEND=nonesuch rk info exited $rc, expected 2"
    contains "$out" "nonesuch"
    ;;
demo-unknown-backend)
    RK_BACKEND=nope "$rk" demo --seconds 0.2 >"$out" 2>"$err"
    rc=$?
    [[ $rc == 2 ]] || fail "RK_BACKEND=nope rk demo exited $rc, expected 2"
    contains "$err" "nope"
    run 2 demo --backend nope --seconds 0.2; contains "$err" "nope"
    ;;
demo-unavailable-backend)
    # A built-in backend that cannot run here must give 77 with the reason.
    run 0 info --json
    name="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(next((b["name"] for b in d["backends"] if not b["available"]), ""))' "$out")"
    [[ -n "$name" ]] || { echo "SKIP: every built-in backend is available here"; exit 77; }
    run 77 demo --backend "$name" --seconds 0.2; contains "$err" "$name"
    # Off Apple platforms the Metal backend is there but unavailable, saying why.
    if [[ "$(uname -s)" != Darwin ]]; then
        run 77 demo --backend metal --seconds 0.2; contains "$err" "needs macOS"
    fi
    ;;
demo-cpu)
    run 0 demo --seconds 1 --backend cpu
    contains "$out" "rk demo summary"
    grep -Eq '^  errors +0$' "$out" || fail "summary does not report zero errors"
    run 0 demo --seconds 1 --backend cpu --json
    json_check 'd["errors"] == 0 and d["replies_verified"] == d["messages_sent"] > 0 and d["backend"] == "cpu" and d["probes"] > 0 and d["round_trip_p50_ns"] > 0'
    json_check 'd["mode"] in ("persistent", "traditional") and d["mode_requested"] == "default" and d["version"] and d["commit"] and d["date"]'
    # Ctrl-C stops the run with its summary and the shell's 130.
    "$rk" demo --seconds 60 --backend cpu >"$out" 2>"$err" &
    pid=$!
    sleep 1.5
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    [[ $rc == 130 ]] || fail "rk demo stopped by SIGINT exited $rc, expected 130"
    contains "$out" "rk demo summary"
    run 0 demo --messages 1000 --backend cpu --json
    json_check 'd["messages_sent"] == 1000 and d["replies_verified"] == 1000'
    ;;
demo-pipeline)
    run 0 demo pipeline --backend cpu --messages 3000 --stages 3 --queue 64
    contains "$out" "3000 arrived, 0 wrong, 0 missing"
    run 0 demo pipeline --backend cpu --messages 500 --relay
    contains "$out" "relayed by the host"
    run 2 demo pipeline --stages 17
    ;;
bench-json)
    run 0 bench --json --quick
    json_check 'd["commit"] and d["date"] and d["build_type"] and len(d["results"]) > 0 and all("name" in r for r in d["results"])'
    # Every queue row and every kernel row of the batch / round-trip kind is judged against a floor of the same run.
    json_check 'any(r["is_floor"] for r in d["results"]) and all(r["is_floor"] or (r["floor"] and r["vs_floor"] is not None) for r in d["results"] if r["group"] == "queue" or r["name"].startswith(("ring kernel", "round trip")))'
    ;;
transpile-inputs)
    # Only regular files are read: a FIFO include returns at once (docs/guarantees.md).
    dir="$(mktemp -d)"
    mkfifo "$dir/pipe"
    printf '#include "%s/pipe"\n' "$dir" >"$dir/main.c"
    timeout 20 "$rk" transpile "$dir/main.c" >"$out" 2>"$err"
    got=$?
    rm -rf "$dir"
    [[ $got == 1 ]] || fail "rk transpile with a FIFO include exited $got, expected 1"
    contains "$err" "not a regular file"
    printf 'int x;\0\n' | timeout 20 "$rk" transpile - >"$out" 2>"$err"
    got=$?
    [[ $got == 1 ]] || fail "rk transpile - with a NUL byte exited $got, expected 1"
    contains "$err" "<stdin>:1:7: error: a NUL byte"
    # A handler file given as it is: the diagnostics end by saying what to include.
    src_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    run 1 transpile --target cuda "$src_dir/examples/handlers/demo_handler.c"
    contains "$err" "does not include <ringkernel/dsl.h>"
    ;;
handler-tools)
    # rk check, rk header and rk bench kernel --handler on one handler file.
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir" "$out" "$err"' EXIT
    cat >"$dir/count.c" <<'SRC'
#define KEYS 4
typedef struct { uint32_t key; uint32_t add; } CountReq;
typedef struct { uint64_t total; int32_t status; uint32_t pad; } CountResp;
typedef struct { uint64_t totals[KEYS]; } CountState;
RK_DEVICE uint32_t slot(uint32_t k) { return k % KEYS; }
RK_HANDLER int count(const CountReq *req, CountResp *resp, CountState *state) {
    state->totals[slot(req->key)] += req->add;
    resp->total = state->totals[slot(req->key)];
    return 0;
}
SRC
    printf 'RK_HANDLER int h(const uint32_t *q, uint32_t *r, void *s) {\n    (void)s;\n    printf("%%u", *q);\n    *r = *q;\n    return 0;\n}\n' >"$dir/bad.c"
    run 0 check "$dir/count.c"
    contains "$out" "count.c: ok for cuda and wgsl"
    run 1 check "$dir/count.c" "$dir/bad.c"
    contains "$err" "bad.c:3:5: error: 'printf'"
    contains "$err" "bad.c: the cuda target refuses it"
    contains "$err" "the wgsl target refuses"
    run 2 check
    # The generated header compiles in host C, and its asserts hold.
    run 0 header "$dir/count.c" -o "$dir/count.h"
    contains "$dir/count.h" "_Static_assert(sizeof(CountState) == 32"
    contains "$dir/count.h" "#define COUNT_REQUEST_SIZE 8u"
    printf '#include "count.h"\nint main(void) { CountReq q = {1, 2}; return q.add == 2 && COUNT_STATE_SIZE == sizeof(CountState) ? 0 : 1; }\n' >"$dir/host.c"
    cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I "$dir" "$dir/host.c" -o "$dir/host" 2>"$err" || fail "the generated header does not compile"
    "$dir/host" || fail "the generated header's sizes differ"
    run 1 header "$dir/bad.c"
    # Requests from a file: two 8-byte requests.
    printf '\001\000\000\000\005\000\000\000\002\000\000\000\007\000\000\000' >"$dir/requests.bin"
    run 0 bench kernel --handler "$dir/count.c" --requests "$dir/requests.bin" --quick --json
    json_check 'len(d["results"]) == 4 and all(r["name"].startswith("count, 8 B") and r["messages"] > 0 for r in d["results"]) and d["results"][1]["p50_us"] > 0'
    printf 'abc' >"$dir/short.bin"
    run 1 bench kernel --handler "$dir/count.c" --requests "$dir/short.bin" --quick
    contains "$err" "multiple of the handler's request size"
    run 2 bench queue --handler "$dir/count.c"
    ;;
*)
    echo "unknown case '$case_name'" >&2
    exit 1
    ;;
esac
echo "PASS ($case_name)"
