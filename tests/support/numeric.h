/* Random inputs and tolerant comparisons shared by the tests that check one
 * backend's numbers against another's. Include once per test file, after
 * defining RK_TEST_SEED (each test keeps its own sequence) and, optionally,
 * RK_TEST_GOT / RK_TEST_WANT (how a failure names the two sides). */
#ifndef RK_TEST_NUMERIC_H
#define RK_TEST_NUMERIC_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef RK_TEST_SEED
#error "define RK_TEST_SEED before including support/numeric.h"
#endif
#ifndef RK_TEST_GOT
#define RK_TEST_GOT "got"
#endif
#ifndef RK_TEST_WANT
#define RK_TEST_WANT "want"
#endif

static uint64_t rk_test_rng = RK_TEST_SEED;

/* xorshift64: fast, and the same sequence on every machine. */
static inline uint32_t next_random(void) {
    rk_test_rng ^= rk_test_rng << 13;
    rk_test_rng ^= rk_test_rng >> 7;
    rk_test_rng ^= rk_test_rng << 17;
    return (uint32_t)(rk_test_rng >> 16);
}

/* Uniform in [-10, 10] in steps of 0.001. */
static inline float random_float(void) { return (float)(next_random() % 20001) / 1000.0f - 10.0f; }

static inline void rk_test_close_or_exit(const char *what, size_t i, double got, double want, double tol) {
    double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
    if (!(fabs(got - want) <= tol * scale)) {
        fprintf(stderr, "%s: element %zu: " RK_TEST_GOT " %.9g, " RK_TEST_WANT " %.9g\n", what, i, got, want);
        exit(1);
    }
}

/* Exits 1 at the first element off by more than tol, relative to max(|want|, 1). */
static inline void check_close(const char *what, const double *got, const double *want, size_t n, double tol) {
    for (size_t i = 0; i < n; i++) rk_test_close_or_exit(what, i, got[i], want[i], tol);
}

static inline void check_close_f32(const char *what, const float *got, const float *want, size_t n, double tol) {
    for (size_t i = 0; i < n; i++) rk_test_close_or_exit(what, i, got[i], want[i], tol);
}

#endif
