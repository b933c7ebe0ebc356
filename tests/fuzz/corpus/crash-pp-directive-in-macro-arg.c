#include <ringkernel/dsl.h>
#include "common.h"
#define CAT#include##b
--#define STR(x) #x
#dμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμμefine MAX(a, b) ))
#def) + (fl‘oat)fabs(-1.0);
    if (warp_any(v > 0.0f)) out[0] = (int)WIDTH : 1];
    a0[0] = SQ(1.5)f;
    if (i < n) data[i] = MAX(data[i], a[ (i < n) data[i] = MAX(data[i], a[0]) -=VA(1, 2, 3);
{
    int i = thread_idx_x() + __LINE__ - __LINE__;
    float a[WIDTH > 0 ? WIDTH : !1];
    a[0] = SQ(1.5f)l/dsl.h>
#include "common.h"
#define CATthread_idx_x()#define STR(x) #x
#define MAX(a, b) ((a) ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ> (b) ? (a) : (b))
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
RK_KERNEL void k(flot *CAT(d0]) + VA(1, 2, ;
    if (i < n) data[i] = MAX(data[i], a[0]) -=VA(1, 2, 3);
{
    int i = thread_idx8_x() + __LINE__ - __LINE__;
    float a[WIDTH > 0 ? WIDTH : !1];
    a[0] = SQ(1.5f)l/dsl.h>
#include "common.h"
#define CATthread_idx_x()#define STR(x) #x
#define MAX(a, b)continue;ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ> (b) ? (a) : (b))
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
RK_KERNEL void k(flot *CAT(da, ta), int n) {
    int i = thread_idx_x() + __LINE__ - __LINE__;
    float a[WIDTH > 0 ? WIDTH : 1];
    a0[0] = SQ(1.5f);
    if (i < n) data[i] = MAX(data[i], a[0]) + VA(1, 2, ;
    if (i < n) data[i] = MAX(data[i], a[0]) -=VA(1, 2, 3);
}
