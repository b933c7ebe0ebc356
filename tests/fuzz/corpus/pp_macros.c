#include <ringkernel/dsl.h>
#include "common.h"
#define CAT(a, b) a##b
#define STR(x) #x
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define VA(fmt, ...) fmt + __VA_ARGS__
#if defined(N) && N > 8 || !defined(N)
#define WIDTH (N * 2)
#elif 1
#define WIDTH 4
#else
#error no
#endif
#ifndef N
#define N 3
#endif
RK_KERNEL void k(float *CAT(da, ta), int n) {
    int i = thread_idx_x() + __LINE__ - __LINE__;
    float a[WIDTH > 0 ? WIDTH : 1];
    a[0] = SQ(1.5f);
    if (i < n) data[i] = MAX(data[i], a[0]) + VA(1, 2, 3);
}
