/* The heat grid in a few lines: heat one cell, let it spread, read a
 * neighbour and count the warm cells, on any pattern.
 *
 *   heat3d_example [persistent|traditional|graph] [cpu|cuda|webgpu]
 */
#include <stdio.h>

#include "heat3d.h"

int main(int argc, char **argv) {
    heat3d_config cfg = {.device = argc > 2 ? argv[2] : "cpu", .nx = 16, .ny = 16, .nz = 16};
    if (argc > 1 && !rk_sim_pattern_parse(argv[1], &cfg.pattern)) {
        fprintf(stderr, "usage: %s [persistent|traditional|graph] [cpu|cuda|webgpu]\n", argv[0]);
        return 2;
    }
    heat3d h;
    if (heat3d_create(&cfg, &h) != RK_OK) {
        fprintf(stderr, "heat3d_example: %s\n", rk_last_error());
        return 1;
    }
    rk_sim_ticket q = 0, c = 0;
    uint64_t value = 0, warm = 0;
    rk_status s = heat3d_add(&h, 8, 8, 8, 100.0f, NULL);          /* heat in the middle */
    if (s == RK_OK) s = rk_sim_step(h.sim, 20, NULL);             /* 20 steps */
    if (s == RK_OK) s = heat3d_query(&h, 8, 8, 10, &q);           /* two planes up */
    if (s == RK_OK) s = heat3d_count_hot(&h, 0, 16, 0.01f, &c);   /* cells above 0.01, all planes */
    if (s == RK_OK) s = rk_sim_wait(h.sim, q, &value);
    if (s == RK_OK) s = rk_sim_wait(h.sim, c, &warm);
    if (s == RK_OK)
        printf("%s: T(8, 8, 10) after 20 steps = %.6f; %llu cells above 0.01\n", rk_sim_pattern_name(cfg.pattern),
               (double)rk_sim_answer_as_f32(value), (unsigned long long)warm);
    else
        fprintf(stderr, "heat3d_example: %s\n", rk_last_error());
    rk_status d = rk_sim_destroy(h.sim);
    return s == RK_OK && d == RK_OK ? 0 : 1;
}
