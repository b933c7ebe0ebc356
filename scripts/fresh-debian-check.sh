#!/usr/bin/env bash
# Tries the README's two commands the way a newcomer meets them: on a bare
# Debian 12 (debootstrap --variant=minbase), from a fresh clone of this
# repository's HEAD, first as root and then as a non-root user with sudo.
# Reports each step's time and how many packages each one installed.
#
#   sudo scripts/fresh-debian-check.sh [WORK_DIR]     (default /tmp/rk-fresh-debian)
#
# Packages come from this machine's own apt sources (copied into the new
# system), so no mirror is named here. Needs root, debootstrap (installed if
# missing), network access to those sources, and ~3 GB of disk.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/rk-fresh-debian}"
rootfs="$work/rootfs"
log="$work/report.txt"
say() { printf 'fresh-debian: %s\n' "$*" | tee -a "$log"; }

[[ "$(id -u)" == 0 ]] || { echo "fresh-debian: run as root (debootstrap and chroot need it)"; exit 1; }

# The first URI serving plain "bookworm" in this machine's sources.
mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        awk '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm" && u != "") { print u; exit } }' "$f"
    done | head -n1
}

mkdir -p "$work"
: >"$log"
if ! command -v debootstrap >/dev/null; then
    apt-get install -y -qq debootstrap >/dev/null
fi
uri="$(mirror)"
[[ -n "$uri" ]] || { say "no bookworm source found in /etc/apt/sources.list.d"; exit 1; }

cleanup() {
    for m in dev/pts dev proc sys; do umount "$rootfs/$m" 2>/dev/null || true; done
}
trap cleanup EXIT

t0=$SECONDS
if [[ ! -x "$rootfs/bin/bash" ]]; then
    debootstrap --variant=minbase bookworm "$rootfs" "$uri" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log"; say "debootstrap failed"; exit 1; }
fi
say "bare bookworm (minbase): $((SECONDS - t0)) s, $(chroot "$rootfs" dpkg-query -f '.\n' -W | wc -l) packages"
# This machine's sources replace the one line debootstrap wrote (the same
# mirror twice would make apt warn on every update).
if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/"
    rm -f "$rootfs/etc/apt/sources.list"
fi
if [[ -s /etc/apt/sources.list ]]; then cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list"; fi
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$rootfs/$m"; done

# git is not in minbase: the newcomer installs it to clone (the one step by hand).
chroot "$rootfs" bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git ca-certificates sudo >/dev/null'

# step WHO NAME COMMAND: runs COMMAND in a fresh clone as WHO, timed.
step() {
    local who="$1" name="$2" cmd="$3" before after t
    before="$(chroot "$rootfs" dpkg-query -f '.\n' -W | wc -l)"
    t=$SECONDS
    if chroot "$rootfs" su - "$who" -c "cd ~/ringkernel && $cmd" >"$work/$who-$name.log" 2>&1; then
        after="$(chroot "$rootfs" dpkg-query -f '.\n' -W | wc -l)"
        say "$who: $cmd: passed in $((SECONDS - t)) s, $((after - before)) packages installed"
    else
        tail -30 "$work/$who-$name.log"
        say "$who: $cmd: FAILED after $((SECONDS - t)) s (log: $work/$who-$name.log)"
        return 1
    fi
}

git -C "$repo" bundle create "$work/repo.bundle" HEAD >/dev/null 2>&1
status=0
chroot "$rootfs" bash -c 'id newcomer >/dev/null 2>&1 || useradd -m -s /bin/bash newcomer; echo "newcomer ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/newcomer'
for who in root newcomer; do
    home="$(chroot "$rootfs" su - "$who" -c 'echo $HOME')"
    rm -rf "$rootfs$home/ringkernel"
    cp "$work/repo.bundle" "$rootfs/tmp/repo.bundle" && chmod 644 "$rootfs/tmp/repo.bundle"
    chroot "$rootfs" su - "$who" -c 'git clone -q /tmp/repo.bundle ringkernel'
    step "$who" demo "./build.sh demo --seconds 2" || status=1
    step "$who" test "./build.sh test" || status=1
done
say "done: $([[ $status == 0 ]] && echo passed || echo FAILED), $((SECONDS - t0)) s in all; report: $log"
exit $status
