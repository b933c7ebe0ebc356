/* Registry and device selection with the CPU backend: by name, by index,
 * through RK_BACKEND, and the errors for bad names. */
#include "cpu_test.h"

static void select_ok(const char *spec, uint32_t want_device) {
    const rk_backend *b = NULL;
    uint32_t d = 99;
    CHECK_OK(rk_select_device(spec, &b, &d));
    CHECK(b != NULL);
    CHECK_STR_CONTAINS(rk_backend_name(b), "cpu");
    CHECK_EQ(strlen(rk_backend_name(b)), 3);
    CHECK_EQ(d, want_device);
}

int main(void) {
    unsetenv("RK_BACKEND");

    /* the registry lists the CPU backend last (it is the fallback) */
    size_t n = rk_backend_count();
    CHECK_GE(n, 1);
    CHECK_EQ(strcmp(rk_backend_name(rk_backend_at(n - 1)), "cpu"), 0);
    CHECK(rk_backend_at(n) == NULL);
    const rk_backend *cpu = NULL;
    CHECK_OK(rk_backend_find("cpu", &cpu));
    CHECK(cpu == rk_backend_at(n - 1));
    uint32_t count = 0;
    CHECK_OK(rk_backend_device_count(cpu, &count));
    CHECK_EQ(count, 1);
    CHECK_EQ(strcmp(rk_backend_unavailable_reason(cpu), ""), 0);

    select_ok("cpu", 0);
    select_ok("cpu:0", 0);

    const rk_backend *b = NULL;
    uint32_t d = 0;
    CHECK_STATUS(rk_select_device("cpu:5", &b, &d), RK_NO_DEVICE);
    CHECK_STR_CONTAINS(rk_last_error(), "device 5");

    CHECK_STATUS(rk_select_device("tpu", &b, &d), RK_UNKNOWN_BACKEND);
    CHECK_STR_CONTAINS(rk_last_error(), "tpu");
    CHECK_STR_CONTAINS(rk_last_error(), "cpu"); /* the message lists the known backends */
    CHECK_STATUS(rk_backend_find("CPU", &b), RK_UNKNOWN_BACKEND);

    CHECK_STATUS(rk_select_device("cpu:x", &b, &d), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "cpu:x");
    CHECK_STATUS(rk_select_device("cpu:", &b, &d), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_select_device("cpu:0x", &b, &d), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_select_device(":0", &b, &d), RK_UNKNOWN_BACKEND);
    CHECK_STATUS(rk_select_device("cpu", NULL, &d), RK_NULL_ARGUMENT);

    /* RK_BACKEND steers automatic selection */
    CHECK_EQ(setenv("RK_BACKEND", "cpu", 1), 0);
    select_ok(NULL, 0);
    select_ok("auto", 0);
    CHECK_EQ(setenv("RK_BACKEND", "cpu:0", 1), 0);
    select_ok(NULL, 0);
    CHECK_EQ(setenv("RK_BACKEND", "cpu:3", 1), 0);
    CHECK_STATUS(rk_select_device(NULL, &b, &d), RK_NO_DEVICE);
    CHECK_EQ(setenv("RK_BACKEND", "nonesuch", 1), 0);
    CHECK_STATUS(rk_select_device("auto", &b, &d), RK_UNKNOWN_BACKEND);
    CHECK_STR_CONTAINS(rk_last_error(), "nonesuch");
    /* an explicit name wins over RK_BACKEND */
    select_ok("cpu", 0);

    /* a runtime on the CPU opens a working context */
    CHECK_EQ(setenv("RK_BACKEND", "cpu", 1), 0);
    rk_runtime *rt = NULL;
    CHECK_OK(rk_runtime_create(NULL, &rt));
    CHECK_EQ(strcmp(rk_runtime_backend_name(rt), "cpu"), 0);
    rk_context *ctx = rk_runtime_context(rt);
    CHECK(ctx != NULL);
    rk_buffer *buf = NULL;
    CHECK_OK(rk_buffer_alloc(ctx, 64, &buf));
    CHECK_OK(rk_buffer_free(buf));
    CHECK_OK(rk_runtime_destroy(rt));
    unsetenv("RK_BACKEND");

    /* RK_CPU_THREADS: a bad value is refused with its name, a good one works */
    CHECK_EQ(setenv("RK_CPU_THREADS", "many", 1), 0);
    rk_context *c = NULL;
    CHECK_STATUS(rk_context_create(cpu, 0, &c), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "RK_CPU_THREADS");
    CHECK_EQ(setenv("RK_CPU_THREADS", "0", 1), 0);
    CHECK_STATUS(rk_context_create(cpu, 0, &c), RK_INVALID_ARGUMENT);
    CHECK_EQ(setenv("RK_CPU_THREADS", "3", 1), 0);
    CHECK_OK(rk_context_create(cpu, 0, &c));
    CHECK_OK(rk_context_destroy(c));
    CHECK_STATUS(rk_context_create(cpu, 1, &c), RK_NO_DEVICE);
    unsetenv("RK_CPU_THREADS");

    printf("cpu selection: ok\n");
    return 0;
}
