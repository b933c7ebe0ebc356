/* Helpers the checks share: opening the backend under test, compiling DSL
 * kernels for it, and the ring kernels of the actor checks. */
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "ringkernel/transpile.h"

bool conf_is(const conf_env *env, const char *backend) { return strcmp(env->backend, backend) == 0; }

static void skip_if_absent(rk_status s, const conf_env *env) {
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE || s == RK_UNKNOWN_BACKEND)
        RK_SKIP("backend %s is not present here: %s", env->backend, rk_last_error());
}

rk_context *conf_context(const conf_env *env) {
    const rk_backend *b = NULL;
    rk_status s = rk_backend_find(env->backend, &b);
    skip_if_absent(s, env);
    CHECK_OK(s);
    uint32_t count = 0;
    s = rk_backend_device_count(b, &count);
    skip_if_absent(s, env);
    CHECK_OK(s);
    if (count == 0) RK_SKIP("backend %s has no device here", env->backend);
    rk_context *ctx = NULL;
    CHECK_OK(rk_context_create(b, 0, &ctx));
    return ctx;
}

rk_runtime *conf_runtime(const conf_env *env) {
    rk_runtime_desc d = {.backend = env->backend};
    rk_runtime *rt = NULL;
    rk_status s = rk_runtime_create(&d, &rt);
    skip_if_absent(s, env);
    CHECK_OK(s);
    return rt;
}

rk_module *conf_compile_dsl(rk_context *ctx, const char *dsl_source) {
    const char *backend = rk_backend_name(rk_context_backend(ctx));
    rk_module *m = NULL;
    if (strcmp(backend, "cpu") == 0) {
        CHECK_OK(rk_module_compile(ctx, dsl_source, NULL, &m));
        return m;
    }
    rk_transpile_target target = strcmp(backend, "cuda") == 0     ? RK_TARGET_CUDA
                                 : strcmp(backend, "webgpu") == 0 ? RK_TARGET_WGSL
                                                                  : RK_TARGET_MSL;
    size_t len = strlen(dsl_source) + 64;
    char *wrapped = malloc(len);
    CHECK(wrapped != NULL);
    snprintf(wrapped, len, "#include <ringkernel/dsl.h>\n%s", dsl_source);
    rk_transpile_desc d = {.source = wrapped, .path = "conformance.c", .no_file_system = true, .target = target};
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (s != RK_OK) fprintf(stderr, "transpile for %s: %s\n", backend, r ? rk_transpile_diagnostics_text(r) : "");
    CHECK_OK(s);
    s = rk_module_compile(ctx, rk_transpile_output(r, NULL), NULL, &m);
    CHECK_OK(s);
    rk_transpile_result_destroy(r);
    free(wrapped);
    return m;
}

rk_function *conf_function(rk_module *m, const char *name) {
    rk_function *f = NULL;
    CHECK_OK(rk_module_get_function(m, name, &f));
    CHECK(f != NULL);
    return f;
}

_Noreturn void conf_pass_now(void) {
    fflush(NULL);
    _exit(0);
}

/* mix: stateless. counted: numbers the requests it has seen in its state
 * (meaningful where handlers run one at a time: ordered kernels). */
const char conf_handlers[] = "typedef struct { uint32_t value; int32_t fail_with; } Req;\n"
                             "typedef struct { uint32_t value; uint32_t count; } Resp;\n"
                             "typedef struct { uint32_t seen; } State;\n"
                             "RK_HANDLER int mix(const Req *req, Resp *resp, State *state) {\n"
                             "    resp->value = req->value * 3u + 1u;\n"
                             "    resp->count = 0u;\n"
                             "    return req->fail_with;\n"
                             "}\n"
                             "RK_HANDLER int counted(const Req *req, Resp *resp, State *state) {\n"
                             "    state->seen = state->seen + 1u;\n"
                             "    resp->value = req->value * 3u + 1u;\n"
                             "    resp->count = state->seen;\n"
                             "    return req->fail_with;\n"
                             "}\n";

rk_kernel_desc conf_kernel_desc(const char *handler, uint32_t capacity, rk_exec_mode mode) {
    rk_kernel_desc d = {
        .name = handler,
        .handler_source = conf_handlers,
        .handler_name = handler,
        .message_size = sizeof(conf_req),
        .reply_size = sizeof(conf_resp),
        .state_size = 4,
        .queue_capacity = capacity,
        .mode = mode,
    };
    return d;
}

rk_kernel *conf_launch(rk_runtime *rt, const char *handler, uint32_t capacity, rk_exec_mode mode) {
    rk_kernel_desc d = conf_kernel_desc(handler, capacity, mode);
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK(k != NULL);
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_LAUNCHED);
    return k;
}

void conf_send_range(rk_kernel *k, uint32_t from, uint32_t to) {
    uint64_t first = 0;
    for (uint32_t v = from; v < to; v++) {
        conf_req q = {.value = v};
        uint64_t id = 0;
        CHECK_OK(rk_kernel_send(k, &q, sizeof q, CONF_SECONDS(20), &id));
        if (v == from) first = id;
        CHECK_U64_EQ(id, first + (v - from));
    }
}

void conf_receive_range(rk_kernel *k, uint32_t from, uint32_t to) {
    for (uint32_t v = from; v < to; v++) {
        conf_resp r = {0};
        rk_reply_info info = {0};
        CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(20)));
        CHECK_EQ(info.status, 0);
        CHECK_EQ(r.value, conf_expect(v));
    }
}

rk_kernel_stats conf_stats(rk_kernel *k) {
    rk_kernel_stats st;
    CHECK_OK(rk_kernel_stats_get(k, &st));
    return st;
}
