#!/bin/bash
# K2K A/B on the GPU machine (issue 14): `rk bench k2k --backend cuda` for
# several builds and environment settings side by side in one call, so base
# and candidate figures come from the same card. Each variant is
#   LABEL=BUILD_DIR[,NAME=VALUE...]
# e.g.  scripts/device-k2k-ab.sh base=build-base new=build-rel new-cb=build-rel,RK_CUDA_CONTROL_BLOCK=1
# Variables: K2K_MESSAGES (default 1000000), K2K_BENCH_LIMIT_S (default 40
# per run). Prints each run's rows and, at the end, one line per variant:
# per hop p50 / p99, streamed, parked burst, device-only burst.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
messages=${K2K_MESSAGES:-1000000}
limit=${K2K_BENCH_LIMIT_S:-40}
backend=${K2K_BACKEND:-cuda} # cpu: to try the script where there is no GPU
export CUDA_MODULE_LOADING=EAGER RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-k2k-cache}
summary=()
for spec in "$@"; do
    label=${spec%%=*}
    rest=${spec#*=}
    IFS=, read -r -a parts <<< "$rest"
    build=${parts[0]}
    case $build in /*) ;; *) build=$root/$build ;; esac
    envs=("${parts[@]:1}")
    echo "=== $label: ${envs[*]:-} $build/tools/rk/rk bench k2k --backend $backend --messages $messages"
    t0=$SECONDS
    out=$(env "${envs[@]}" LD_LIBRARY_PATH="$build" timeout --kill-after=5 "$limit" \
        "$build/tools/rk/rk" bench k2k --backend "$backend" --messages "$messages" 2>&1)
    rc=$?
    echo "$out" | grep -E '^(k2k)[ /]|^  trace '
    [ $rc -ne 0 ] && echo "$out" | tail -5
    row() { echo "$out" | grep -E "^k2k +$1 " | head -1; }
    # p50 and p99, each printed in us or ns (a p50 under 1 us is printed in ns): both in us.
    hop=$(row '4-stage chain, K2K channels \(per hop\)' | awk '{n=0; for(i=2;i<=NF&&n<2;i++) if($i=="us"||$i=="ns"){v[n++]=($i=="ns"?$(i-1)/1000:$(i-1))} if(n==2) printf "%.3f/%.3f", v[0], v[1]}')
    rate=$(row '4-stage chain, K2K channels \(per hop\)' | awk '{print $(NF-7) $(NF-6)}')
    relay=$(row '4-stage chain, host relay \(per hop\)' | awk '{for(i=1;i<=NF;i++) if($i=="us"){print $(i-1); exit}}')
    burst=$(row '4-stage chain, K2K channels, parked burst' | awk '{print $(NF-5) $(NF-4)}')
    dev=$(row '4-stage chain, K2K channels, parked burst, device only' | awk '{print $(NF-5) $(NF-4)}')
    summary+=("$(printf '%-14s rc=%-3s hop p50/p99 %-12s us  relay hop %-6s us  streamed %-8s  burst %-8s  device only %-8s (%d s)' \
        "$label" "$rc" "${hop:-?}" "${relay:-?}" "${rate:-?}" "${burst:-?}" "${dev:-?}" $((SECONDS - t0)))")
done
echo
echo "=== k2k A/B summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
for s in "${summary[@]}"; do echo "  $s"; done
