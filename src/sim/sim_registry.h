/* The persistent simulations that run, per device. On CUDA, loading or
 * unloading a module waits for every kernel running in the context (every
 * rk context on a device shares the primary context), and a persistent
 * simulation's kernel runs until it is told to stop: a module load beside
 * it would wait forever. That was the wave showcase's "create the wave
 * simulation before a persistent one, or RK_BAD_STATE". Here a module load
 * or unload by a simulation first stops the persistent simulations of its
 * device (each saves nothing: its state is in device memory and its place
 * is the next command's number) and launches them again after, where they
 * left off. The CUDA backend pauses its ring kernels around every module
 * load and unload and calls these hooks in the same section
 * (core/resident.h), so a simulation's own module, another simulation's
 * and a ring kernel's all load beside running simulations.
 *
 * A simulation is driven by one host thread; while another thread creates
 * or destroys a simulation on the same device, the paused ones must not be
 * driven (their commands would wait for the relaunch). */
#ifndef RK_SIM_REGISTRY_H
#define RK_SIM_REGISTRY_H

#include "core/resident.h"
#include "sim/sim_internal.h"

/* A persistent simulation runs (registers the hooks on first use). */
void rk__sim_registry_add(rk_sim *sim);
void rk__sim_registry_remove(rk_sim *sim);
/* The hooks: stop the running persistent simulations on ctx's device, and
 * launch them again where they left off (RK_OK or the first failure; that
 * simulation then reports it from every call). Called by the CUDA backend
 * with its pause lock held, so one pause at a time. */
void rk__sim_registry_pause(rk_context *ctx);
rk_status rk__sim_registry_resume(rk_context *ctx);
/* The same by device, for a context about to be destroyed: on CUDA freeing
 * its pinned host memory (cuMemFreeHost) waits for running kernels too. */
void rk__sim_registry_pause_device(const rk_backend *backend, uint32_t device);
rk_status rk__sim_registry_resume_device(const rk_backend *backend, uint32_t device);

#endif
