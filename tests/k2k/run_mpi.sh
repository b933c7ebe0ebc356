#!/bin/sh
# run_mpi.sh MPIEXEC TEST ARGS...: TEST in 2 ranks on this machine. Skips (77)
# where mpiexec is missing (a machine without Open MPI, e.g. a GPU image).
mpiexec=$1
shift
if ! command -v "$mpiexec" >/dev/null 2>&1; then
    echo "SKIP: $mpiexec not found (Open MPI is not installed here)"
    exit 77
fi
exec "$mpiexec" -n 2 "$@"
