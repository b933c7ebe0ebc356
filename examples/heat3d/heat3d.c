/* heat3d.h: the heat grid's description for rk_sim and its typed commands. */
#include "heat3d.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char heat3d_args_source[];
extern const char heat3d_kernels_source[];

static char *source;
static pthread_once_t source_once = PTHREAD_ONCE_INIT;

/* The payloads' header, then the kernels. */
static void assemble(void) {
    size_t n = strlen(heat3d_args_source) + strlen(heat3d_kernels_source) + 64;
    source = malloc(n); /* kept for the process's life */
    if (source) snprintf(source, n, "%s\n#line 1 \"heat3d_kernels.c\"\n%s", heat3d_args_source, heat3d_kernels_source);
}

const char *heat3d_source(void) {
    pthread_once(&source_once, assemble);
    return source;
}

static const rk_sim_command commands[] = {
    {HEAT_ADD, "heat_add", "heat_cell_args", sizeof(heat_cell_args), RK_SIM_ROWWISE},
    {HEAT_QUERY, "heat_query", "heat_cell_args", sizeof(heat_cell_args), RK_SIM_QUERY_NEXT},
    {HEAT_COUNT_HOT, "heat_count_hot", "heat_count_args", sizeof(heat_count_args), RK_SIM_QUERY},
    {HEAT_SET_ALPHA, "heat_set_alpha", "heat_alpha_args", sizeof(heat_alpha_args), RK_SIM_GLOBAL},
};

void heat3d_describe(const heat3d_config *cfg, rk_sim_desc *desc) {
    /* Static tables: one description at a time is enough for the example. */
    static rk_sim_field fields[1];
    static rk_sim_scalar scalars[3];
    int nx = cfg->nx ? cfg->nx : 32, ny = cfg->ny ? cfg->ny : 32, nz = cfg->nz ? cfg->nz : 32;
    size_t cells = (size_t)nx * (size_t)ny * (size_t)nz;
    fields[0] = (rk_sim_field){"t", RK_SIM_F32, 2 * cells}; /* both time levels: see heat3d_kernels.c */
    scalars[0] = (rk_sim_scalar){"nx", RK_SIM_I32, nx};
    scalars[1] = (rk_sim_scalar){"ny", RK_SIM_I32, ny};
    scalars[2] = (rk_sim_scalar){"alpha", RK_SIM_F32, cfg->alpha > 0.0f ? cfg->alpha : 0.1f};
    *desc = (rk_sim_desc){
        .device = cfg->device,
        .pattern = cfg->pattern,
        .source = heat3d_source(),
        .source_name = "heat3d_args.h",
        .fields = fields,
        .field_count = 1,
        .scalars = scalars,
        .scalar_count = 3,
        .rows = nz,
        .halo_rows = 1, /* a plane reads the planes above and below */
        .step = "heat_step",
        .commands = commands,
        .command_count = sizeof commands / sizeof commands[0],
        .blocks = cfg->blocks,
        .threads = cfg->threads,
        .hang_timeout_ms = cfg->hang_timeout_ms,
    };
}

rk_status heat3d_create(const heat3d_config *cfg, heat3d *out) {
    rk_sim_desc desc;
    heat3d_describe(cfg, &desc);
    out->nx = cfg->nx ? cfg->nx : 32;
    out->ny = cfg->ny ? cfg->ny : 32;
    out->nz = cfg->nz ? cfg->nz : 32;
    if (!desc.source) return RK_OUT_OF_MEMORY;
    return rk_sim_create(&desc, &out->sim);
}

static rk_status cell(const heat3d *h, uint32_t id, int x, int y, int z, float amount, rk_sim_ticket *ticket) {
    if (x < 0 || y < 0 || z < 0 || x >= h->nx || y >= h->ny || z >= h->nz) return RK_OUT_OF_RANGE;
    heat_cell_args a = {x, y, z, amount};
    return rk_sim_send(h->sim, id, &a, sizeof a, z, 1, ticket);
}

rk_status heat3d_add(const heat3d *h, int x, int y, int z, float amount, rk_sim_ticket *ticket) {
    return cell(h, HEAT_ADD, x, y, z, amount, ticket);
}

rk_status heat3d_query(const heat3d *h, int x, int y, int z, rk_sim_ticket *ticket) {
    return cell(h, HEAT_QUERY, x, y, z, 0.0f, ticket);
}

rk_status heat3d_count_hot(const heat3d *h, int z_first, int z_count, float threshold, rk_sim_ticket *ticket) {
    heat_count_args a = {threshold};
    return rk_sim_send(h->sim, HEAT_COUNT_HOT, &a, sizeof a, z_first, z_count, ticket);
}

rk_status heat3d_set_alpha(const heat3d *h, float alpha, rk_sim_ticket *ticket) {
    heat_alpha_args a = {alpha};
    return rk_sim_send(h->sim, HEAT_SET_ALPHA, &a, sizeof a, 0, 0, ticket);
}

void heat3d_host_step(const float *cur, float *next, int nx, int ny, int nz, float alpha) {
    const int plane = nx * ny;
    for (int i = 0; i < plane * nz; i++) {
        const int x = i % nx, y = (i / nx) % ny, z = i / plane;
        const float here = cur[i];
        const float ew = cur[x > 0 ? i - 1 : i] + cur[x < nx - 1 ? i + 1 : i];
        const float ns = cur[y > 0 ? i - nx : i] + cur[y < ny - 1 ? i + nx : i];
        const float ud = cur[z > 0 ? i - plane : i] + cur[z < nz - 1 ? i + plane : i];
        next[i] = here + alpha * ((ew + ns + ud) - 6.0f * here);
    }
}
