/* K2K channels across processes (and machines) through MPI.
 *
 * Each process makes one rk_mpi endpoint. A kernel that should receive
 * from other ranks is exported under a name; a kernel's output port is
 * connected to such a name, on whichever rank exports it:
 *
 *     rank 1:  rk_mpi_export(m, sink, "sink");
 *     rank 0:  rk_channel_desc cd = {.message_size = sizeof(Msg)};
 *              rk_mpi_connect(m, source, 0, "sink", &cd, timeout_ns, &ch);
 *
 * From then on the source's handler emits on port 0 as on any channel
 * (ringkernel/channel.h) and the sink's handler gets the messages. A
 * progress thread per endpoint relays between the kernels' host-side
 * channel rings and MPI; kernels may be on any backend and device of the
 * process (a rank can hold kernels on several GPUs: each link attaches to
 * its own kernel).
 *
 * Semantics, as channel.h's:
 *   - In order, exactly once, per channel. Replies of relayed messages go to
 *     the destination's host per desc.replies, with ids
 *     RK_CHANNEL_MESSAGE_ID(the destination side's channel id, sequence).
 *   - Backpressure by credit: the sender's rank sends no more than the
 *     channel's capacity beyond what the destination has taken, so a HOLD
 *     channel's source stops taking input when the destination falls
 *     behind (REPORT: rk_emit returns RK_EMIT_FULL). Cycles across
 *     processes are not detected: close any cycle with a REPORT channel.
 *   - Terminating the destination closes its MPI inputs: the sender's
 *     later emits return RK_EMIT_CLOSED, and terminate waits until every
 *     message accepted upstream has arrived and reached the kernel.
 *   - A destination that faults: the sender's emits return
 *     RK_EMIT_FAULTED. A peer that never exports the name: rk_mpi_connect
 *     returns RK_TIMEOUT naming it. A peer that dies or hangs mid-run
 *     (nothing heard for peer_timeout_ns, heartbeats included): its
 *     channels close with RK_TIMEOUT (what the source's emits return),
 *     rk_mpi_check returns RK_TIMEOUT naming the rank and the kernels, and
 *     a destination's terminate no longer waits for it. Never a hang.
 *
 * MPI: rk_mpi_create initializes MPI (MPI_THREAD_MULTIPLE asked, at least
 * MPI_THREAD_SERIALIZED needed) unless the application already has, and
 * rk_mpi_destroy finalizes it only in the first case. The endpoint uses
 * its own duplicate of the communicator, so the application's own MPI
 * traffic does not mix with it; with MPI_THREAD_SERIALIZED the application
 * must not call MPI between create and destroy. Every rank that takes part
 * must call rk_mpi_destroy (it says goodbye to the peers).
 *
 * Built only when CMake finds MPI; otherwise every call returns
 * RK_UNSUPPORTED. */
#ifndef RINGKERNEL_CHANNEL_MPI_H
#define RINGKERNEL_CHANNEL_MPI_H

#include "channel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_mpi rk_mpi;

/* How payloads travel between the kernels' memory and MPI. */
typedef enum rk_mpi_transport {
    RK_MPI_TRANSPORT_DEFAULT = 0, /* HOST */
    RK_MPI_TRANSPORT_HOST,        /* staged through host memory (every backend) */
    RK_MPI_TRANSPORT_DEVICE,      /* device pointers handed to a CUDA-aware MPI: reserved,
                                     RK_UNSUPPORTED in this version */
} rk_mpi_transport;

typedef struct rk_mpi_desc {
    /* An MPI_Comm * to duplicate, or NULL for MPI_COMM_WORLD. A pointer so
     * this header needs no mpi.h. */
    const void *comm;
    /* A peer heard nothing from (data or heartbeats) for this long fails
     * its channels. 0: the RK_MPI_TIMEOUT_MS environment variable, else 10 s. */
    uint64_t peer_timeout_ns;
    rk_mpi_transport transport;
} rk_mpi_desc;

/* desc may be NULL (all defaults). */
rk_status rk_mpi_create(const rk_mpi_desc *desc, rk_mpi **out);

/* Closes the endpoint: the source side of each channel sends what it holds
 * (within the peer's credit and peer_timeout_ns) and says goodbye; the
 * progress thread stops; MPI is finalized if rk_mpi_create initialized it.
 * Exported kernels are no longer reachable. Call it after terminating the
 * kernels whose channels go through it, and before destroying them. */
rk_status rk_mpi_destroy(rk_mpi *m);

/* This process's rank and the number of ranks (either may be NULL). */
rk_status rk_mpi_rank(rk_mpi *m, int *rank, int *size);

/* Makes dst reachable from every rank as name (1 .. 63 characters, unique
 * across the ranks). Refused when the name is taken here, dst is
 * terminating or has failed. */
rk_status rk_mpi_export(rk_mpi *m, rk_kernel *dst, const char *name);

/* Connects src's output port to the kernel exported as name on any rank,
 * waiting up to timeout_ns for some rank to export it (RK_TIMEOUT naming
 * it otherwise). desc as for rk_channel_connect; capacity 0 takes the
 * destination's queue_capacity. Refused, naming both kernels and the rank,
 * when the sizes differ or the destination cannot take the channel. The
 * channel (out may be NULL) is the source side: its statistics count what
 * src emitted and what left for the peer. */
rk_status rk_mpi_connect(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                         uint64_t timeout_ns, rk_channel **out);

/* RK_OK while every channel of the endpoint is healthy; otherwise the first
 * failure (RK_TIMEOUT for a silent peer), with rk_last_error() naming the
 * rank and the kernels. */
rk_status rk_mpi_check(rk_mpi *m);

#ifdef __cplusplus
}
#endif
#endif
