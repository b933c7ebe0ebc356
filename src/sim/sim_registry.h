/* The persistent simulations that run, per device. On CUDA, loading or
 * unloading a module waits for every kernel running in the context (every
 * rk context on a device shares the primary context), and a persistent
 * simulation's kernel runs until it is told to stop: a module load beside
 * it would wait forever. That was the wave showcase's "create the wave
 * simulation before a persistent one, or RK_BAD_STATE". Here a module load
 * or unload by a simulation first stops the persistent simulations of its
 * device (each saves nothing: its state is in device memory and its place
 * is the next command's number) and launches them again after, where they
 * left off. Ring kernels (rk_kernel) pause themselves the same way inside
 * the CUDA backend, and that backend calls the pause hook here too
 * (rk__resident_pause in core/backend_impl.h), so a ring kernel can be
 * created beside a running simulation.
 *
 * A simulation is driven by one host thread; while another thread creates
 * or destroys a simulation on the same device, the paused ones must not be
 * driven (their commands would wait for the relaunch). */
#ifndef RK_SIM_REGISTRY_H
#define RK_SIM_REGISTRY_H

#include "sim/sim_internal.h"

void rk__sim_registry_add(rk_sim *sim);
void rk__sim_registry_remove(rk_sim *sim);
/* Stops the running persistent simulations on ctx's device (but `except`),
 * when its backend waits for running kernels to load modules. Holds a lock
 * until rk__sim_registry_resume. */
void rk__sim_registry_pause(rk_context *ctx, const rk_sim *except);
/* Launches them again; RK_OK or the first failure (that simulation then
 * reports it from every call). */
rk_status rk__sim_registry_resume(rk_context *ctx);

#endif
