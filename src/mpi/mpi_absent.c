/* MPI channels in a build without MPI: every call says so. */
#include "core/backend_impl.h"
#include "ringkernel/channel_mpi.h"

static rk_status absent(const char *fn) {
    return rk__fail(RK_UNSUPPORTED, "%s: this ringkernel was built without MPI (install libopenmpi-dev and rebuild)",
                    fn);
}

rk_status rk_mpi_create(const rk_mpi_desc *desc, rk_mpi **out) {
    (void)desc;
    if (out) *out = NULL;
    return absent("rk_mpi_create");
}

rk_status rk_mpi_destroy(rk_mpi *m) {
    (void)m;
    return absent("rk_mpi_destroy");
}

rk_status rk_mpi_rank(rk_mpi *m, int *rank, int *size) {
    (void)m, (void)rank, (void)size;
    return absent("rk_mpi_rank");
}

rk_status rk_mpi_export(rk_mpi *m, rk_kernel *dst, const char *name) {
    (void)m, (void)dst, (void)name;
    return absent("rk_mpi_export");
}

rk_status rk_mpi_connect(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                         uint64_t timeout_ns, rk_channel **out) {
    (void)m, (void)src, (void)port, (void)name, (void)desc, (void)timeout_ns;
    if (out) *out = NULL;
    return absent("rk_mpi_connect");
}

rk_status rk_mpi_check(rk_mpi *m) {
    (void)m;
    return absent("rk_mpi_check");
}
