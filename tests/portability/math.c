/* Math builtins on the same inputs everywhere: the exactly rounded ones
 * (floor, ceil, fabs, fmin, fmax, trunc, sqrt, copysign) and transcendental
 * ones (exp, log, sin, cos, tanh, atan2, pow, rsqrt, fma), each compared with
 * the C library within the target's documented precision. */
#include <ringkernel/dsl.h>

#define OUTS 8

RK_KERNEL void math_ops(const float *x, float *exact, float *approx, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    float v = x[i]; /* in [-4, 4] */
    exact[i * OUTS + 0] = floorf(v);
    exact[i * OUTS + 1] = ceilf(v);
    exact[i * OUTS + 2] = fabsf(v);
    exact[i * OUTS + 3] = fminf(v, 0.5f);
    exact[i * OUTS + 4] = fmaxf(v, -0.5f);
    exact[i * OUTS + 5] = truncf(v * 3.0f);
    exact[i * OUTS + 6] = sqrtf(fabsf(v));
    exact[i * OUTS + 7] = copysignf(2.0f, v);
    approx[i * OUTS + 0] = expf(v);
    approx[i * OUTS + 1] = logf(fabsf(v) + 1.0f);
    approx[i * OUTS + 2] = sinf(v * 0.75f);
    approx[i * OUTS + 3] = cosf(v * 0.75f);
    approx[i * OUTS + 4] = tanhf(v);
    approx[i * OUTS + 5] = atan2f(v, 1.5f);
    approx[i * OUTS + 6] = powf(fabsf(v) + 0.5f, 1.5f);
    approx[i * OUTS + 7] = rsqrtf(fabsf(v) + 1.0f) + fmaf(v, v, 1.0f);
}
