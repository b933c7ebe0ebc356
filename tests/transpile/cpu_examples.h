/* The stencil examples compiled as plain C for the host and run by the CPU
 * driver of dsl_stencil.h (cpu_example_sources.c), plus plain C references
 * written without the DSL, for the CPU and GPU equivalence tests. */
#ifndef RK_TEST_CPU_EXAMPLES_H
#define RK_TEST_CPU_EXAMPLES_H

void cpu_laplacian(const float *in, float *out, int nx, int ny);
void cpu_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz);
void cpu_blur(const double *a, const double *b, double *out, double mix, int nx, int ny);

void ref_laplacian(const float *in, float *out, int nx, int ny);
void ref_heat3d(const float *in, float *out, float alpha, int nx, int ny, int nz);
void ref_blur(const double *a, const double *b, double *out, double mix, int nx, int ny);

#endif
