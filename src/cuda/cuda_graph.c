/* Launch graphs on CUDA (backend_impl.h, rk__graph): a chain of kernel
 * nodes built with the driver's graph API rather than captured from a
 * stream, so that each node's handle is at hand to replace its arguments
 * (cuGraphExecKernelNodeSetParams) before a replay without instantiating
 * again. Used by the simulations' graph pattern (src/sim/sim_graph.c). */
#include <stdlib.h>

#include "cuda/cuda_internal.h"

typedef struct cuda_graph {
    rk__graph base;
    rk__cuda_function *fn;
    rk_dim3 grid, block;
    unsigned shared;
    CUgraph graph;
    CUgraphExec exec;
    CUgraphNode nodes[]; /* base.count, in launch order */
} cuda_graph;

static rk__cuda_kernel_node_params node_params(const cuda_graph *g, void **params) {
    return (rk__cuda_kernel_node_params){
        .func = g->fn->fn,
        .gridDimX = g->grid.x, .gridDimY = g->grid.y, .gridDimZ = g->grid.z,
        .blockDimX = g->block.x, .blockDimY = g->block.y, .blockDimZ = g->block.z,
        .sharedMemBytes = g->shared,
        .kernelParams = params,
    };
}

void rk__cuda_graph_destroy(rk__graph *base) {
    if (!base) return;
    cuda_graph *g = (cuda_graph *)base;
    if (rk__cuda_bind(rk__cuda_ctx(base->ctx)) == RK_OK) {
        /* A replay still running is freed by the driver when it ends. */
        if (g->exec) rk__cuda.cuGraphExecDestroy(g->exec);
        if (g->graph) rk__cuda.cuGraphDestroy(g->graph);
    }
    free(g);
}

rk_status rk__cuda_graph_create(rk_function *function, const rk_launch_desc *desc, size_t count, rk__graph **out) {
    rk__cuda_function *f = (rk__cuda_function *)function;
    rk__cuda_context *ctx = rk__cuda_ctx(function->module->ctx);
    if (!rk__cuda.cuGraphCreate || !rk__cuda.cuGraphAddKernelNode || !rk__cuda.cuGraphExecKernelNodeSetParams)
        return rk__fail(RK_UNSUPPORTED, "cuda: this driver lacks the graph calls (cuGraphAddKernelNode_v2, "
                                        "cuGraphExecKernelNodeSetParams_v2; CUDA 12 or later)");
    if (desc->cooperative) return rk__fail(RK_UNSUPPORTED, "cuda: a launch graph of cooperative launches");
    if (count == 0) return rk__fail(RK_INVALID_ARGUMENT, "cuda: a launch graph of no launches");
    rk__cuda_arg_value values[RK_CUDA_MAX_ARGS];
    void *params[RK_CUDA_MAX_ARGS + 1];
    rk_status s = rk__cuda_prepare_launch(ctx, f, desc, values, params);
    if (s != RK_OK) return s;

    cuda_graph *g = calloc(1, sizeof *g + count * sizeof g->nodes[0]);
    if (!g) return rk__fail(RK_OUT_OF_MEMORY, "cuda: out of memory for a launch graph");
    g->base.ctx = &ctx->base;
    g->base.count = count;
    g->fn = f;
    g->grid = desc->grid;
    g->block = desc->block;
    g->shared = (unsigned)desc->shared_memory;
    CUresult r = rk__cuda.cuGraphCreate(&g->graph, 0);
    const char *what = "cuGraphCreate";
    rk__cuda_kernel_node_params p = node_params(g, params);
    for (size_t i = 0; i < count && r == RK_CUDA_SUCCESS; i++) {
        /* Each launch depends on the one before: the stream order. */
        r = rk__cuda.cuGraphAddKernelNode(&g->nodes[i], g->graph, i ? &g->nodes[i - 1] : NULL, i ? 1u : 0u, &p);
        what = "cuGraphAddKernelNode";
    }
    if (r == RK_CUDA_SUCCESS) {
        r = rk__cuda.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0);
        what = "cuGraphInstantiateWithFlags";
    }
    if (r != RK_CUDA_SUCCESS) {
        s = rk__cuda_fail(r, RK_INTERNAL, what);
        rk__cuda_graph_destroy(&g->base);
        return s;
    }
    *out = &g->base;
    return RK_OK;
}

rk_status rk__cuda_graph_set_args(rk__graph *base, size_t index, const rk_arg *args, size_t arg_count) {
    cuda_graph *g = (cuda_graph *)base;
    if (index >= base->count)
        return rk__fail(RK_OUT_OF_RANGE, "cuda: launch %zu of a graph of %zu", index, base->count);
    rk_status s = rk__cuda_bind(rk__cuda_ctx(base->ctx));
    if (s != RK_OK) return s;
    rk__cuda_arg_value values[RK_CUDA_MAX_ARGS];
    void *params[RK_CUDA_MAX_ARGS + 1];
    s = rk__cuda_marshal_args(g->fn, args, arg_count, values, params);
    if (s != RK_OK) return s;
    /* The driver copies the values now: replays already sent keep theirs. */
    rk__cuda_kernel_node_params p = node_params(g, params);
    CUresult r = rk__cuda.cuGraphExecKernelNodeSetParams(g->exec, g->nodes[index], &p);
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "cuGraphExecKernelNodeSetParams");
    return RK_OK;
}

rk_status rk__cuda_graph_launch(rk__graph *base, rk_stream *stream) {
    cuda_graph *g = (cuda_graph *)base;
    rk__cuda_context *ctx = rk__cuda_ctx(base->ctx);
    rk_status s = rk__cuda_bind(ctx);
    if (s != RK_OK) return s;
    CUresult r = rk__cuda.cuGraphLaunch(g->exec, rk__cuda_stream_of(ctx, stream));
    if (r != RK_CUDA_SUCCESS) return rk__cuda_fail(r, RK_INTERNAL, "cuGraphLaunch");
    return RK_OK;
}
