/* Host runs of the stencil examples (stencil_reference.c). */
#ifndef RK_TEST_STENCIL_REFERENCE_H
#define RK_TEST_STENCIL_REFERENCE_H

void host_laplacian(const float *in, float *out, int nx, int ny);
void host_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz);

#endif
