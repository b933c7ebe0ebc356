/* The CPU backend: always present, one device (the machine), kernels run by
 * the executor in cpu_exec.c. Device facts come from the running system. */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cpu_device.h"

enum { DEFAULT_SPIN_US = 20 };

/* ---- device facts ------------------------------------------------------------- */

static unsigned online_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

/* The value of the first "key : value" line of /proc/cpuinfo, trimmed. */
static bool cpuinfo_value(const char *key, char *out, size_t out_size) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char line[512];
    size_t key_len = strlen(key);
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, key_len) != 0) continue;
        const char *p = line + key_len;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != ':') continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        size_t n = strcspn(p, "\n");
        while (n && isspace((unsigned char)p[n - 1])) n--;
        if (n == 0) continue;
        snprintf(out, out_size, "%.*s", (int)n, p);
        found = true;
    }
    fclose(f);
    return found;
}

static void cpu_vendor(char *out, size_t size) {
    char v[64];
    if (cpuinfo_value("vendor_id", v, sizeof v)) {
        snprintf(out, size, "%s", strcmp(v, "GenuineIntel") == 0   ? "Intel"
                                  : strcmp(v, "AuthenticAMD") == 0 ? "AMD"
                                                                   : v);
        return;
    }
    /* Arm: the implementer code of the MIDR register. */
    static const struct {
        unsigned code;
        const char *name;
    } implementers[] = {{0x41, "Arm"},      {0x42, "Broadcom"}, {0x43, "Cavium"},   {0x46, "Fujitsu"},
                        {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},   {0x51, "Qualcomm"}, {0x61, "Apple"},
                        {0xc0, "Ampere"}};
    if (cpuinfo_value("CPU implementer", v, sizeof v)) {
        unsigned code = (unsigned)strtoul(v, NULL, 0);
        for (size_t i = 0; i < sizeof implementers / sizeof implementers[0]; i++) {
            if (implementers[i].code == code) {
                snprintf(out, size, "%s", implementers[i].name);
                return;
            }
        }
    }
    snprintf(out, size, "unknown");
}

static void machine_name(char *out, size_t size) {
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(out, size, "%.31s", u.machine);
    else
        snprintf(out, size, "unknown");
}

/* Executors working on one grid: RK_CPU_THREADS, else one per core. */
static rk_status thread_count(unsigned *out) {
    const char *env = getenv("RK_CPU_THREADS");
    if (!env || !*env) {
        *out = online_cores();
        return RK_OK;
    }
    char *end = NULL;
    errno = 0;
    unsigned long n = strtoul(env, &end, 10);
    if (errno || *end || n < 1 || n > 1024 || !isdigit((unsigned char)env[0]))
        return rk__fail(RK_INVALID_ARGUMENT, "RK_CPU_THREADS='%s' is not a thread count from 1 to 1024", env);
    *out = (unsigned)n;
    return RK_OK;
}

/* RK_CPU_SPIN_US: how long stream threads and synchronize poll before sleeping. */
static rk_status spin_time(uint64_t *ns) {
    const char *env = getenv("RK_CPU_SPIN_US");
    *ns = DEFAULT_SPIN_US * 1000u;
    if (!env || !*env) return RK_OK;
    char *end = NULL;
    errno = 0;
    unsigned long us = strtoul(env, &end, 10);
    if (errno || *end || us > 1000000 || !isdigit((unsigned char)env[0]))
        return rk__fail(RK_INVALID_ARGUMENT, "RK_CPU_SPIN_US='%s' is not a number of microseconds from 0 to 1000000",
                        env);
    *ns = (uint64_t)us * 1000u;
    return RK_OK;
}

static rk_status cpu_probe(uint32_t *device_count, char *reason, size_t reason_size) {
    (void)reason;
    (void)reason_size;
    *device_count = 1;
    return RK_OK;
}

static rk_status cpu_device_info(uint32_t device, rk_device_info *out) {
    (void)device;
    char arch[32];
    machine_name(arch, sizeof arch);
    unsigned cores = online_cores();
    if (!cpuinfo_value("model name", out->name, sizeof out->name) &&
        !cpuinfo_value("Model", out->name, sizeof out->name))
        snprintf(out->name, sizeof out->name, "%s CPU (%u cores)", arch, cores);
    cpu_vendor(out->vendor, sizeof out->vendor);
    snprintf(out->backend, sizeof out->backend, "cpu");
    snprintf(out->driver, sizeof out->driver, "ringkernel %s, %s fibers", rk_version(), rk__cpu_fiber_kind());
    snprintf(out->architecture, sizeof out->architecture, "%s", arch);
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    out->total_memory = pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : 0;
    out->multiprocessors = cores;
    out->warp_size = RK_CPU_WARP_SIZE; /* emulated: shfl and ballot act on 32 lanes */
    out->max_threads_per_block = RK_CPU_MAX_THREADS_PER_BLOCK;
    out->max_block_dim[0] = 1024;
    out->max_block_dim[1] = 1024;
    out->max_block_dim[2] = 64;
    out->max_grid_dim[0] = 2147483647u;
    out->max_grid_dim[1] = 65535;
    out->max_grid_dim[2] = 65535;
    out->max_shared_memory_per_block = RK_CPU_MAX_SHARED_MEMORY;
    out->cooperative_launch = true; /* up to one block per worker thread (cpu_pool.c) */
    out->persistent_kernels = true;
    out->host_mapped_memory = true;
    return RK_OK;
}

/* ---- context ---------------------------------------------------------------------- */

static const rk__context_iface cpu_context_iface;

rk_status rk__cpu_context_start_pool(rk__cpu_context *c) {
    rk_status s = RK_OK;
    pthread_mutex_lock(&c->pool_lock);
    if (!c->pool) s = rk__cpu_pool_create(c->threads - 1, &c->pool); /* the stream thread is the last executor */
    pthread_mutex_unlock(&c->pool_lock);
    return s;
}

static rk_status cpu_context_create(const rk_backend *backend, uint32_t device, rk_context **out) {
    (void)backend;
    (void)device;
    unsigned threads = 0;
    uint64_t spin_ns = 0;
    rk_status s = thread_count(&threads);
    if (s == RK_OK) s = spin_time(&spin_ns);
    if (s != RK_OK) return s;
    rk__cpu_context *c = calloc(1, sizeof *c);
    if (!c) return rk__fail(RK_OUT_OF_MEMORY, "rk_context_create: out of memory");
    c->base.iface = &cpu_context_iface;
    c->threads = threads;
    c->spin_ns = spin_ns;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
    s = rk__cpu_context_streams_init(c);
    if (s != RK_OK) {
        pthread_mutex_destroy(&c->pool_lock);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return s;
    }
    *out = &c->base;
    return RK_OK;
}

static void cpu_context_destroy(rk_context *ctx) {
    rk__cpu_context *c = rk__cpu_ctx(ctx);
    rk__cpu_context_streams_destroy(c); /* waits for queued work first */
    rk__cpu_pool_destroy(c->pool);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static rk_status cpu_context_synchronize(rk_context *ctx) {
    return rk__cpu_context_streams_synchronize(rk__cpu_ctx(ctx));
}

static const rk__context_iface cpu_context_iface = {
    .destroy = cpu_context_destroy,
    .synchronize = cpu_context_synchronize,
    .buffer_alloc = rk__cpu_buffer_alloc,
    .buffer_free = rk__cpu_buffer_free,
    .copy_to_device = rk__cpu_copy_to_device,
    .copy_to_host = rk__cpu_copy_to_host,
    .copy_device_to_device = rk__cpu_copy_device_to_device,
    .stream_create = rk__cpu_stream_create,
    .stream_synchronize = rk__cpu_stream_synchronize,
    .stream_destroy = rk__cpu_stream_destroy,
    .module_compile = rk__cpu_module_compile,
    .module_from_host_kernels = rk__cpu_module_from_host_kernels,
    .module_destroy = rk__cpu_module_destroy,
    .module_get_function = rk__cpu_module_get_function,
    .launch = rk__cpu_launch,
    .buffer_alloc_mapped = rk__cpu_buffer_alloc_mapped,
    .ring = &rk__cpu_ring_iface,
};

static const rk__backend_iface cpu_backend_iface = {
    .probe = cpu_probe,
    .device_info = cpu_device_info,
    .context_create = cpu_context_create,
};

const rk_backend rk__cpu_backend = {
    .name = "cpu",
    .iface = &cpu_backend_iface,
};
