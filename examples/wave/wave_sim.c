/* The wave simulation's host side: one device, one field, two patterns
 * behind the same commands (wave_sim.h): the API, create and destroy. The
 * persistent pattern's command ring is in wave_ring.c, the traditional
 * pattern's launches in wave_launch.c. Only the public ringkernel API. */
#include "wave_sim_internal.h"
#include "wave_registry.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char wave_protocol_source[];
extern const char wave_kernels_source[];
extern const char wave_words_source[];
extern const char wave_relay_source[];
extern const char wave_persistent_source[];

/* ---- errors --------------------------------------------------------------- */

static _Thread_local char error_text[640];

const char *wave_last_error(void) { return error_text; }

rk_status wave__fail(rk_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof error_text, fmt, ap);
    va_end(ap);
    return status;
}

rk_status wave__lib_fail(rk_status status, const char *what) {
    return wave__fail(status, "%s: %s: %s", what, rk_status_name(status), rk_last_error());
}

uint64_t wave__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void wave__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- names and source ------------------------------------------------------ */

const char *wave_pattern_name(wave_pattern pattern) {
    return pattern == WAVE_TRADITIONAL ? "traditional" : pattern == WAVE_PERSISTENT ? "persistent" : "unknown";
}

int wave_pattern_parse(const char *name, wave_pattern *out) {
    if (name && strcmp(name, "persistent") == 0) *out = WAVE_PERSISTENT;
    else if (name && strcmp(name, "traditional") == 0) *out = WAVE_TRADITIONAL;
    else return 0;
    return 1;
}

static char *kernel_source;
static pthread_once_t kernel_source_once = PTHREAD_ONCE_INIT;

/* The kernels' files in the order they build on each other, each under its
 * own name in the compilers' messages. */
static void assemble_source(void) {
    const struct { const char *name, *text; } parts[] = {
        {"wave_protocol.h", wave_protocol_source}, {"wave_kernels.c", wave_kernels_source},
        {"wave_words.c", wave_words_source},       {"wave_relay.c", wave_relay_source},
        {"wave_persistent.c", wave_persistent_source},
    };
    static const char head[] = "#include <ringkernel/dsl.h>\n";
    size_t n = sizeof head;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) n += strlen(parts[i].name) + strlen(parts[i].text) + 16;
    kernel_source = malloc(n); /* kept for the process's life: one small string */
    if (!kernel_source) return;
    size_t at = (size_t)snprintf(kernel_source, n, "%s", head);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        at += (size_t)snprintf(kernel_source + at, n - at, "\n#line 1 \"%s\"\n%s", parts[i].name, parts[i].text);
}

const char *wave_kernel_source(void) {
    pthread_once(&kernel_source_once, assemble_source);
    return kernel_source;
}

double wave_energy(const float *cur, const float *prev, int nx, int ny, float speed) {
    double kinetic = 0, potential = 0;
    for (int y = 0; y < ny; y++) {
        for (int x = 0; x < nx; x++) {
            int i = y * nx + x;
            double v = (double)cur[i] - prev[i];
            kinetic += v * v;
            if (x + 1 < nx) potential += ((double)cur[i] - cur[i + 1]) * ((double)prev[i] - prev[i + 1]);
            if (y + 1 < ny) potential += ((double)cur[i] - cur[i + nx]) * ((double)prev[i] - prev[i + nx]);
        }
    }
    return kinetic + (double)speed * speed * potential;
}

/* ---- commands ------------------------------------------------------------------- */

static rk_status submit(wave_sim *sim, uint32_t op, int x, int y, float value, uint32_t count, wave_ticket *ticket) {
    if (ticket) *ticket = 0;
    return sim->pattern == WAVE_PERSISTENT ? wave__ring_send(sim, op, x, y, value, count, ticket)
                                           : wave__launch_send(sim, op, x, y, value, count, ticket);
}

static rk_status check_cell(const wave_sim *sim, const char *fn, int x, int y) {
    if (x < 0 || y < 0 || x >= sim->nx || y >= sim->ny)
        return wave__fail(RK_INVALID_ARGUMENT, "%s: cell (%d, %d) is outside the %d x %d grid", fn, x, y, sim->nx, sim->ny);
    return RK_OK;
}

static rk_status check_speed(float speed) {
    if (!(speed > 0.0f && speed <= MAX_SPEED))
        return wave__fail(RK_INVALID_ARGUMENT, "wave: speed %g is outside (0, %.4f] (the stability limit of the scheme)",
                    (double)speed, (double)MAX_SPEED);
    return RK_OK;
}

static rk_status check_damping(float damping) {
    if (!(damping >= 0.0f && damping < 1.0f))
        return wave__fail(RK_INVALID_ARGUMENT, "wave: damping %g is outside [0, 1)", (double)damping);
    return RK_OK;
}

rk_status wave_inject(wave_sim *sim, int x, int y, float amplitude, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_inject: sim is NULL");
    rk_status s = check_cell(sim, "wave_inject", x, y);
    if (s == RK_OK && !isfinite(amplitude))
        s = wave__fail(RK_INVALID_ARGUMENT, "wave_inject: amplitude %g is not finite", (double)amplitude);
    return s != RK_OK ? s : submit(sim, WAVE_OP_INJECT, x, y, amplitude, 0, ticket);
}

rk_status wave_set_speed(wave_sim *sim, float speed, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_set_speed: sim is NULL");
    rk_status s = check_speed(speed);
    if (s == RK_OK) s = submit(sim, WAVE_OP_SET_SPEED, 0, 0, speed, 0, ticket);
    if (s == RK_OK) sim->speed = speed;
    return s;
}

rk_status wave_set_damping(wave_sim *sim, float damping, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_set_damping: sim is NULL");
    rk_status s = check_damping(damping);
    if (s == RK_OK) s = submit(sim, WAVE_OP_SET_DAMPING, 0, 0, damping, 0, ticket);
    if (s == RK_OK) sim->damping = damping;
    return s;
}

rk_status wave_step(wave_sim *sim, uint32_t steps, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_step: sim is NULL");
    unsigned parity = sim->parity;
    rk_status s = submit(sim, WAVE_OP_STEP, 0, 0, 0.0f, steps, ticket);
    if (s != RK_OK) return s;
    if (sim->pattern == WAVE_PERSISTENT) sim->parity = parity ^ (steps & 1u);
    sim->steps += steps;
    return RK_OK;
}

rk_status wave_query(wave_sim *sim, int x, int y, wave_ticket *ticket) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_query: sim is NULL");
    rk_status s = check_cell(sim, "wave_query", x, y);
    return s != RK_OK ? s : submit(sim, WAVE_OP_QUERY, x, y, 0.0f, 0, ticket);
}

rk_status wave_wait(wave_sim *sim, wave_ticket ticket, float *value) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_wait: sim is NULL");
    if (ticket == 0 || ticket > sim->sent)
        return wave__fail(RK_INVALID_ARGUMENT, "wave_wait: ticket %llu was never handed out (last %llu)",
                    (unsigned long long)ticket, (unsigned long long)sim->sent);
    if (value && sim->sent - ticket >= WAVE_RING_SLOTS)
        return wave__fail(RK_OUT_OF_RANGE, "wave_wait: the reply to command %llu is gone (%llu commands since; at most %u)",
                    (unsigned long long)ticket, (unsigned long long)(sim->sent - ticket), WAVE_RING_SLOTS);
    unsigned slot = (unsigned)(ticket & (WAVE_RING_SLOTS - 1));
    if (sim->pattern == WAVE_PERSISTENT) {
        rk_status s = wave__ring_wait(sim, ticket);
        if (s != RK_OK) return s;
        if (value) {
            uint64_t r = wave__ring_reply(sim, ticket);
            if ((uint32_t)(r >> 32) != (uint32_t)ticket)
                return wave__fail(RK_INTERNAL, "wave_wait: reply slot %u holds command %u, not %llu", slot,
                            (uint32_t)(r >> 32), (unsigned long long)ticket);
            uint32_t bits = (uint32_t)r;
            float v;
            memcpy(&v, &bits, sizeof v);
            *value = sim->slot_op[slot] == WAVE_OP_QUERY ? v : 0.0f;
        }
        return RK_OK;
    }
    if (ticket > sim->synced) {
        TRY(rk_stream_synchronize(sim->stream), "wave: synchronizing the stream");
        sim->synced = sim->sent;
    }
    if (value) *value = sim->slot_op[slot] == WAVE_OP_QUERY ? sim->landing[slot] : 0.0f;
    return RK_OK;
}

rk_status wave_finish(wave_sim *sim) {
    if (!sim) return wave__fail(RK_NULL_ARGUMENT, "wave_finish: sim is NULL");
    if (sim->pattern == WAVE_TRADITIONAL || !sim->sent) return sim->sent ? wave_wait(sim, sim->sent, NULL) : RK_OK;
    /* Commands complete out of order here; those older than a ring's
     * length have completed (their slots were reused). */
    wave_ticket first = sim->sent > WAVE_RING_SLOTS ? sim->sent - WAVE_RING_SLOTS + 1 : 1;
    for (wave_ticket t = first; t <= sim->sent; t++) {
        rk_status s = wave__ring_wait(sim, t);
        if (s != RK_OK) return s;
    }
    return RK_OK;
}

rk_status wave_read_field(wave_sim *sim, float *cur, float *prev) {
    if (!sim || !cur) return wave__fail(RK_NULL_ARGUMENT, "wave_read_field: sim or cur is NULL");
    rk_status s = RK_OK;
    if (sim->pattern == WAVE_PERSISTENT) {
        /* A fence command: applied after everything sent before it, and its
         * reply says every cell written so far can be copied. */
        s = wave__ring_call(sim, WAVE_OP_FENCE);
    } else {
        s = wave_finish(sim);
    }
    if (s != RK_OK) return s;
    /* The persistent kernel is idle now (it polls), so the field holds still. */
    rk_stream *stream = sim->pattern == WAVE_PERSISTENT ? sim->copy_stream : sim->stream;
    size_t bytes = (size_t)sim->nx * (size_t)sim->ny * sizeof(float);
    TRY(rk_copy_to_host(sim->ctx, cur, sim->field[sim->parity], 0, bytes, stream), "wave: copying the field");
    if (prev)
        TRY(rk_copy_to_host(sim->ctx, prev, sim->field[sim->parity ^ 1u], 0, bytes, stream), "wave: copying the field");
    TRY(rk_stream_synchronize(stream), "wave: synchronizing the copy");
    return RK_OK;
}

void wave_sim_get_info(const wave_sim *sim, wave_sim_info *out) {
    memset(out, 0, sizeof *out);
    if (!sim) return;
    out->pattern = sim->pattern;
    out->nx = sim->nx;
    out->ny = sim->ny;
    out->speed = sim->speed;
    out->damping = sim->damping;
    out->steps = sim->steps;
    out->blocks = sim->blocks;
    out->blocks_requested = sim->blocks_requested ? sim->blocks_requested : sim->blocks;
    out->threads = sim->threads;
    snprintf(out->backend, sizeof out->backend, "%s", sim->info.backend);
    snprintf(out->device, sizeof out->device, "%s", sim->info.name);
    snprintf(out->driver, sizeof out->driver, "%s", sim->info.driver);
}

/* ---- create and destroy ------------------------------------------------------------ */

/* Launches wave_persistent; with automatic sizing, halves the grid until it
 * fits (worker threads on the CPU, co-residency on a GPU). On a GPU it stops
 * at a quarter of the blocks asked for: a grid cut further means something
 * else holds the multiprocessors, and a persistent kernel spinning beside it
 * may keep it from ever finishing (docs/showcase.md, limitations). */
static rk_status start_persistent(wave_sim *sim, bool auto_blocks, bool cpu) {
    uint32_t requested = sim->blocks;
    uint32_t floor_blocks = cpu || requested < 8 ? 2 : (requested + 3) / 4; /* 2: a relay and one band */
    sim->blocks_requested = requested;
    /* Block 0 relays, each other block is a band; a band's words start at 0
     * (zeroed here, and a refused launch ran nothing). Sized for the grid
     * asked for: a smaller one uses the first bands' words. */
    size_t band_bytes = (size_t)(requested - 1) * WAVE_BAND_WORDS * sizeof(uint64_t);
    TRY(rk_buffer_alloc(sim->ctx, band_bytes, &sim->band_words), "wave: allocating the bands' progress words");
    for (;;) {
        rk_arg args[] = {RK_ARG_BUF(sim->field[0]),    RK_ARG_BUF(sim->field[1]), RK_ARG_BUF(sim->mailbox_buf),
                         RK_ARG_BUF(sim->board),       RK_ARG_BUF(sim->band_words), RK_ARG_INT(sim->nx),
                         RK_ARG_INT(sim->ny),          RK_ARG_FLOAT(sim->speed * sim->speed),
                         RK_ARG_FLOAT(sim->damping),   RK_ARG_UINT(0)};
        rk_launch_desc d = {
            .grid = RK_DIM3(sim->blocks, 1, 1),
            .block = RK_DIM3(sim->threads, 1, 1),
            .stream = sim->stream,
            .args = args,
            .arg_count = 10,
            .cooperative = true,
        };
        rk_status s = rk_launch(sim->persistent_fn, &d);
        if (s == RK_OK) {
            sim->running = true;
            wave_registry_started(sim->backend, sim->device_index);
            if (sim->blocks < requested) /* visible in every tool, not only those that print wave_sim_get_info */
                fprintf(stderr, "wave: persistent grid cut to %u of %u blocks (a larger cooperative launch "
                                "was refused)\n", sim->blocks, requested);
            return RK_OK;
        }
        if (s != RK_BAD_LAUNCH_CONFIG || !auto_blocks || sim->blocks <= 2)
            return wave__lib_fail(s, "wave: launching the persistent kernel");
        if (sim->blocks / 2 < floor_blocks)
            return wave__fail(RK_BAD_LAUNCH_CONFIG,
                        "wave: the persistent kernel's cooperative launch was refused down to %u of the %u blocks "
                        "asked for, below the quarter it needs: another kernel or context "
                        "may be holding the device (a second wave simulation open in this process, or another "
                        "process); last refusal: %s: %s",
                        sim->blocks, requested, rk_status_name(s), rk_last_error());
        sim->blocks /= 2;
    }
}

static rk_status create(wave_sim *sim, const wave_config *cfg) {
    const rk_backend *backend = NULL;
    uint32_t device = 0;
    TRY(rk_select_device(cfg->device ? cfg->device : "cpu", &backend, &device), "wave: choosing the device");
    if (wave_registry_busy(backend, device))
        return wave__fail(RK_BAD_STATE,
                    "wave: a persistent simulation runs on %s:%u, and loading this simulation's kernels there would "
                    "wait for it to stop (CUDA loads a module only when no kernel of the context runs): create this "
                    "simulation before the persistent one, or destroy that one first",
                    rk_backend_name(backend), device);
    sim->backend = backend;
    sim->device_index = device;
    TRY(rk_context_create(backend, device, &sim->ctx), "wave: opening the device");
    TRY(rk_context_device_info(sim->ctx, &sim->info), "wave: reading device facts");
    bool cpu = strcmp(sim->info.backend, "cpu") == 0;
    if (sim->pattern == WAVE_PERSISTENT) {
        if (!sim->info.cooperative_launch || !sim->info.host_mapped_memory)
            return wave__fail(RK_UNSUPPORTED, "wave: the persistent pattern needs cooperative launch and host-mapped memory, "
                                        "which the %s device lacks (use --pattern traditional)", sim->info.backend);
        sim->threads = cfg->threads ? cfg->threads : cpu ? 32 : 512;
        if (sim->threads == 0 || sim->threads % 32)
            return wave__fail(RK_INVALID_ARGUMENT,
                              "wave: %u threads per block for the persistent kernel (a multiple of 32: it reads "
                              "commands a warp at a time)",
                              sim->threads);
        /* One block per multiprocessor but one. On the CPU that core is the
         * host thread's, which sends commands and polls for their completion.
         * On a GPU other kernels need it: with a block of this grid on every
         * multiprocessor of an H100 (132 x 512 or 132 x 256 threads), another
         * simulation's kernels never started; with 131 x 512 they ran. */
        uint32_t mp = sim->info.multiprocessors ? sim->info.multiprocessors : 1;
        sim->blocks = cfg->blocks ? cfg->blocks : mp > 2 ? mp - 1 : 2;
        /* Block 0 relays commands; every other block needs a row of its own. */
        uint32_t most = (uint32_t)sim->ny + 1;
        if (cfg->blocks && (cfg->blocks < 2 || cfg->blocks > most))
            return wave__fail(RK_INVALID_ARGUMENT,
                              "wave: a persistent grid of %u blocks for %d rows (at least 2: block 0 relays commands, "
                              "and at most one block per row plus that one)",
                              cfg->blocks, sim->ny);
        if (sim->blocks > most) sim->blocks = most;
    } else {
        /* A GPU gets a thread per cell; the CPU a block per core whose 32
         * threads loop over the cells, as the persistent kernel's do. */
        uint32_t cells = (uint32_t)sim->nx * (uint32_t)sim->ny, mp = sim->info.multiprocessors;
        sim->threads = cfg->threads ? cfg->threads : cpu ? 32 : STEP_THREADS;
        sim->step_blocks = cpu ? (mp ? mp : 1) : (cells + sim->threads - 1) / sim->threads;
        if (cfg->blocks) sim->step_blocks = cfg->blocks;
        sim->blocks = sim->step_blocks;
    }

    /* WAVE_KERNEL_DEFINES="A=1 B=2": the tuning macros of wave_protocol.h,
     * for measuring them without a rebuild. */
    const char *defines[8];
    size_t define_count = 0;
    char define_text[256] = "";
    const char *env = getenv("WAVE_KERNEL_DEFINES");
    if (env && snprintf(define_text, sizeof define_text, "%s", env) >= (int)sizeof define_text)
        return wave__fail(RK_INVALID_ARGUMENT, "wave: WAVE_KERNEL_DEFINES is longer than %zu characters",
                          sizeof define_text - 1);
    for (char *save = NULL, *tok = strtok_r(define_text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (define_count == sizeof defines / sizeof defines[0])
            return wave__fail(RK_INVALID_ARGUMENT, "wave: WAVE_KERNEL_DEFINES holds more than %zu definitions",
                              sizeof defines / sizeof defines[0]);
        defines[define_count++] = tok;
    }
    rk_compile_options opts = {.optimization_level = 3, .defines = defines, .define_count = define_count};
    const char *source = wave_kernel_source();
    if (!source) return wave__fail(RK_OUT_OF_MEMORY, "wave: out of memory");
    TRY(rk_module_compile(sim->ctx, source, &opts, &sim->module), "wave: compiling the wave kernels");
    /* Every function now: nothing may load lazily once a persistent kernel spins. */
    TRY(rk_module_get_function(sim->module, "wave_step", &sim->step_fn), "wave: wave_step");
    TRY(rk_module_get_function(sim->module, "wave_inject", &sim->inject_fn), "wave: wave_inject");
    TRY(rk_module_get_function(sim->module, "wave_persistent", &sim->persistent_fn), "wave: wave_persistent");

    size_t bytes = (size_t)sim->nx * (size_t)sim->ny * sizeof(float);
    TRY(rk_buffer_alloc(sim->ctx, bytes, &sim->field[0]), "wave: allocating the field");
    TRY(rk_buffer_alloc(sim->ctx, bytes, &sim->field[1]), "wave: allocating the field");
    TRY(rk_stream_create(sim->ctx, &sim->stream), "wave: creating a stream");
    if (sim->pattern == WAVE_TRADITIONAL) {
        void *host = NULL;
        rk_status s = rk_buffer_alloc_mapped(sim->ctx, WAVE_RING_SLOTS * sizeof(float), &sim->landing_buf, &host);
        if (s == RK_UNSUPPORTED) { /* pageable memory then: slower copies, same meaning */
            sim->landing = calloc(WAVE_RING_SLOTS, sizeof(float));
            if (!sim->landing) return wave__fail(RK_OUT_OF_MEMORY, "wave: out of memory");
        } else if (s != RK_OK) {
            return wave__lib_fail(s, "wave: allocating pinned landing slots");
        } else {
            sim->landing = host;
        }
        return RK_OK;
    }
    void *host = NULL;
    TRY(rk_stream_create(sim->ctx, &sim->copy_stream), "wave: creating a stream");
    TRY(rk_buffer_alloc_mapped(sim->ctx, sizeof(wave_mailbox), &sim->mailbox_buf, &host),
        "wave: allocating the host-mapped command ring");
    sim->mb = host;
    TRY(rk_buffer_alloc(sim->ctx, sizeof(wave_board), &sim->board), "wave: allocating the command log");
    return start_persistent(sim, cfg->blocks == 0, cpu);
}

rk_status wave_sim_create(const wave_config *cfg, wave_sim **out) {
    if (!cfg || !out) return wave__fail(RK_NULL_ARGUMENT, "wave_sim_create: cfg or out is NULL");
    *out = NULL;
    wave_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return wave__fail(RK_OUT_OF_MEMORY, "wave_sim_create: out of memory");
    sim->pattern = cfg->pattern ? cfg->pattern : WAVE_PERSISTENT;
    sim->nx = cfg->nx ? cfg->nx : DEFAULT_SIZE;
    sim->ny = cfg->ny ? cfg->ny : DEFAULT_SIZE;
    sim->speed = cfg->speed != 0.0f ? cfg->speed : 0.5f;
    sim->damping = cfg->damping;
    rk_status s = RK_OK;
    if (sim->pattern != WAVE_PERSISTENT && sim->pattern != WAVE_TRADITIONAL)
        s = wave__fail(RK_INVALID_ARGUMENT, "wave_sim_create: unknown pattern %d", (int)sim->pattern);
    else if (sim->nx < 3 || sim->ny < 3 || (int64_t)sim->nx * sim->ny > (1 << 28))
        s = wave__fail(RK_INVALID_ARGUMENT, "wave_sim_create: a %d x %d grid (each side at least 3, at most 2^28 cells)",
                 sim->nx, sim->ny);
    if (s == RK_OK) s = check_speed(sim->speed);
    if (s == RK_OK) s = check_damping(sim->damping);
    if (s == RK_OK) s = create(sim, cfg);
    if (s != RK_OK) {
        char why[sizeof error_text];
        memcpy(why, error_text, sizeof why);
        wave_sim_destroy(sim);
        memcpy(error_text, why, sizeof why);
        return s;
    }
    *out = sim;
    return RK_OK;
}

rk_status wave_sim_destroy(wave_sim *sim) {
    if (!sim) return RK_OK;
    rk_status result = RK_OK;
    if (sim->running) {
        result = wave__ring_call(sim, WAVE_OP_STOP);
        if (result != RK_OK) {
            /* The kernel still runs and uses everything: leave it all allocated. */
            return result;
        }
        rk_status s = rk_stream_synchronize(sim->stream);
        if (s != RK_OK) result = wave__lib_fail(s, "wave: the persistent kernel");
    } else if (sim->stream) {
        rk_status s = rk_stream_synchronize(sim->stream);
        if (s != RK_OK) result = wave__lib_fail(s, "wave: the last commands");
    }
    if (sim->copy_stream) rk_stream_destroy(sim->copy_stream);
    if (sim->stream) rk_stream_destroy(sim->stream);
    if (sim->landing_buf) rk_buffer_free(sim->landing_buf);
    else free(sim->landing);
    if (sim->mailbox_buf) rk_buffer_free(sim->mailbox_buf);
    if (sim->board) rk_buffer_free(sim->board);
    if (sim->band_words) rk_buffer_free(sim->band_words);
    for (int i = 0; i < 2; i++)
        if (sim->field[i]) rk_buffer_free(sim->field[i]);
    /* Unloaded now, or once no persistent kernel runs on the device (wave_registry.h). */
    wave_registry_release(sim->backend, sim->device_index, sim->module, sim->ctx, sim->running);
    free(sim);
    return result;
}
