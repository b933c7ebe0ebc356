/* Simulations on WebGPU (sim_webgpu.c, sim_source_wgpu.c): no host-mapped
 * memory and no kernel that runs while the host writes, so both patterns
 * relaunch. RK_SIM_TRADITIONAL: a dispatch per command (a step: one per
 * step), each submitted at once. RK_SIM_PERSISTENT: commands wait on the
 * host until a wait, finish, read or a full ring, then run as one dispatch
 * of one block that takes the batch in order, band by band ("relaunch per
 * command batch"). Answers: every band writes its part, the host adds them
 * after reading them back. */
#ifndef RK_SIM_WEBGPU_H
#define RK_SIM_WEBGPU_H

#include "sim/sim_internal.h"

typedef struct rk_sim_wg rk_sim_wg;

/* Is this a WebGPU context's simulation (decided at create)? */
bool rk__sim_is_webgpu(const rk_device_info *info);
/* The WGSL module of a validated description (sim_source_wgpu.c). */
rk_status rk__sim_wg_source(const rk_sim_desc *desc, char **out);
/* The distinct payload types of the commands: index[i] for command i (-1:
 * none), in order of first use; returns their number. */
size_t rk__sim_wg_payload_types(const rk_sim_desc *desc, int *index);

/* After the fields and scalars exist: the library's buffers, the host's
 * record of answers (sim->mb), the module and its kernels. */
rk_status rk__sim_wg_create(rk_sim *sim, const rk_sim_desc *desc);
void rk__sim_wg_destroy(rk_sim *sim);
rk_status rk__sim_wg_submit(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, const void *payload,
                            size_t size, rk_sim_ticket *ticket);
/* Command t has completed (runs the pending batch first). */
rk_status rk__sim_wg_wait(rk_sim *sim, rk_sim_ticket t);

#endif
