/* The wave simulation's description for rk_sim, its creation and the
 * facts about it (wave_sim.h). The commands are in wave_commands.c. */
#include "wave_sim_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char wave_args_source[];
extern const char wave_kernels_source[];

enum { DEFAULT_SIZE = 256, CUDA_PERSISTENT_THREADS = 512 };

/* ---- errors --------------------------------------------------------------- */

static _Thread_local char error_text[1024];

const char *wave_last_error(void) { return error_text; }

rk_status wave__fail(rk_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof error_text, fmt, ap);
    va_end(ap);
    return status;
}

rk_status wave__lib(rk_status status, const char *what) {
    if (status == RK_OK) return RK_OK;
    return wave__fail(status, "%s: %s: %s", what, rk_status_name(status), rk_last_error());
}

rk_status wave__check_speed(float speed) {
    if (!(speed > 0.0f && speed <= WAVE_MAX_SPEED))
        return wave__fail(RK_INVALID_ARGUMENT, "wave: speed %g is outside (0, %.4f] (the stability limit of the scheme)",
                          (double)speed, (double)WAVE_MAX_SPEED);
    return RK_OK;
}

rk_status wave__check_damping(float damping) {
    if (!(damping >= 0.0f && damping < 1.0f))
        return wave__fail(RK_INVALID_ARGUMENT, "wave: damping %g is outside [0, 1)", (double)damping);
    return RK_OK;
}

/* ---- names ------------------------------------------------------------------ */

/* The wave's patterns are rk_sim's, in the same order, one up (0 asks for the default). */
const char *wave_pattern_name(wave_pattern pattern) {
    if (pattern < WAVE_PERSISTENT || pattern > WAVE_GRAPH) return "unknown";
    return rk_sim_pattern_name((rk_sim_pattern)(pattern - 1));
}

int wave_pattern_parse(const char *name, wave_pattern *out) {
    rk_sim_pattern p;
    if (!out || !rk_sim_pattern_parse(name, &p)) return 0;
    *out = (wave_pattern)(p + 1);
    return 1;
}

/* ---- the description ------------------------------------------------------------ */

/* The kernels' source for a grid nx cells wide: the width first, as a
 * constant (WAVE_NX), then the payloads' header and the kernels, each under
 * its own name in the compilers' messages. A constant width lets the
 * compiler turn the cells' divisions by it and their addressing into
 * shifts and immediates; read from a scalar, the wave's step was 4.33 us
 * against 4.14, its 10 000 steps 18.1 against 16.1 ms (H200, session 27).
 * NULL: out of memory. */
static char *assemble(int nx) {
    const size_t n = strlen(wave_args_source) + strlen(wave_kernels_source) + 96; /* + the three lines in front (< 80) */
    char *text = malloc(n);
    if (text)
        snprintf(text, n, "#define WAVE_NX %d\n#line 1 \"wave_args.h\"\n%s\n#line 1 \"wave_kernels.c\"\n%s", nx,
                 wave_args_source, wave_kernels_source);
    return text;
}

static const rk_sim_command commands[] = {
    {WAVE_INJECT, "wave_apply_impulse", "wave_cell_args", sizeof(wave_cell_args), RK_SIM_ROWWISE},
    {WAVE_QUERY, "wave_read_cell", "wave_cell_args", sizeof(wave_cell_args), RK_SIM_QUERY_NEXT},
    {WAVE_SET_C2, "wave_put_c2", "wave_value_args", sizeof(wave_value_args), RK_SIM_GLOBAL},
    {WAVE_SET_DAMPING, "wave_put_damping", "wave_value_args", sizeof(wave_value_args), RK_SIM_GLOBAL},
};

/* An rk_sim description and what it points to (free the source with
 * release). */
typedef struct wave_desc {
    rk_sim_desc desc;
    rk_sim_field field;
    rk_sim_scalar scalars[2];
    char *source;
} wave_desc;

static void release(wave_desc *d) { free(d->source); }

/* The configuration with its defaults in: pattern, size and speed. */
static wave_config with_defaults(const wave_config *cfg) {
    wave_config c = *cfg;
    if (!c.device) c.device = "cpu";
    if (!c.pattern) c.pattern = WAVE_PERSISTENT;
    if (!c.nx) c.nx = DEFAULT_SIZE;
    if (!c.ny) c.ny = DEFAULT_SIZE;
    if (c.speed == 0.0f) c.speed = 0.5f;
    return c;
}

static rk_status check_config(const wave_config *c) {
    if (c->pattern != WAVE_PERSISTENT && c->pattern != WAVE_TRADITIONAL && c->pattern != WAVE_GRAPH)
        return wave__fail(RK_INVALID_ARGUMENT, "wave_sim_create: unknown pattern %d", (int)c->pattern);
    if (c->nx < 3 || c->ny < 3 || (int64_t)c->nx * c->ny > (1 << 28))
        return wave__fail(RK_INVALID_ARGUMENT,
                          "wave_sim_create: a %d x %d grid (each side at least 3, at most 2^28 cells)", c->nx, c->ny);
    rk_status s = wave__check_speed(c->speed);
    return s != RK_OK ? s : wave__check_damping(c->damping);
}

/* c (with its defaults) on a device of `backend` ("cpu", "cuda", ...).
 * The persistent kernel's blocks on CUDA are 512 threads, as they were
 * when the wave had a kernel of its own (rk_sim bounds its registers). */
static void describe(const wave_config *c, const char *backend, wave_desc *d) {
    d->source = assemble(c->nx);
    d->field = (rk_sim_field){"u", RK_SIM_F32, 2 * (size_t)c->nx * (size_t)c->ny}; /* both time levels */
    d->scalars[0] = (rk_sim_scalar){"c2", RK_SIM_F32, c->speed * c->speed}; /* the float product, as the step used */
    d->scalars[1] = (rk_sim_scalar){"damping", RK_SIM_F32, c->damping};
    uint32_t threads = c->threads;
    if (!threads && c->pattern == WAVE_PERSISTENT && strcmp(backend, "cuda") == 0) threads = CUDA_PERSISTENT_THREADS;
    d->desc = (rk_sim_desc){
        .device = c->device,
        .pattern = (rk_sim_pattern)(c->pattern - 1),
        .source = d->source,
        .source_name = "wave_source",
        .fields = &d->field,
        .field_count = 1,
        .scalars = d->scalars,
        .scalar_count = 2,
        .rows = c->ny,
        .halo_rows = 1, /* a cell reads the rows above and below */
        .step = "wave_advance",
        .commands = commands,
        .command_count = sizeof commands / sizeof commands[0],
        .blocks = c->blocks,
        .threads = threads,
    };
}

rk_status wave_generate_source(const wave_config *cfg, char **out) {
    if (!cfg || !out) return wave__fail(RK_NULL_ARGUMENT, "wave_generate_source: cfg or out is NULL");
    *out = NULL;
    const wave_config c = with_defaults(cfg);
    rk_status s = check_config(&c);
    if (s != RK_OK) return s;
    /* The device's backend where it can be had, else the spec's own name. */
    char backend[16];
    const rk_backend *b = NULL;
    uint32_t index = 0;
    if (rk_select_device(c.device, &b, &index) == RK_OK) snprintf(backend, sizeof backend, "%s", rk_backend_name(b));
    else snprintf(backend, sizeof backend, "%.*s", (int)strcspn(c.device, ":"), c.device);
    wave_desc d;
    describe(&c, backend, &d);
    if (!d.source) return wave__fail(RK_OUT_OF_MEMORY, "wave: out of memory");
    s = wave__lib(rk_sim_generate_source(&d.desc, out), "wave: generating the source");
    release(&d);
    return s;
}

/* ---- create and destroy ---------------------------------------------------------- */

rk_status wave_sim_create(const wave_config *cfg, wave_sim **out) {
    if (!cfg || !out) return wave__fail(RK_NULL_ARGUMENT, "wave_sim_create: cfg or out is NULL");
    *out = NULL;
    const wave_config c = with_defaults(cfg);
    rk_status s = check_config(&c);
    if (s != RK_OK) return s;
    const rk_backend *backend = NULL;
    uint32_t index = 0;
    s = wave__lib(rk_select_device(c.device, &backend, &index), "wave: choosing the device");
    if (s != RK_OK) return s;
    wave_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return wave__fail(RK_OUT_OF_MEMORY, "wave_sim_create: out of memory");
    wave_desc d;
    describe(&c, rk_backend_name(backend), &d);
    *sim = (wave_sim){.pattern = c.pattern, .nx = c.nx, .ny = c.ny, .speed = c.speed, .damping = c.damping};
    s = d.source ? wave__lib(rk_sim_create(&d.desc, &sim->sim), "wave: creating the simulation")
                 : wave__fail(RK_OUT_OF_MEMORY, "wave: out of memory");
    release(&d);
    if (s != RK_OK) {
        free(sim);
        return s;
    }
    *out = sim;
    return RK_OK;
}

rk_status wave_sim_destroy(wave_sim *sim) {
    if (!sim) return RK_OK;
    /* A kernel that would not stop keeps rk_sim's memory (sim.h); ours is
     * the host's alone. */
    rk_status s = wave__lib(rk_sim_destroy(sim->sim), "wave: destroying the simulation");
    free(sim);
    return s;
}

void wave_sim_get_info(const wave_sim *sim, wave_sim_info *out) {
    memset(out, 0, sizeof *out);
    if (!sim) return;
    rk_sim_stats st;
    rk_sim_get_stats(sim->sim, &st);
    out->pattern = sim->pattern;
    out->nx = sim->nx;
    out->ny = sim->ny;
    out->speed = sim->speed;
    out->damping = sim->damping;
    out->steps = st.steps;
    out->blocks = st.blocks;
    out->blocks_requested = st.blocks;
    out->threads = st.threads;
    snprintf(out->backend, sizeof out->backend, "%s", st.backend);
    snprintf(out->device, sizeof out->device, "%s", st.device);
    snprintf(out->driver, sizeof out->driver, "%s", st.driver);
}
