/* Ring kernels on CUDA: chooses the execution pattern and hands each call to
 * the persistent or the launch-per-batch implementation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_ring.h"

/* Each mode's implementation, by rk_exec_mode (docs/architecture.md):
 * graph mode is the launch-per-batch code replaying a CUDA graph. */
static const rk__ring_iface *const modes[] = {
    [RK_MODE_PERSISTENT] = &rk__cuda_persistent_ops,
    [RK_MODE_TRADITIONAL] = &rk__cuda_batch_ops,
    [RK_MODE_GRAPH] = &rk__cuda_batch_ops,
};

static const rk__ring_iface *ops_of(const rk_kernel *k) { return modes[k->mode]; }

static rk_status resolve_mode(rk_context *ctx, rk_exec_mode requested, rk_exec_mode *out) {
    bool persistent = ctx->info.persistent_kernels && ctx->info.cooperative_launch;
    switch (requested) {
    case RK_MODE_DEFAULT:
        *out = persistent ? RK_MODE_PERSISTENT : RK_MODE_TRADITIONAL;
        return RK_OK;
    case RK_MODE_PERSISTENT:
        if (!persistent)
            return rk__fail(RK_UNSUPPORTED,
                            "persistent ring kernels need host-mapped memory and cooperative launch, which %s lacks",
                            ctx->info.name);
        *out = requested;
        return RK_OK;
    case RK_MODE_TRADITIONAL:
    case RK_MODE_GRAPH:
        *out = requested;
        return RK_OK;
    }
    return rk__fail(RK_INVALID_ARGUMENT, "unknown execution mode %d", (int)requested);
}

rk_status rk__cuda_ring_initial_state(rk_kernel *k, CUdeviceptr dst) {
    if (!k->desc.initial_state) return RK_OK;
    rk__cuda_context *ctx = rk__cuda_ctx(k->ctx);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuMemcpyHtoDAsync(dst, k->desc.initial_state, k->desc.state_size, ctx->default_stream);
    if (r == RK_CUDA_SUCCESS) r = rk__cuda.cuStreamSynchronize(ctx->default_stream);
    return r == RK_CUDA_SUCCESS ? RK_OK : rk__cuda_fail(r, RK_INTERNAL, "copying the kernel's initial_state");
}

rk_status rk__cuda_ring_build(rk_kernel *k, uint32_t block_warps, rk__cuda_ring_layout *layout, CUmodule *module) {
    if (!k->desc.handler_source)
        return rk__fail(RK_UNSUPPORTED,
                        "kernel '%s': CUDA ring kernels run DSL handlers (handler_source and handler_name); a host "
                        "function pointer cannot run on the GPU",
                        k->name);
    *layout = rk__cuda_ring_layout_of(k->desc.message_size, k->desc.reply_size, k->desc.state_size);
    layout->block_warps = block_warps;
    /* Lanes only where several ordered warps may use them: a kernel of one
     * warp is compiled exactly as without them (channel.cu says why). */
    layout->lanes = k->desc.ordered && !k->desc.state_size && rk__cuda_k2k_lanes_for(rk__cuda_ordered_warps());
    char *source = NULL, *handler = NULL;
    /* NVRTC's messages name the user's file and lines. */
    if (asprintf(&handler, "#line 1 \"%s\"\n%s", rk__handler_source_name(&k->desc), k->desc.handler_source) < 0)
        return rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    rk_status s = rk__cuda_ring_source(handler, k->desc.handler_name, layout, &source);
    free(handler);
    if (s != RK_OK) return s;
    const rk_compile_options *o = k->desc.compile_options;
    /* $RK_CUDA_RING_DEFINES ("A=1 B=2"): the template's tuning macros
     * (ring.cu, channel.cu) for a measurement without a rebuild. */
    char *env = getenv("RK_CUDA_RING_DEFINES") ? strdup(getenv("RK_CUDA_RING_DEFINES")) : NULL;
    size_t env_count = 0;
    for (const char *c = env; c && *c; c++) env_count += *c != ' ' && (c == env || c[-1] == ' ');
    size_t count = (o ? o->include_dir_count + o->define_count + 1 : 0) + env_count;
    char **options = count ? calloc(count, sizeof *options) : NULL;
    size_t n = 0;
    if (count && !options) s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    char *save = NULL;
    for (char *tok = env && s == RK_OK ? strtok_r(env, " ", &save) : NULL; tok; tok = strtok_r(NULL, " ", &save)) {
        if (asprintf(&options[n], "-D%s", tok) < 0) {
            s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
            break;
        }
        n++;
    }
    free(env);
    for (size_t i = 0; o && s == RK_OK && i < o->include_dir_count; i++)
        if (!o->include_dirs[i] || asprintf(&options[n++], "-I%s", o->include_dirs[i]) < 0)
            s = rk__fail(RK_NULL_ARGUMENT, "kernel '%s': include directory %zu is NULL", k->name, i);
    for (size_t i = 0; o && s == RK_OK && i < o->define_count; i++)
        if (!o->defines[i] || asprintf(&options[n++], "-D%s", o->defines[i]) < 0)
            s = rk__fail(RK_NULL_ARGUMENT, "kernel '%s': define %zu is NULL", k->name, i);
    if (o && s == RK_OK && o->debug_info && asprintf(&options[n++], "-lineinfo") < 0)
        s = rk__fail(RK_OUT_OF_MEMORY, "out of memory");
    if (s == RK_OK) s = rk__cuda_ring_module(rk__cuda_ctx(k->ctx), source, (const char *const *)options, n, module);
    for (size_t i = 0; i < n; i++) free(options[i]);
    free(options);
    free(source);
    return s;
}

void rk__cuda_ring_fault(CUresult r, const char *where, rk_status *failure, char *reason, size_t reason_size) {
    *failure = rk__cuda_is_fault(r) ? RK_DEVICE_FAULT : RK_INTERNAL;
    const char *text = NULL;
    if (rk__cuda.cuGetErrorString) rk__cuda.cuGetErrorString(r, &text);
    snprintf(reason, reason_size, "%s: %s (%s)", where, rk__cuda_error_name(r), text ? text : "no description");
}

uint64_t rk__cuda_watchdog_ns(void) { return rk__watchdog_ns("RK_CUDA_WATCHDOG_MS"); }

/* RK_CUDA_K2K_LANES: 1 lanes from 2 ordered warps on, 0 never (the turns
 * only, at most RK_CUDA_WARPS_PER_BLOCK ordered warps); unset or not a
 * number: lanes above RK_CUDA_WARPS_PER_BLOCK ordered warps only (below,
 * the turns measured no worse). *set: whether it was given. */
static bool k2k_lanes_env(bool *set) {
    const char *env = getenv("RK_CUDA_K2K_LANES");
    char *end = NULL;
    const unsigned long v = env && *env ? strtoul(env, &end, 10) : 0;
    *set = env && *env && !*end;
    return *set ? (v & RK__CUDA_LANES_USE) != 0 : true;
}

bool rk__cuda_k2k_lanes_for(uint32_t warps) {
    bool set;
    return warps > 1 && k2k_lanes_env(&set) && (set || warps > RK_CUDA_WARPS_PER_BLOCK);
}

/* Worker warps of an ordered kernel without state: RK_CUDA_ORDERED_WARPS
 * (1 to RK_CUDA_MAX_ORDERED_WARPS with the lanes allowed, else 1 to
 * RK_CUDA_WARPS_PER_BLOCK; default 1; larger values are clamped).
 * Its warps keep send order (the turns and lanes of channel.cu), so several
 * give a K2K stage more throughput with the same order; one keeps the
 * footprint small. */
uint32_t rk__cuda_ordered_warps(void) {
    const char *env = getenv("RK_CUDA_ORDERED_WARPS");
    if (!env || !*env) return 1;
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    if (*end || v < 1) return 1;
    bool set;
    const unsigned long most = k2k_lanes_env(&set) ? RK_CUDA_MAX_ORDERED_WARPS : RK_CUDA_WARPS_PER_BLOCK;
    return v > most ? (uint32_t)most : (uint32_t)v;
}

static rk_status start(rk_kernel *k) {
    rk_status s = rk__cuda_bind(rk__cuda_ctx(k->ctx));
    return s != RK_OK ? s : ops_of(k)->start(k);
}

static rk_status try_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                          size_t *accepted) {
    return ops_of(k)->try_send(k, messages, stride, count, first_id, accepted);
}

static rk_status try_receive(rk_kernel *k, void *replies, size_t stride, rk_reply_info *infos, size_t max,
                             size_t *received) {
    return ops_of(k)->try_receive(k, replies, stride, infos, max, received);
}

static rk_status set_active(rk_kernel *k, bool active) { return ops_of(k)->set_active(k, active); }

static rk_status request_terminate(rk_kernel *k) { return ops_of(k)->request_terminate(k); }

static rk_status poll(rk_kernel *k, rk__control *out) { return ops_of(k)->poll(k, out); }

static rk_status destroy(rk_kernel *k) { return ops_of(k)->destroy(k); }

/* K2K: only the persistent mode has channels; the others say so. */
static rk_status channel_attach(rk_kernel *src, rk_kernel *dst, struct rk_channel *ch) {
    const rk__ring_iface *o = ops_of(src);
    if (!o->channel_attach)
        return rk__fail(RK_UNSUPPORTED, "rk_channel_connect: kernel '%s' runs in %s mode; cuda channels need persistent kernels",
                        src->name, rk_exec_mode_name(src->mode));
    return o->channel_attach(src, dst, ch);
}

static rk_status set_host_replies(rk_kernel *k, bool failures_only) {
    const rk__ring_iface *o = ops_of(k);
    if (!o->set_host_replies)
        return rk__fail(RK_UNSUPPORTED, "rk_channel_set_host_replies: kernel '%s' runs in %s mode, which has no channels",
                        k->name, rk_exec_mode_name(k->mode));
    return o->set_host_replies(k, failures_only);
}

const rk__ring_iface rk__cuda_ring_iface = {
    .resolve_mode = resolve_mode,
    .start = start,
    .try_send = try_send,
    .try_receive = try_receive,
    .set_active = set_active,
    .request_terminate = request_terminate,
    .poll = poll,
    .destroy = destroy,
    .channel_attach = channel_attach,
    .set_host_replies = set_host_replies,
};
