/* Relaunch ring kernels on WebGPU: round-trip latency (one message at a
 * time: send, then wait for its reply) and batch throughput, with a minimal
 * WGSL handler and with the demo handler transpiled from DSL C. A program
 * that prints figures, not a test:
 *     bench_webgpu_ring [messages-for-latency] [messages-for-throughput]
 * Exits 77 when the WebGPU backend is unavailable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringkernel/ringkernel.h"

#define SEC 1000000000ull

static const char plus_one_wgsl[] =
    "fn plus_one(req: u32, resp: u32) -> i32 {\n"
    "    rk_out[resp] = rk_in[req] + 1u;\n"
    "    rk_out[resp + 1u] = rk_in[req + 1u];\n"
    "    return 0;\n"
    "}\n";

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) == (size_t)n) t[n] = '\0';
    fclose(f);
    return t;
}

static int fail(const char *what, rk_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, rk_status_name(s), rk_last_error());
    return 1;
}

/* One message at a time. The request's first word is its running number;
 * the reply's first word must be that plus one (plus_one) or echo it (demo). */
static int latency(rk_runtime *rt, const rk_kernel_desc *d, int n, const char *label) {
    rk_kernel *k = NULL;
    rk_status s = rk_kernel_launch(rt, d, &k);
    if (s != RK_OK) return fail("launch", s);
    rk_kernel_activate(k);
    uint64_t *t = malloc((size_t)n * sizeof *t);
    uint32_t req[16] = {0}, reply[4];
    int errors = 0;
    for (int i = -20; i < n; i++) { /* 20 warm-up round trips */
        req[0] = (uint32_t)(i + 20);
        req[1] = req[0] * 7u;
        uint64_t t0 = now_ns();
        s = rk_kernel_send(k, req, d->message_size, 10 * SEC, NULL);
        if (s == RK_OK) s = rk_kernel_receive(k, reply, sizeof reply, NULL, 10 * SEC);
        uint64_t t1 = now_ns();
        if (s != RK_OK) return fail("round trip", s);
        bool ok = d->reply_size == 8 ? reply[0] == req[0] + 1 : reply[0] == req[0];
        errors += !ok;
        if (i >= 0) t[i] = t1 - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_u64);
    double mean = 0;
    for (int i = 0; i < n; i++) mean += (double)t[i];
    mean /= n;
    rk_kernel_stats st;
    rk_kernel_stats_get(k, &st);
    printf("%-34s round trip  n=%d  p50 %7.1f us  p99 %7.1f us  mean %7.1f us  max %8.1f us  dispatches %llu  errors %d\n",
           label, n, (double)t[n / 2] / 1e3, (double)t[(size_t)((double)n * 0.99)] / 1e3, mean / 1e3,
           (double)t[n - 1] / 1e3, (unsigned long long)st.launches, errors);
    free(t);
    rk_kernel_destroy(k);
    return errors != 0;
}

/* Sends in batches of `batch`, receiving as replies come, until n are back. */
static int throughput(rk_runtime *rt, const rk_kernel_desc *d, int n, uint32_t batch, const char *label) {
    rk_kernel *k = NULL;
    rk_status s = rk_kernel_launch(rt, d, &k);
    if (s != RK_OK) return fail("launch", s);
    rk_kernel_activate(k);
    size_t msz = d->message_size, rsz = d->reply_size;
    unsigned char *reqs = calloc(batch, msz), *replies = calloc(batch, rsz);
    for (uint32_t i = 0; i < batch; i++) ((uint32_t *)(void *)(reqs + i * msz))[0] = i;
    int sent = 0, got = 0, errors = 0;
    uint64_t t0 = now_ns();
    while (got < n) {
        if (sent < n) {
            size_t m = 0, want = (size_t)(n - sent) < batch ? (size_t)(n - sent) : batch;
            s = rk_kernel_send_batch(k, reqs, msz, want, RK_NO_WAIT, &m, NULL);
            if (s != RK_OK && s != RK_TIMEOUT && s != RK_WOULD_BLOCK) return fail("send", s);
            sent += (int)m;
        }
        size_t m = 0;
        s = rk_kernel_receive_batch(k, replies, rsz, NULL, batch, sent > got ? SEC : RK_NO_WAIT, &m);
        if (s != RK_OK && s != RK_TIMEOUT && s != RK_WOULD_BLOCK) return fail("receive", s);
        for (size_t i = 0; i < m && rsz == 8; i++) {
            uint32_t v = ((uint32_t *)(void *)(replies + i * rsz))[0];
            errors += v < 1 || v > batch;
        }
        got += (int)m;
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    rk_kernel_stats st;
    rk_kernel_stats_get(k, &st);
    printf("%-34s batches of %5u  %8d msgs  %9.0f msg/s  %6.2f MB/s in  dispatches %6llu (%.0f msgs each)  errors %d\n",
           label, batch, n, n / secs, (double)n * (double)msz / secs / 1e6, (unsigned long long)st.launches,
           (double)n / (double)(st.launches ? st.launches : 1), errors);
    free(reqs);
    free(replies);
    rk_kernel_destroy(k);
    return errors != 0;
}

/* The floor under a relaunch: one dispatch plus a 4-byte readback, through
 * the device layer. */
static int dispatch_floor(rk_runtime *rt, int n) {
    static const char src[] = "@group(0) @binding(0) var<storage, read_write> d: array<u32>;\n"
                              "@compute @workgroup_size(1) fn bump() { d[0] = d[0] + 1u; }\n";
    rk_context *ctx = rk_runtime_context(rt);
    rk_module *m = NULL;
    rk_function *f = NULL;
    rk_buffer *b = NULL;
    rk_status s = rk_module_compile(ctx, src, NULL, &m);
    if (s == RK_OK) s = rk_module_get_function(m, "bump", &f);
    if (s == RK_OK) s = rk_buffer_alloc(ctx, 4, &b);
    if (s != RK_OK) return fail("dispatch floor", s);
    uint64_t *t = malloc((size_t)n * sizeof *t);
    rk_arg arg = RK_ARG_BUF(b);
    rk_launch_desc d = {.grid = {1, 1, 1}, .block = {1, 1, 1}, .args = &arg, .arg_count = 1};
    uint32_t v = 0;
    for (int i = -20; i < n && s == RK_OK; i++) {
        uint64_t t0 = now_ns();
        s = rk_launch(f, &d);
        if (s == RK_OK) s = rk_copy_to_host(ctx, &v, b, 0, 4, NULL);
        if (i >= 0) t[i] = now_ns() - t0;
    }
    if (s != RK_OK) return fail("dispatch floor", s);
    qsort(t, (size_t)n, sizeof *t, cmp_u64);
    printf("%-34s dispatch + readback  n=%d  p50 %7.1f us  p99 %7.1f us  (counter %u, expected %d)\n",
           "device layer, no ring", n, (double)t[n / 2] / 1e3, (double)t[(size_t)((double)n * 0.99)] / 1e3, v, n + 20);
    free(t);
    rk_buffer_free(b);
    rk_module_destroy(m);
    return v != (uint32_t)(n + 20);
}

int main(int argc, char **argv) {
    int nlat = argc > 1 ? atoi(argv[1]) : 2000;
    int nthr = argc > 2 ? atoi(argv[2]) : 1000000;
    const rk_backend *b = NULL;
    uint32_t count = 0;
    rk_backend_find("webgpu", &b);
    if (!b || rk_backend_device_count(b, &count) != RK_OK || count == 0) {
        fprintf(stderr, "SKIP: webgpu backend unavailable: %s\n", b ? rk_backend_unavailable_reason(b) : "not built");
        return 77;
    }
    rk_device_info info;
    rk_backend_device_info(b, 0, &info);
    printf("device: %s | %s | driver %s\n", info.name, info.architecture, info.driver);
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = "webgpu"};
    rk_status s = rk_runtime_create(&rd, &rt);
    if (s != RK_OK) return fail("runtime", s);

    char path[1024];
    snprintf(path, sizeof path, "%s/examples/handlers/demo_handler.c", RK_SOURCE_DIR);
    char *demo = read_text(path);
    rk_kernel_desc plus = {.name = "plus_one", .handler_source = plus_one_wgsl, .handler_name = "plus_one",
                           .message_size = 8, .reply_size = 8, .queue_capacity = 4096};
    rk_kernel_desc dem = {.name = "demo", .handler_source = demo, .handler_name = "demo_handler",
                          .message_size = 64, .reply_size = 16, .queue_capacity = 4096};
    int bad = dispatch_floor(rt, nlat);
    bad |= latency(rt, &plus, nlat, "WGSL plus_one, 8 B");
    if (demo) bad |= latency(rt, &dem, nlat, "DSL demo_handler (transpiled), 64 B");
    static const uint32_t batches[] = {64, 256, 1024, 4096};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++)
        bad |= throughput(rt, &plus, nthr, batches[i], "WGSL plus_one, 8 B");
    if (demo) bad |= throughput(rt, &dem, nthr, 4096, "DSL demo_handler (transpiled), 64 B");
    free(demo);
    rk_runtime_destroy(rt);
    return bad;
}
