#!/bin/bash
# K2K channels across processes on the GPU machine (issue 14): 2 MPI ranks on
# one host, each with a CUDA sink kernel on the same GPU, through
# tests/k2k/test_k2k_mpi (50 000 messages checked in order, the failure
# cases, a peer that goes silent). Under a minute; the CPU run beside it is
# the baseline on the same machine.
#
#   scripts/device-mpi.sh prepare          here: bundle this machine's Open MPI into .mpi/
#   (device) scripts/device-mpi.sh BUILD   carry: BUILD (and .mpi where the image has no Open MPI)
#
# Exit 77 when no Open MPI can be found there (neither installed nor carried).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/.mpi

if [ "${1:-}" = prepare ]; then
    # Open MPI's files and the libraries they need, for a machine without it.
    # Relocated with OPAL_PREFIX and friends below (not tried on the GPU image yet).
    rm -rf "$bundle" && mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/share" "$bundle/etc"
    cp -L /usr/bin/orterun /usr/bin/orted "$bundle/bin/" && ln -s orterun "$bundle/bin/mpirun"
    cp -a /usr/lib/x86_64-linux-gnu/openmpi/lib/. "$bundle/lib/"
    cp -a /usr/lib/x86_64-linux-gnu/pmix2 "$bundle/pmix2"
    cp -a /usr/share/openmpi "$bundle/share/" && cp -a /etc/openmpi/. "$bundle/etc/"
    for f in "$bundle"/bin/* "$bundle"/lib/*.so* "$bundle"/lib/openmpi3/*.so "$bundle"/pmix2/lib/*.so*; do
        ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
    done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do
        [ -e "$bundle/lib/$(basename "$lib")" ] || cp -L "$lib" "$bundle/lib/"
    done
    du -sh "$bundle"
    exit 0
fi

build=$root/${1:-build-dev}
test_bin=$build/tests/k2k/test_k2k_mpi
[ -x "$test_bin" ] || { echo "device-mpi: $test_bin missing (build with MPI found)"; exit 1; }
[ -e "$build/libringkernel_mpi.so" ] || { echo "device-mpi: $build/libringkernel_mpi.so missing (CMake did not find MPI)"; exit 1; }
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

mpirun=$(command -v mpirun || true)
if [ -z "$mpirun" ] && [ -x "$bundle/bin/mpirun" ]; then
    mpirun=$bundle/bin/mpirun
    export OPAL_PREFIX=$bundle OPAL_BINDIR=$bundle/bin OPAL_LIBDIR=$bundle/lib OPAL_PKGLIBDIR=$bundle/lib/openmpi3 \
        OPAL_DATADIR=$bundle/share OPAL_PKGDATADIR=$bundle/share/openmpi OPAL_SYSCONFDIR=$bundle/etc \
        PMIX_INSTALL_PREFIX=$bundle/pmix2 PATH=$bundle/bin:$PATH LD_LIBRARY_PATH=$bundle/lib:$LD_LIBRARY_PATH
fi
if [ -z "$mpirun" ]; then
    echo "SKIP: no Open MPI on this machine (run 'scripts/device-mpi.sh prepare' here and carry .mpi)"
    exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
    OMPI_MCA_pml=ob1 RK_CACHE_DIR=${RK_CACHE_DIR:-/tmp/rk-device-cache} CUDA_MODULE_LOADING=EAGER
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1
"$mpirun" --version 2>&1 | head -1
rc=0
for backend in cuda cpu; do
    t0=$SECONDS
    timeout --kill-after=5 40 "$mpirun" -np 2 "$test_bin" "$backend"
    r=$?
    echo "device-mpi: $backend exit $r in $((SECONDS - t0)) s"
    [ "$backend" = cuda ] && rc=$r
done
exit $rc
