/* Every public call that returns rk_status, as X(name, (parameters), (arguments)).
 *
 * The library is built with each name defined to rk__impl_<name> (see
 * src/core/CMakeLists.txt, which reads this list), so the code that implements
 * a call is compiled under the internal name and calls inside the library go
 * straight to it; api_entry.c defines the exported name as a wrapper that
 * first clears rk_last_error(), so the text is "" after every successful call
 * (status.h). A call missing here still works but keeps an older call's text;
 * tests/reliability/api_entry_list_test.sh compares this list with the headers. */
#ifndef RK_API_ENTRY_H
#define RK_API_ENTRY_H

#define RK_PUBLIC_STATUS_CALLS(X) \
    X(rk_backend_find, (const char *name, const rk_backend **out), (name, out)) \
    X(rk_backend_device_count, (const rk_backend *backend, uint32_t *count), (backend, count)) \
    X(rk_backend_device_info, (const rk_backend *backend, uint32_t device, rk_device_info *out), (backend, device, out)) \
    X(rk_select_device, (const char *spec, const rk_backend **backend, uint32_t *device), (spec, backend, device)) \
    X(rk_context_create, (const rk_backend *backend, uint32_t device, rk_context **out), (backend, device, out)) \
    X(rk_context_destroy, (rk_context *ctx), (ctx)) \
    X(rk_context_device_info, (const rk_context *ctx, rk_device_info *out), (ctx, out)) \
    X(rk_context_synchronize, (rk_context *ctx), (ctx)) \
    X(rk_buffer_alloc, (rk_context *ctx, size_t size, rk_buffer **out), (ctx, size, out)) \
    X(rk_buffer_free, (rk_buffer *buffer), (buffer)) \
    X(rk_buffer_alloc_mapped, (rk_context *ctx, size_t size, rk_buffer **out, void **host_ptr), (ctx, size, out, host_ptr)) \
    X(rk_copy_to_device, (rk_context *ctx, rk_buffer *dst, size_t dst_offset, const void *src, size_t size, rk_stream *stream), (ctx, dst, dst_offset, src, size, stream)) \
    X(rk_copy_to_host, (rk_context *ctx, void *dst, const rk_buffer *src, size_t src_offset, size_t size, rk_stream *stream), (ctx, dst, src, src_offset, size, stream)) \
    X(rk_copy_device_to_device, (rk_context *ctx, rk_buffer *dst, size_t dst_offset, const rk_buffer *src, size_t src_offset, size_t size, rk_stream *stream), (ctx, dst, dst_offset, src, src_offset, size, stream)) \
    X(rk_stream_create, (rk_context *ctx, rk_stream **out), (ctx, out)) \
    X(rk_stream_synchronize, (rk_stream *stream), (stream)) \
    X(rk_stream_destroy, (rk_stream *stream), (stream)) \
    X(rk_module_compile, (rk_context *ctx, const char *source, const rk_compile_options *opts, rk_module **out), (ctx, source, opts, out)) \
    X(rk_module_destroy, (rk_module *module), (module)) \
    X(rk_module_get_function, (rk_module *module, const char *name, rk_function **out), (module, name, out)) \
    X(rk_launch, (rk_function *function, const rk_launch_desc *desc), (function, desc)) \
    X(rk_module_from_host_kernels, (rk_context *ctx, const rk_host_kernel *kernels, size_t count, rk_module **out), (ctx, kernels, count, out)) \
    X(rk_runtime_create, (const rk_runtime_desc *desc, rk_runtime **out), (desc, out)) \
    X(rk_runtime_destroy, (rk_runtime *rt), (rt)) \
    X(rk_kernel_launch, (rk_runtime *rt, const rk_kernel_desc *desc, rk_kernel **out), (rt, desc, out)) \
    X(rk_kernel_activate, (rk_kernel *k), (k)) \
    X(rk_kernel_deactivate, (rk_kernel *k), (k)) \
    X(rk_kernel_terminate, (rk_kernel *k, uint64_t timeout_ns), (k, timeout_ns)) \
    X(rk_kernel_destroy, (rk_kernel *k), (k)) \
    X(rk_kernel_send, (rk_kernel *k, const void *message, size_t size, uint64_t timeout_ns, uint64_t *id), (k, message, size, timeout_ns, id)) \
    X(rk_kernel_send_batch, (rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t timeout_ns, size_t *sent, uint64_t *first_id), (k, messages, stride, count, timeout_ns, sent, first_id)) \
    X(rk_kernel_receive, (rk_kernel *k, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns), (k, reply, capacity, info, timeout_ns)) \
    X(rk_kernel_receive_batch, (rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max, uint64_t timeout_ns, size_t *received), (k, replies, stride, infos, max, timeout_ns, received)) \
    X(rk_kernel_stats_get, (rk_kernel *k, rk_kernel_stats *out), (k, out)) \
    X(rk_kernel_call, (rk_kernel *k, const void *request, size_t size, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns), (k, request, size, reply, capacity, info, timeout_ns)) \
    X(rk_kernel_submit, (rk_kernel *k, const void *request, size_t size, uint64_t timeout_ns, rk_call **out), (k, request, size, timeout_ns, out)) \
    X(rk_call_wait, (rk_call *call, void *reply, size_t capacity, rk_reply_info *info, uint64_t timeout_ns), (call, reply, capacity, info, timeout_ns)) \
    X(rk_call_release, (rk_call *call), (call)) \
    X(rk_channel_connect, (rk_kernel *src, uint32_t port, rk_kernel *dst, const rk_channel_desc *desc, rk_channel **out), (src, port, dst, desc, out)) \
    X(rk_channel_stats_get, (rk_channel *ch, rk_channel_stats *out), (ch, out)) \
    X(rk_channel_set_host_replies, (rk_kernel *k, rk_channel_replies which), (k, which)) \
    X(rk_mpi_create, (const rk_mpi_desc *desc, rk_mpi **out), (desc, out)) \
    X(rk_mpi_destroy, (rk_mpi *m), (m)) \
    X(rk_mpi_rank, (rk_mpi *m, int *rank, int *size), (m, rank, size)) \
    X(rk_mpi_export, (rk_mpi *m, rk_kernel *dst, const char *name), (m, dst, name)) \
    X(rk_mpi_connect, (rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc, uint64_t timeout_ns, rk_channel **out), (m, src, port, name, desc, timeout_ns, out)) \
    X(rk_mpi_check, (rk_mpi *m), (m)) \
    X(rk_sim_create, (const rk_sim_desc *desc, rk_sim **out), (desc, out)) \
    X(rk_sim_destroy, (rk_sim *sim), (sim)) \
    X(rk_sim_send, (rk_sim *sim, uint32_t id, const void *payload, size_t size, int first_row, int row_count, rk_sim_ticket *ticket), (sim, id, payload, size, first_row, row_count, ticket)) \
    X(rk_sim_step, (rk_sim *sim, uint32_t count, rk_sim_ticket *ticket), (sim, count, ticket)) \
    X(rk_sim_wait, (rk_sim *sim, rk_sim_ticket ticket, uint64_t *answer), (sim, ticket, answer)) \
    X(rk_sim_finish, (rk_sim *sim), (sim)) \
    X(rk_sim_read_field, (rk_sim *sim, const char *field, size_t first, size_t count, void *dst), (sim, field, first, count, dst)) \
    X(rk_sim_write_field, (rk_sim *sim, const char *field, size_t first, size_t count, const void *src), (sim, field, first, count, src)) \
    X(rk_sim_get_scalar, (rk_sim *sim, const char *name, uint32_t *bits), (sim, name, bits)) \
    X(rk_sim_set_scalar, (rk_sim *sim, const char *name, uint32_t bits), (sim, name, bits)) \
    X(rk_sim_generate_source, (const rk_sim_desc *desc, char **out), (desc, out)) \
    X(rk_transpile, (const rk_transpile_desc *desc, rk_transpile_result **out), (desc, out))

#endif
