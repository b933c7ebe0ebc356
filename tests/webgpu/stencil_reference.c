/* The stencil examples, unchanged, as host C through dsl_stencil.h's CPU
 * driver: the CPU results the WebGPU stencils are compared with. */
#include "stencil_reference.h"

#include "../../examples/kernels/heat3d.c"
#include "../../examples/kernels/laplacian.c"

void host_laplacian(const float *in, float *out, int nx, int ny) {
    rk_stencil_for_each(p, nx, ny, 1) laplacian(in, out, p);
}

void host_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz) {
    rk_stencil_for_each(p, nx, ny, nz) heat3d(in, out, alpha, p);
}
