#!/usr/bin/env bash
# Every public call returning rk_status is in src/core/api_entry.h, so its
# exported entry clears rk_last_error() (docs/guarantees.md).
#   api_entry_list_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
declared="$(grep -hoE '^rk_status rk_[a-z_0-9]+\(' "$src"/include/ringkernel/*.h | sed -E 's/^rk_status (rk_[a-z_0-9]+)\(/\1/' | sort)"
wrapped="$(grep -oE 'X\(rk_[a-z_0-9]+,' "$src/src/core/api_entry.h" | sed -E 's/X\((rk_[a-z_0-9]+),/\1/' | sort)"
if [[ "$declared" != "$wrapped" ]]; then
    echo "FAIL: src/core/api_entry.h and the public headers list different calls:" >&2
    diff <(echo "$declared") <(echo "$wrapped") >&2 || true
    exit 1
fi
echo "$(echo "$declared" | wc -l) public calls, all wrapped"
