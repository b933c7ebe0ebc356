#!/usr/bin/env bash
# One entry point for a new machine: installs what is missing, configures,
# builds, and then runs the demo or the tests.
#
#   ./build.sh demo [rk demo options]   build and run `rk demo` on the best backend
#   ./build.sh test                     build with warnings as errors, run every test
#   ./build.sh bench [rk bench options] build (Release, build-release/) and run `rk bench`
#
# Options for test (used by CI):
#   --sanitize address,undefined | thread   separate build directory per sanitizer
#   --label LABEL                           run only tests with this CTest label
#   --no-deps                               do not check/install dependencies
# Environment: RK_JOBS (parallel jobs; default: number of cores),
#              RK_BUILD_DIR (build directory; default build/, build-asan/, ...).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jobs="${RK_JOBS:-$(nproc 2>/dev/null || echo 2)}"

usage() {
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

log() { printf '\n==> %s\n' "$*"; }

# configure BUILD_DIR [cmake -D options...]
configure() {
    local dir="$1"
    shift
    log "configuring $dir"
    cmake -S "$root" -B "$dir" -G Ninja "$@"
}

build() {
    log "building $1"
    cmake --build "$1" -j "$jobs"
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift

case "$cmd" in
demo)
    dir="${RK_BUILD_DIR:-$root/build}"
    "$root/scripts/install-deps.sh"
    configure "$dir"
    build "$dir"
    log "running rk demo $*"
    exec "$dir/tools/rk/rk" demo "$@"
    ;;
bench)
    dir="${RK_BUILD_DIR:-$root/build-release}"
    "$root/scripts/install-deps.sh"
    configure "$dir" -DCMAKE_BUILD_TYPE=Release
    build "$dir"
    log "running rk bench $*"
    exec "$dir/tools/rk/rk" bench "$@"
    ;;
test)
    sanitize="" label="" deps=1
    while [[ $# -gt 0 ]]; do
        case "$1" in
        --sanitize) sanitize="${2:?--sanitize needs address,undefined or thread}"; shift 2 ;;
        --sanitize=*) sanitize="${1#*=}"; shift ;;
        --label) label="${2:?--label needs a CTest label}"; shift 2 ;;
        --label=*) label="${1#*=}"; shift ;;
        --no-deps) deps=0; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "build.sh test: unknown option '$1'" >&2; exit 2 ;;
        esac
    done
    case "$sanitize" in
    "") default_dir="$root/build" ;;
    address,undefined | undefined,address | address) default_dir="$root/build-asan" ;;
    thread) default_dir="$root/build-tsan" ;;
    *) echo "build.sh test: --sanitize takes address,undefined or thread, not '$sanitize'" >&2; exit 2 ;;
    esac
    dir="${RK_BUILD_DIR:-$default_dir}"
    ((deps)) && "$root/scripts/install-deps.sh"
    configure "$dir" -DRK_WERROR=ON -DRK_SANITIZE="$sanitize"
    build "$dir"
    ctest_args=(--test-dir "$dir" --output-on-failure -j "$jobs")
    [[ -n "$label" ]] && ctest_args+=(-L "$label")
    if [[ -n "$sanitize" ]]; then
        # Fail on the first report; the tests' own exit codes stay meaningful.
        export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
        export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
        export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
    fi
    log "testing $dir${sanitize:+ (sanitize=$sanitize)}"
    ctest "${ctest_args[@]}"
    ;;
"" | -h | --help | help)
    usage
    [[ -z "$cmd" ]] && exit 2
    exit 0
    ;;
*)
    echo "build.sh: unknown command '$cmd' (try ./build.sh --help)" >&2
    exit 2
    ;;
esac
