/* Typed test asserts that print both sides, libuv style. A failing check
 * prints file:line and the values, and the test exits 1. RK_SKIP exits 77. */
#ifndef RK_TEST_CHECK_H
#define RK_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringkernel/ringkernel.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CHECK_INT_(a, op, b, fmt, type)                                                            \
    do {                                                                                           \
        type a_ = (type)(a), b_ = (type)(b);                                                       \
        if (!(a_ op b_)) {                                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s %s %s) failed: " fmt " vs " fmt "\n", __FILE__, __LINE__, \
                    #a, #op, #b, a_, b_);                                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b) CHECK_INT_(a, ==, b, "%" PRId64, int64_t)
#define CHECK_NE(a, b) CHECK_INT_(a, !=, b, "%" PRId64, int64_t)
#define CHECK_LT(a, b) CHECK_INT_(a, <, b, "%" PRId64, int64_t)
#define CHECK_LE(a, b) CHECK_INT_(a, <=, b, "%" PRId64, int64_t)
#define CHECK_GT(a, b) CHECK_INT_(a, >, b, "%" PRId64, int64_t)
#define CHECK_GE(a, b) CHECK_INT_(a, >=, b, "%" PRId64, int64_t)
#define CHECK_U64_EQ(a, b) CHECK_INT_(a, ==, b, "%" PRIu64, uint64_t)

#define CHECK_FLOAT_NEAR(a, b, tol)                                                                \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                             \
            fprintf(stderr, "%s:%d: CHECK_FLOAT_NEAR(%s, %s) failed: %.9g vs %.9g\n", __FILE__, __LINE__, \
                    #a, #b, a_, b_);                                                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_STR_CONTAINS(haystack, needle)                                                       \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (!h_ || !strstr(h_, n_)) {                                                              \
            fprintf(stderr, "%s:%d: expected \"%s\" to contain \"%s\"\n", __FILE__, __LINE__,      \
                    h_ ? h_ : "(null)", n_);                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Checks a call's status; on mismatch prints both names and rk_last_error(). */
#define CHECK_STATUS(call, expected)                                                               \
    do {                                                                                           \
        rk_status got_ = (call);                                                                   \
        if (got_ != (expected)) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #call, \
                    rk_status_name(got_), rk_status_name(expected), rk_last_error());              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, RK_OK)

#define RK_SKIP(...)                          \
    do {                                      \
        fprintf(stderr, "SKIP: " __VA_ARGS__); \
        fprintf(stderr, "\n");                \
        exit(77);                             \
    } while (0)

#endif
