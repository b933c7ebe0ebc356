/* Actor layer, execution modes and failures: each mode works or is refused
 * as ringkernel.h states for the backend; a faulting handler fails its
 * kernel with RK_DEVICE_FAULT and a stuck one with RK_HUNG where the backend
 * promises it, and otherwise behaves as the header says instead. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"

/* What ringkernel.h ("Execution modes per backend") promises. */
static bool mode_supported(const conf_env *env, const rk_device_info *info, rk_exec_mode mode, bool *one_launch) {
    bool cuda_persistent = info->persistent_kernels && info->cooperative_launch;
    if (conf_is(env, "cpu")) {
        *one_launch = mode == RK_MODE_DEFAULT || mode == RK_MODE_PERSISTENT;
        return mode != RK_MODE_GRAPH;
    }
    if (conf_is(env, "cuda")) {
        *one_launch = mode == RK_MODE_PERSISTENT || (mode == RK_MODE_DEFAULT && cuda_persistent);
        return mode != RK_MODE_PERSISTENT || cuda_persistent;
    }
    /* WebGPU and Metal: relaunch per batch, named RK_MODE_TRADITIONAL. */
    *one_launch = false;
    return mode == RK_MODE_DEFAULT || mode == RK_MODE_TRADITIONAL;
}

static void modes(const conf_env *env) {
    rk_runtime *rt = conf_runtime(env);
    rk_device_info info;
    CHECK_OK(rk_context_device_info(rk_runtime_context(rt), &info));
    const rk_exec_mode all[] = {RK_MODE_DEFAULT, RK_MODE_PERSISTENT, RK_MODE_TRADITIONAL, RK_MODE_GRAPH};
    for (size_t i = 0; i < 4; i++) {
        bool one_launch = false;
        bool supported = mode_supported(env, &info, all[i], &one_launch);
        rk_kernel_desc d = conf_kernel_desc("mix", 64, all[i]);
        rk_kernel *k = NULL;
        /* progress on stderr: a check that times out names its last step */
        fprintf(stderr, "mode %s: launch\n", rk_exec_mode_name(all[i]));
        rk_status s = rk_kernel_launch(rt, &d, &k);
        if (!supported) {
            if (s != RK_UNSUPPORTED) fprintf(stderr, "mode %s: expected RK_UNSUPPORTED\n", rk_exec_mode_name(all[i]));
            CHECK_EQ(s, RK_UNSUPPORTED);
            CHECK(k == NULL);
            continue;
        }
        if (s != RK_OK) fprintf(stderr, "mode %s: %s\n", rk_exec_mode_name(all[i]), rk_last_error());
        CHECK_OK(s);
        CHECK_OK(rk_kernel_activate(k));
        /* four separate batches; one request in ten reports a handler error */
        for (uint32_t v = 0; v < 40; v++) {
            conf_req q = {.value = v, .fail_with = v % 10 == 3 ? -2 : 0};
            CHECK_OK(rk_kernel_send(k, &q, sizeof q, CONF_SECONDS(20), NULL));
            if (v % 10 != 9) continue;
            fprintf(stderr, "mode %s: receiving %u..%u\n", rk_exec_mode_name(all[i]), v - 9, v);
            for (uint32_t w = v - 9; w <= v; w++) {
                conf_resp r;
                rk_reply_info info;
                CHECK_OK(rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(20)));
                CHECK_U64_EQ(info.id, w + 1);
                CHECK_EQ(info.status, w % 10 == 3 ? -2 : 0);
                CHECK_EQ(r.value, conf_expect(w));
            }
        }
        rk_kernel_stats st = conf_stats(k);
        CHECK_U64_EQ(st.messages_processed, 40);
        CHECK_U64_EQ(st.errors_encountered, 4);
        CHECK_EQ(st.state, RK_KERNEL_ACTIVE);
        if (one_launch)
            CHECK_U64_EQ(st.launches, 1);
        else
            CHECK_GE(st.launches, 4); /* a launch per batch: four separate batches */
        fprintf(stderr, "mode %s: terminate\n", rk_exec_mode_name(all[i]));
        CHECK_OK(rk_kernel_terminate(k, CONF_SECONDS(20)));
        CHECK_OK(rk_kernel_destroy(k));
        /* ordered kernels: refused by CUDA's traditional and graph modes */
        fprintf(stderr, "mode %s: ordered\n", rk_exec_mode_name(all[i]));
        d.ordered = true;
        s = rk_kernel_launch(rt, &d, &k);
        if (conf_is(env, "cuda") &&
            (all[i] == RK_MODE_TRADITIONAL || all[i] == RK_MODE_GRAPH || (all[i] == RK_MODE_DEFAULT && !one_launch))) {
            CHECK_EQ(s, RK_UNSUPPORTED);
        } else {
            CHECK_OK(s);
            CHECK_OK(rk_kernel_destroy(k));
        }
    }
    CHECK_OK(rk_runtime_destroy(rt));
}

/* A fault is outside the dialect every backend accepts (no NULL pointers in
 * WGSL), so the faulting handler is each backend's own language, not marked
 * RK_HANDLER: the launch passes it on without the dialect check. CPU: an
 * integer division by zero (SIGFPE); CUDA: __trap(). */
static const char crash_source_cpu[] = "typedef struct { uint32_t value; int32_t fail_with; } Req;\n"
                                       "typedef struct { uint32_t value; uint32_t count; } Resp;\n"
                                       "int crash(const Req *req, Resp *resp, void *state) {\n"
                                       "    (void)state;\n"
                                       "    resp->value = req->value * 3u + 1u;\n"
                                       "    if (req->value == 7u) resp->value /= (uint32_t)req->fail_with;\n"
                                       "    return 0;\n"
                                       "}\n";
static const char crash_source_cuda[] = "typedef struct { unsigned int value; int fail_with; } Req;\n"
                                        "typedef struct { unsigned int value; unsigned int count; } Resp;\n"
                                        "__device__ int crash(const Req *req, Resp *resp, void *state) {\n"
                                        "    (void)state;\n"
                                        "    if (req->value == 7u) __trap();\n"
                                        "    resp->value = req->value * 3u + 1u;\n"
                                        "    return 0;\n"
                                        "}\n";

/* A handler that faults: RK_DEVICE_FAULT (CPU, CUDA). The CPU answers every
 * accepted request (failure status from the crash on); CUDA reports the
 * failure from receive once the published replies are taken. WebGPU has no
 * such handler: C is not WGSL, so its launch is refused (WGSL itself has
 * nothing that faults). */
static void handler_fault(const conf_env *env) {
#ifdef CONF_SANITIZED
    if (conf_is(env, "cpu"))
        RK_SKIP("sanitizer build: the CPU backend does not catch crashes here "
                "(ringkernel.h)");
#endif
    rk_runtime *rt = conf_runtime(env);
    rk_kernel_desc d = {.name = "crash",
                        .handler_source = conf_is(env, "cuda") ? crash_source_cuda : crash_source_cpu,
                        .handler_name = "crash",
                        .message_size = sizeof(conf_req),
                        .reply_size = sizeof(conf_resp),
                        .queue_capacity = 64,
                        .workers = 1};
    rk_kernel *k = NULL;
    rk_status s = rk_kernel_launch(rt, &d, &k);
    if (conf_is(env, "webgpu") || conf_is(env, "metal")) {
        CHECK_EQ(s, RK_COMPILE_FAILED);
        CHECK(k == NULL);
        CHECK_OK(rk_runtime_destroy(rt));
        return;
    }
    CHECK_OK(s);
    CHECK_OK(rk_kernel_activate(k));
    conf_send_range(k, 0, 7);
    conf_receive_range(k, 0, 7);
    conf_send_range(k, 7, 10); /* ids 8 (the crash), 9, 10 */
    size_t answered = 0;
    for (;;) {
        conf_resp r;
        rk_reply_info info;
        s = rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(30));
        if (s != RK_OK) break;
        CHECK(info.id >= 8 && info.id <= 10);
        if (info.id == 8) CHECK_EQ(info.status, RK_DEVICE_FAULT);
        if (info.status == RK_DEVICE_FAULT) CHECK_EQ(r.value, 0);
        answered++;
    }
    CHECK_STATUS(s, RK_DEVICE_FAULT);
    if (conf_is(env, "cpu")) CHECK_EQ(answered, 3); /* each accepted request answered */
    rk_kernel_stats st = conf_stats(k);
    CHECK_EQ(st.state, RK_KERNEL_FAILED);
    CHECK_EQ(st.failure, RK_DEVICE_FAULT);
    conf_req q = {.value = 1};
    CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_DEVICE_FAULT);
    CHECK_STATUS(rk_kernel_activate(k), RK_DEVICE_FAULT);
    CHECK_STATUS(rk_kernel_terminate(k, CONF_SECONDS(5)), RK_DEVICE_FAULT);
    CHECK_OK(rk_kernel_destroy(k));
    CHECK_OK(rk_runtime_destroy(rt));
}

/* Stuck on request 13: 2^64 steps whose result is used, so no compiler may
 * drop the loop (an empty infinite loop may be removed: LLVM in lavapipe
 * does, so WebGPU would answer it at once). */
static const char spin_source[] = "typedef struct { uint32_t value; int32_t fail_with; } Req;\n"
                                  "typedef struct { uint32_t value; uint32_t count; } Resp;\n"
                                  "RK_HANDLER int spin(const Req *req, Resp *resp, void *state) {\n"
                                  "    uint32_t acc = req->value;\n"
                                  "    if (req->value == 13u) {\n"
                                  "        for (uint32_t i = 0u; i < 0xFFFFFFFFu; i++)\n"
                                  "            for (uint32_t j = 0u; j < 0xFFFFFFFFu; j++) acc = acc * "
                                  "1664525u + j;\n"
                                  "    }\n"
                                  "    resp->value = req->value * 3u + 1u;\n"
                                  "    resp->count = acc;\n"
                                  "    return 0;\n"
                                  "}\n";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A handler that never returns. CPU and CUDA: the watchdog fails the kernel
 * with RK_HUNG within its limit. WebGPU has no watchdog: terminate times
 * out and destroy abandons the dispatch with RK_HUNG. */
static void handler_hang(const conf_env *env) {
    setenv("RK_CPU_WATCHDOG_MS", "300", 1);
    setenv("RK_CUDA_WATCHDOG_MS", "300", 1);
    rk_runtime *rt = conf_runtime(env);
    rk_kernel_desc d = {.name = "spin",
                        .handler_source = spin_source,
                        .handler_name = "spin",
                        .message_size = sizeof(conf_req),
                        .reply_size = sizeof(conf_resp),
                        .queue_capacity = 16,
                        .workers = 1};
    rk_kernel *k = NULL;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    conf_send_range(k, 0, 3);
    conf_receive_range(k, 0, 3);
    conf_req q = {.value = 13};
    CHECK_OK(rk_kernel_send(k, &q, sizeof q, CONF_SECONDS(5), NULL));
    conf_resp r;
    rk_reply_info info;
    double t0 = now_s();
    if (conf_is(env, "cpu") || conf_is(env, "cuda")) {
        rk_status s;
        while ((s = rk_kernel_receive(k, &r, sizeof r, &info, CONF_SECONDS(30))) == RK_OK)
            CHECK_EQ(info.status, RK_HUNG); /* the stuck request, answered with the failure */
        CHECK_STATUS(s, RK_HUNG);
        CHECK_LT(now_s() - t0, 20);
        rk_kernel_stats st = conf_stats(k);
        CHECK_EQ(st.state, RK_KERNEL_FAILED);
        CHECK_EQ(st.failure, RK_HUNG);
        CHECK_STATUS(rk_kernel_send(k, &q, sizeof q, RK_NO_WAIT, NULL), RK_HUNG);
        /* CPU: the stuck thread was cancelled, destroy has nothing left to
         * stop. CUDA: the kernel cannot be stopped and is left running. */
        CHECK_STATUS(rk_kernel_destroy(k), conf_is(env, "cpu") ? RK_OK : RK_HUNG);
        if (conf_is(env, "cpu")) CHECK_OK(rk_runtime_destroy(rt));
        conf_pass_now(); /* a CUDA context with a running kernel is not torn down */
    }
    CHECK_STATUS(rk_kernel_receive(k, &r, sizeof r, &info, CONF_MS(300)), RK_TIMEOUT);
    CHECK_STATUS(rk_kernel_terminate(k, CONF_MS(300)), RK_TIMEOUT);
    CHECK_EQ(rk_kernel_get_state(k), RK_KERNEL_TERMINATING);
    t0 = now_s();
    CHECK_STATUS(rk_kernel_destroy(k), RK_HUNG);
    CHECK_STR_CONTAINS(rk_last_error(), "did not finish");
    /* the device is left behind, not waited for: the runtime goes too */
    CHECK_OK(rk_runtime_destroy(rt));
    CHECK_LT(now_s() - t0, 30);
    conf_pass_now(); /* lavapipe keeps running the abandoned dispatch until exit */
}

static const conf_check mode_checks[] = {
    {"modes", modes, CONF_SHARED},
    {"handler_fault", handler_fault, CONF_OWN_PROCESS},
    {"handler_hang", handler_hang, CONF_OWN_PROCESS},
};
CONF_GROUP(conf_group_actor_modes, "actor.modes", mode_checks);
