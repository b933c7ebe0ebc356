/* The leapfrog scheme's discrete energy (wave_sim.h): a check of the
 * physics on the host, from two time levels read back. */
#include "wave_sim.h"

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
