/* Ring kernels on CUDA: what the persistent path (cuda_ring_persistent.c)
 * and the launch-per-batch path (cuda_ring_batch.c, traditional and graph)
 * share with the dispatcher in cuda_ring.c. */
#ifndef RK_CUDA_RING_H
#define RK_CUDA_RING_H

#include "cuda/cuda_internal.h"
#include "cuda/cuda_ring_layout.h"

/* Compiles (or finds) the module with both ring kernels for k's handler. */
rk_status rk__cuda_ring_build(rk_kernel *k, rk__cuda_ring_layout *layout, CUmodule *module);
/* Copies desc.initial_state (if any) into the kernel's state at dst. */
rk_status rk__cuda_ring_initial_state(rk_kernel *k, CUdeviceptr dst);

/* Fills out->failure and out->failure_reason from a driver result seen on
 * the kernel's stream. */
void rk__cuda_ring_fault(CUresult r, const char *where, rk_status *failure, char *reason, size_t reason_size);

/* Milliseconds without progress before poll reports RK_HUNG
 * ($RK_CUDA_WATCHDOG_MS, default 10000). */
uint64_t rk__cuda_watchdog_ns(void);

extern const rk__ring_iface rk__cuda_persistent_ops;
extern const rk__ring_iface rk__cuda_batch_ops;

#endif
