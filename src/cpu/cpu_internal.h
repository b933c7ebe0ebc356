/* What the CPU backend's parts share. The device layer (context, buffers,
 * modules, executor) lives in cpu_backend.c and its neighbours; ring kernels
 * on the CPU live in cpu_ring*.c and use only what is declared here plus the
 * public API. */
#ifndef RK_CPU_INTERNAL_H
#define RK_CPU_INTERNAL_H

#include "core/backend_impl.h"

/* Ring kernels on the CPU (persistent worker threads, or launch per batch). */
extern const rk__ring_iface rk__cpu_ring_iface;

/* Looks up a plain function (not a kernel) exported by a module built from
 * DSL source or from host kernels, e.g. a ring handler. The pointer stays
 * valid until the module is destroyed. RK_NOT_FOUND names the symbol. */
rk_status rk__cpu_module_symbol(rk_module *module, const char *name, void (**fn)(void));

/* Whether ops queued on a CPU stream are still running: synchronize
 * without waiting. */
bool rk__cpu_stream_busy(rk_stream *stream);
/* Waits until the stream is idle or deadline_ns (rk__now_ns's clock). */
void rk__cpu_stream_wait_idle_until(rk_stream *stream, uint64_t deadline_ns);

/* Host pointer behind a CPU buffer (CPU device memory is host memory). */
void *rk__cpu_buffer_data(rk_buffer *buffer);

#endif
