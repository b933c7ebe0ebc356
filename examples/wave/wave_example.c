/* The wave showcase's API in a few lines: drop an impulse in the middle,
 * let it spread, ask one cell for its value, on either pattern.
 *
 *   wave_example [persistent|traditional|graph] [cpu|cuda]
 */
#include <stdio.h>

#include "wave_sim.h"

int main(int argc, char **argv) {
    wave_config cfg = {.device = argc > 2 ? argv[2] : "cpu", .nx = 129, .ny = 129, .speed = 0.5f};
    if (argc > 1 && !wave_pattern_parse(argv[1], &cfg.pattern)) {
        fprintf(stderr, "usage: %s [persistent|traditional|graph] [cpu|cuda]\n", argv[0]);
        return 2;
    }
    wave_sim *sim = NULL;
    if (wave_sim_create(&cfg, &sim) != RK_OK) {
        fprintf(stderr, "wave_example: %s\n", wave_last_error());
        return 1;
    }
    wave_ticket t = 0;
    float value = 0.0f;
    rk_status s = wave_inject(sim, 64, 64, 1.0f, NULL);        /* a drop in the middle */
    if (s == RK_OK) s = wave_step(sim, 40, NULL);              /* 40 time steps */
    if (s == RK_OK) s = wave_query(sim, 64 + 20, 64, &t);      /* 20 cells east of it */
    if (s == RK_OK) s = wave_wait(sim, t, &value);             /* every command applied */
    if (s == RK_OK) printf("%s pattern: u(84, 64) after 40 steps = %.6f\n", wave_pattern_name(cfg.pattern ? cfg.pattern : WAVE_PERSISTENT), value);
    else fprintf(stderr, "wave_example: %s\n", wave_last_error());
    rk_status d = wave_sim_destroy(sim);
    return s == RK_OK && d == RK_OK ? 0 : 1;
}
