#!/bin/bash
# Issue 14's per-hop latency, a short A/B of up to three builds on the GPU
# machine inside one time budget (session 16 hop-4: main, the merged hop fix
# and its follow-up): `rk bench k2k --backend cuda` for every variant,
# ROUNDS rounds alternated; then the last build's 4-stage chain, loop,
# terminate and 2 M stream tests and the conformance suite's channel checks,
# each cut to the time left.
#   (device) scripts/device-k2k-hop-ab3.sh LABEL=DIR [LABEL=DIR ...]
# Variables: ROUNDS (3), TOTAL_S (88: the whole run's seconds), AB_S (48:
# the benches' share), K2K_MESSAGES (30000), SASS_DIR (cubins whose SASS
# goes to $OUT when cuobjdump is there).
# Success: every test line "exit 0" (77: skipped), and the summary's rows.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
rounds=${ROUNDS:-3}
total=${TOTAL_S:-88}
out=${OUT:-$(mktemp -d)}
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
echo "=== commit $(git log --oneline -1 2>/dev/null)"
last=
for spec in "$@"; do
    b=${spec#*=}
    b=${b%%,*}
    last=$b
    # Binaries and CTest files name the development machine's source paths.
    src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null)
    [ -n "$src" ] && [ ! -e "$src" ] && mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"
done
[ -n "$last" ] || { echo "usage: $0 LABEL=DIR ..."; exit 2; }
variants=()
for ((r = 0; r < rounds; r++)); do variants+=("$@"); done
K2K_MESSAGES=${K2K_MESSAGES:-30000} K2K_BENCH_LIMIT_S=20 timeout -k 2 "${AB_S:-48}" \
    scripts/device-k2k-ab.sh "${variants[@]}" > "$out/k2k-ab.log" 2>&1
echo "=== benches: exit $? ($SECONDS s)"
awk '/^=== /{label=$2} /^k2k\/4-stage chain, K2K channels \(per hop\):/{print "  run " label " " $0}' "$out/k2k-ab.log" |
    sed 's/k2k\/4-stage chain, K2K channels (per hop): //'
sed -n '/k2k A\/B summary/,$p' "$out/k2k-ab.log"
failed=0
run() { # run LABEL COMMAND...: cut to the time left
    local label=$1 limit=$((total - SECONDS))
    shift
    [ "$limit" -lt 3 ] && { echo "=== $label: no time left"; failed=1; return; }
    echo "=== $label: $* (limit $limit s)"
    LD_LIBRARY_PATH="$last" timeout -k 2 "$limit" "$@" 2>&1 | tail -"${RUN_TAIL:-2}"
    local rc=${PIPESTATUS[0]}
    echo "=== $label: exit $rc ($SECONDS s)"
    [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && failed=1
}
k2k=$last/tests/k2k
run chain "$k2k/test_k2k_chain" cuda
run loop "$k2k/test_k2k_loop" cuda
run terminate "$k2k/test_k2k_terminate" cuda
run stream "$k2k/test_k2k_stream" cuda 2000000
RUN_TAIL=13 run conformance-channels "$last/tools/rk/rk" conformance --backend cuda --check channel --timeout 20
sass=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "${SASS_DIR:-}" ] && [ -n "$sass" ]; then
    for f in "$SASS_DIR"/*.cubin; do [ -f "$f" ] && "$sass" -sass "$f" | gzip > "$out/$(basename "$f" .cubin).sass.gz"; done
    echo "=== sass: $(ls "$out"/*.sass.gz 2>/dev/null | wc -l) files"
fi
echo "device-k2k-hop-ab3: $([ $failed -eq 0 ] && echo 'all tests ok or skipped' || echo 'SOME TESTS FAILED') ($SECONDS s)"
exit $failed
