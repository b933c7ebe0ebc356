/* MPI channels live in a plugin, libringkernel_mpi.so, which links Open MPI:
 * libringkernel itself never depends on MPI, so it loads on machines without
 * it, and its rk_mpi_* calls (mpi_loader.c) open the plugin on first use. */
#ifndef RK_MPI_PLUGIN_H
#define RK_MPI_PLUGIN_H

#include "ringkernel/channel_mpi.h"

#define RK__MPI_PLUGIN_ABI 1u
#define RK__MPI_PLUGIN_SYMBOL "rk__mpi_plugin_v1"
#define RK__MPI_PLUGIN_FILE "libringkernel_mpi.so"

typedef struct rk__mpi_plugin {
    uint32_t abi; /* RK__MPI_PLUGIN_ABI */
    rk_status (*create)(const rk_mpi_desc *desc, rk_mpi **out);
    rk_status (*destroy)(rk_mpi *m);
    rk_status (*rank)(rk_mpi *m, int *rank, int *size);
    rk_status (*export_kernel)(rk_mpi *m, rk_kernel *dst, const char *name);
    rk_status (*connect)(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                         uint64_t timeout_ns, rk_channel **out);
    rk_status (*check)(rk_mpi *m);
} rk__mpi_plugin;

#endif
