/* Which devices a persistent wave simulation runs on. On CUDA, loading or
 * unloading a module waits for every running kernel of the context, and a
 * persistent simulation's kernel runs until the simulation is destroyed: a
 * module load beside it would wait forever, and so would an unload. So
 * wave_sim refuses to create a simulation on such a device, and defers the
 * unloading of a destroyed simulation's module (and its context) until the
 * last persistent kernel on the device has stopped. Thread-safe. */
#ifndef WAVE_REGISTRY_H
#define WAVE_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/device.h"

/* A persistent kernel runs on this device and loading a module there would
 * wait for it. */
bool wave_registry_busy(const rk_backend *backend, uint32_t device);

/* A persistent kernel started on the device. */
void wave_registry_started(const rk_backend *backend, uint32_t device);

/* A simulation is done with its module and context (both may be NULL).
 * was_running: its persistent kernel has just stopped. Unloads them now, or
 * once no persistent kernel runs on the device any more. */
void wave_registry_release(const rk_backend *backend, uint32_t device, rk_module *module, rk_context *ctx,
                           bool was_running);

#endif
