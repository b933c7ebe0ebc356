/* Assembles the NVRTC source of a ring kernel: the layout as macros, dsl.h,
 * the user's handler, then the embedded template. #line directives keep
 * compile errors pointing at the handler's own lines. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "cuda/cuda_ring_layout.h"

extern const char rk__cuda_template_ring[];
extern const char rk__cuda_template_channel[];
extern const char rk__cuda_template_channel_solo[];
extern const char rk__cuda_template_channel_lanes[];

static bool is_identifier(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

rk_status rk__cuda_ring_source(const char *handler_source, const char *handler_name,
                               const rk__cuda_ring_layout *l, char **out) {
    if (!handler_source || !l || !out)
        return rk__fail(RK_NULL_ARGUMENT, "rk__cuda_ring_source: %s is NULL",
                        !handler_source ? "handler_source" : !l ? "layout" : "out");
    if (l->block_warps < 1 || l->block_warps > RK_CUDA_MAX_ORDERED_WARPS)
        return rk__fail(RK_INVALID_ARGUMENT, "block_warps %u is not 1 to %d", l->block_warps, RK_CUDA_MAX_ORDERED_WARPS);
    if (!is_identifier(handler_name))
        return rk__fail(RK_INVALID_ARGUMENT, "handler_name '%s' is not a C identifier",
                        handler_name ? handler_name : "(null)");
    char *text = NULL;
    int n = asprintf(&text,
                     "/* ringkernel CUDA ring kernel for handler %s */\n%s"
                     "#define RK_MSG_BYTES %u\n#define RK_REPLY_BYTES %u\n#define RK_STATE_BYTES %u\n"
                     "#define RK_IN_LL %u\n#define RK_OUT_LL %u\n#define RK_IN_STAGE %u\n#define RK_OUT_STAGE %u\n"
                     "#define RK_WARPS_PER_BLOCK %d\n"
                     "#include \"ringkernel/dsl.h\"\n"
                     "#line 1 \"handler.cu\"\n%s\n"
                     "#line 1 \"channel.cu\"\n%s\n"
                     "#line 1 \"ring.cu\"\n#define RK_HANDLER_FN %s\n%s\n"
                     "#line 1 \"channel_solo.cu\"\n%s\n"
                     "#line 1 \"channel_lanes.cu\"\n%s",
                     handler_name, l->lanes ? "#define RK_LANES_BUILT 1\n" : "", l->msg_bytes, l->reply_bytes,
                     l->state_bytes, l->in_ll, l->out_ll, l->in_stage, l->out_stage, (int)l->block_warps,
                     handler_source, rk__cuda_template_channel, handler_name, rk__cuda_template_ring,
                     rk__cuda_template_channel_solo, rk__cuda_template_channel_lanes);
    if (n < 0) return rk__fail(RK_OUT_OF_MEMORY, "out of memory building the ring kernel source");
    *out = text;
    return RK_OK;
}
