/* What the wave simulation's host files share (wave_sim.c: the description,
 * create and destroy; wave_commands.c: the checked commands, waits and
 * reads). */
#ifndef WAVE_SIM_INTERNAL_H
#define WAVE_SIM_INTERNAL_H

#include <stdint.h>

#include "wave_args.h"
#include "wave_sim.h"

/* The commands' ids in the rk_sim description (wave_sim.c). */
enum { WAVE_INJECT = 1, WAVE_QUERY = 2, WAVE_SET_C2 = 3, WAVE_SET_DAMPING = 4 };

#define WAVE_MAX_SPEED 0.70710678f /* 1/sqrt(2): the 2-D leapfrog stability limit */

struct wave_sim {
    rk_sim *sim;
    wave_pattern pattern;
    int nx, ny;
    float speed, damping; /* as last set: the host's record, for wave_sim_get_info */
};

/* Errors: the message goes to wave_last_error(). */
rk_status wave__fail(rk_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library call failed: its reason under our own heading; RK_OK passes through. */
rk_status wave__lib(rk_status status, const char *what);

/* The checks wave_sim_create and the commands share. */
rk_status wave__check_speed(float speed);
rk_status wave__check_damping(float damping);

#endif
