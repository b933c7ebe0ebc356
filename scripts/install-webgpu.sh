#!/usr/bin/env bash
# Installs what the WebGPU backend needs on Debian 12 (bookworm):
#   - Mesa 25's Vulkan drivers (lavapipe, a CPU Vulkan driver) from
#     bookworm-backports: Debian 12's own Mesa 22 is rejected by Dawn, which
#     then silently offers only its Null adapter;
#   - the Vulkan loader (libvulkan1);
#   - the Dawn build shipped in the npm package bun-webgpu-linux-x64, unpacked
#     into .deps/webgpu/ inside the source tree (gitignored).
# On macOS only the Dawn step runs: bun-webgpu-darwin-arm64/-x64 (Dawn on
# Metal; needs npm, no root). Those packages stop at 0.1.5; the Linux 0.1.5
# build passed the WebGPU tests here, so its darwin twin shares the webgpu.h
# the loader declares, but the darwin build itself was never run
# (docs/metal.md).
# Idempotent: a second run changes nothing. Needs root (or sudo) for apt.
# The backports source takes its mirror from the machine's own Debian source,
# so no mirror host is named here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.deps/webgpu"
NPM_PACKAGE="bun-webgpu-linux-x64@0.1.7"
LIB="$DEST/package/libwebgpu_wrapper.so"
OS="$(uname -s)"
if [ "$OS" = Darwin ]; then
  case "$(uname -m)" in
    arm64) NPM_PACKAGE="bun-webgpu-darwin-arm64@0.1.5" ;;
    x86_64) NPM_PACKAGE="bun-webgpu-darwin-x64@0.1.5" ;;
    *) printf 'install-webgpu: no Dawn build for macOS on %s\n' "$(uname -m)"; exit 1 ;;
  esac
  LIB="$DEST/package/libwebgpu_wrapper.dylib"
fi
BACKPORTS_FILE=/etc/apt/sources.list.d/ringkernel-bookworm-backports.sources
MIN_MESA_MAJOR=25

say() { printf 'install-webgpu: %s\n' "$*"; }

# ---- Dawn (webgpu.h) from the npm package -----------------------------------
install_dawn() {
if [ -f "$LIB" ]; then
  say "Dawn already unpacked: $LIB"
else
  if ! command -v npm >/dev/null 2>&1; then
    [ "$OS" = Darwin ] && { say "npm is needed: install Node.js (for example with Homebrew: brew install node)"; exit 1; }
    need_root npm
    apt_update
    apt_install nodejs npm # without recommends: ~390 packages instead of ~520
  fi
  mkdir -p "$DEST"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  say "fetching $NPM_PACKAGE with npm (from npm's configured registry)"
  # No silent retries: a failed fetch shows npm's own error at once.
  if ! (cd "$tmp" && npm pack --fetch-retries=0 --loglevel=error "$NPM_PACKAGE" >"$tmp/npm.out" 2>"$tmp/npm.err"); then
    cat "$tmp/npm.err" >&2
    say "npm pack $NPM_PACKAGE failed (npm's error above)"; exit 1
  fi
  tarball="$(ls "$tmp"/*.tgz | head -n1)"
  tar -xzf "$tarball" -C "$DEST"
  [ -f "$LIB" ] || { say "the package did not contain ${LIB#"$DEST/"}"; exit 1; }
  say "Dawn unpacked: $LIB"
fi
}

if [ "$OS" = Darwin ]; then
  # Dawn runs on Metal there: no Vulkan driver to install.
  install_dawn
  exit 0
fi

# Root (or sudo) is asked for only when a system package is missing: Dawn
# goes into the source tree and needs none.
SUDO=""
need_root() {
  if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      say "$1 is missing and installing it needs root: run as root, install sudo, or install it by hand"; exit 1
    fi
  fi
}

# install-deps.sh has already run `apt-get update` when it sets RK_APT_UPDATED.
apt_updated="${RK_APT_UPDATED:-0}"
apt_update() {
  if [ "$apt_updated" -eq 0 ]; then
    $SUDO apt-get update -qq
    apt_updated=1
  fi
}

# apt-get install, quiet (dpkg's thousands of progress lines go to a log that
# is shown only when the install fails).
apt_install() {
  local log
  log="$(mktemp)"
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 \
      --no-install-recommends "$@" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; say "apt-get install $* failed (output above)"; exit 1
  fi
  rm -f "$log"
}

installed_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }

# The first URI of the stanza (deb822) or line (one-line format) that serves
# the plain "bookworm" suite.
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri="$(awk '
      /^[[:space:]]*$/ { if (u != "" && s) { print u; exit } u = ""; s = 0; next }
      /^URIs:/   { u = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") s = 1 }
      END { if (u != "" && s) print u }' "$f" | head -n1)"
    if [ -n "$uri" ]; then printf '%s\n' "$uri"; return 0; fi
  done
  if [ -f /etc/apt/sources.list ]; then
    # deb [arch=amd64 signed-by=...] URI SUITE COMPONENTS: skip the options.
    uri="$(awk '$1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == "bookworm") { print $i; exit }
      }' /etc/apt/sources.list)"
    if [ -n "$uri" ]; then printf '%s\n' "$uri"; return 0; fi
  fi
  return 1
}

have_backports_source() {
  grep -rqs --include='*.sources' --include='*.list' 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/
}

# ---- Mesa 25 Vulkan drivers and the loader --------------------------------
mesa="$(installed_version mesa-vulkan-drivers)"
if [ -n "$mesa" ] && [ "${mesa%%.*}" -ge "$MIN_MESA_MAJOR" ] 2>/dev/null; then
  say "mesa-vulkan-drivers $mesa already installed"
else
  need_root mesa-vulkan-drivers
  if ! have_backports_source; then
    mirror="$(debian_mirror)" || { say "cannot find the Debian mirror (URIs: of the bookworm suite)"; exit 1; }
    say "adding bookworm-backports from the machine's own mirror"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$mirror" | $SUDO tee "$BACKPORTS_FILE" >/dev/null
    apt_updated=0 # a new source
  fi
  apt_update
  apt_install -t bookworm-backports mesa-vulkan-drivers
  say "mesa-vulkan-drivers $(installed_version mesa-vulkan-drivers) installed"
fi

if [ -z "$(installed_version libvulkan1)" ]; then
  need_root libvulkan1
  apt_update
  apt_install libvulkan1
fi

install_dawn
