/* Ring kernels on CUDA: what the persistent path (cuda_ring_persistent.c)
 * and the launch-per-batch path (cuda_ring_batch.c, traditional and graph)
 * share with the dispatcher in cuda_ring.c. */
#ifndef RK_CUDA_RING_H
#define RK_CUDA_RING_H

#include "cuda/cuda_internal.h"
#include "cuda/cuda_ring_layout.h"

/* Compiles (or finds) the module with both ring kernels for k's handler,
 * the persistent one for blocks of block_warps worker warps. */
rk_status rk__cuda_ring_build(rk_kernel *k, uint32_t block_warps, rk__cuda_ring_layout *layout, CUmodule *module);
/* Copies desc.initial_state (if any) into the kernel's state at dst. */
rk_status rk__cuda_ring_initial_state(rk_kernel *k, CUdeviceptr dst);

/* Fills out->failure and out->failure_reason from a driver result seen on
 * the kernel's stream. */
void rk__cuda_ring_fault(CUresult r, const char *where, rk_status *failure, char *reason, size_t reason_size);

/* Milliseconds without progress before poll reports RK_HUNG
 * ($RK_CUDA_WATCHDOG_MS, default 10000). */
uint64_t rk__cuda_watchdog_ns(void);

/* RK_CUDA_ORDERED_WARPS: worker warps of an ordered kernel without state. */
uint32_t rk__cuda_ordered_warps(void);
/* Whether a chain stage of `warps` ordered warps runs in lanes
 * (RK_CUDA_K2K_LANES; unset: above RK_CUDA_WARPS_PER_BLOCK warps). */
bool rk__cuda_k2k_lanes_for(uint32_t warps);

extern const rk__ring_iface rk__cuda_persistent_ops;

/* K2K: what cuda_channel.c needs of a persistent kernel. */
typedef struct rk__cuda_ring_view {
    rk__cuda_context *ctx;
    volatile uint64_t *hctl; /* the pinned control block: the link table lives there */
    rk__cuda_ring_layout layout;
    uint32_t worker_warps, chunk;
    bool turns; /* ordered: its warps (one block) keep position order, so it may have channels */
} rk__cuda_ring_view;

/* False unless k is a running persistent CUDA ring kernel. */
bool rk__cuda_persistent_view(rk_kernel *k, rk__cuda_ring_view *out);
/* The persistent iface's channel_attach slot (cuda_channel.c). */
rk_status rk__cuda_channel_attach(rk_kernel *src, rk_kernel *dst, struct rk_channel *ch);
/* k is being destroyed (its kernel has stopped): lets go of its channels. */
void rk__cuda_channel_detach(const rk_kernel *k);
extern const rk__ring_iface rk__cuda_batch_ops;
/* The persistent kernels as an owner of resident launches (core/resident.h). */
struct rk__resident_owner;
extern const struct rk__resident_owner rk__cuda_ring_resident;

#endif
