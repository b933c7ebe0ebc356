/* What each emitter writes for constructs it once got wrong (issue 21):
 * the text of the output, where executing it is not needed to tell. The
 * kernels of tests/transpile/cases/meaning.c run on the CPU and WebGPU
 * (test_webgpu_transpiled.c) and compile with NVRTC (test_nvrtc.c). */
#include "check.h"
#include "ringkernel/transpile.h"

static rk_transpile_result *transpile(const char *source, rk_transpile_target target) {
    char text[4096];
    snprintf(text, sizeof text, "#include <ringkernel/dsl.h>\n%s", source);
    rk_transpile_desc d = {.source = text, .path = "k.c", .target = target, .no_file_system = true};
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_transpile_diagnostics_text(r));
    CHECK_OK(s);
    return r;
}

/* Asserts that `want` occurs in the output after `after`. */
static void check_after(const rk_transpile_result *r, const char *after, const char *want) {
    const char *out = rk_transpile_output(r, NULL);
    const char *a = strstr(out, after);
    if (!a || !strstr(a, want)) fprintf(stderr, "wanted '%s' after '%s' in:\n%s\n", want, after, out);
    CHECK(a != NULL);
    CHECK(strstr(a, want) != NULL);
}

static void else_if_then_statement(void) {
    static const char src[] = "RK_KERNEL void k(int *out, int n) {\n"
                              "    int d = 0;\n"
                              "    if (n > 1) d = 1; else if (n > 0) d = 2;\n"
                              "    out[0] = d;\n"
                              "    if (n > 1) d = 1; else if (n > 0) d = 2; else d = 3;\n"
                              "    out[1] = d;\n"
                              "}\n";
    for (int t = 0; t < 2; t++) {
        rk_transpile_result *r = transpile(src, t ? RK_TARGET_WGSL : RK_TARGET_CUDA);
        check_after(r, "else if", t ? "out[0i] = d;" : "out[0] = d;");
        check_after(r, "d = 3", t ? "out[1i] = d;" : "out[1] = d;");
        rk_transpile_result_destroy(r);
    }
    printf("else-if chain followed by a statement: kept on CUDA and WGSL\n");
}

/* Asserts that `bad` does not occur in the output. */
static void check_absent(const rk_transpile_result *r, const char *bad) {
    const char *out = rk_transpile_output(r, NULL);
    if (strstr(out, bad)) fprintf(stderr, "did not want '%s' in:\n%s\n", bad, out);
    CHECK(strstr(out, bad) == NULL);
}

static void wgsl_side_effects_not_selected(void) {
    static const char src[] = "RK_DEVICE int twice(int *p) { *p *= 2; return *p; }\n"
                              "RK_KERNEL void k(const int *v, int *count, int *out) {\n"
                              "    int i = thread_idx_x(), t = i;\n"
                              "    int slot = v[i] > 0 ? atomic_add_i32(count, 1) : -1;\n"
                              "    out[i] = slot + (v[i] > 2 && twice(&t) > 4 ? atomic_add_i32(&count[1], 1) : 0);\n"
                              "    while (atomic_cas_i32(&count[2], 0, 1) != 0) { }\n"
                              "    out[0] = v[i] > 3 || atomic_add_i32(&count[3], 1) > 0;\n"
                              "    if (v[i] > 7) out[1] = 1;\n"
                              "    else if ((v[i] > 5 ? atomic_add_i32(&count[4], 1) : 0) > 2) out[1] = 2;\n"
                              "}\n";
    rk_transpile_result *r = transpile(src, RK_TARGET_WGSL);
    check_absent(r, "select(-1i, atomicAdd");
    check_absent(r, ", atomicAdd(&k_count[1i], 1i), ");
    check_after(r, "var rk_v0: i32;", "if ((k_v[i] > 0i)) {");
    /* the strong compare-exchange retries a spurious failure */
    check_after(r, "loop {", "atomicCompareExchangeWeak(");
    check_after(r, "atomicCompareExchangeWeak(", "if (r.exchanged || r.old_value != ");
    /* an else-if whose condition is lowered: its statements inside the else, after the first test */
    check_after(r, "if ((k_v[i] > 7i)) {", "} else {");
    check_after(r, "} else {\n            var rk_v", "atomicAdd(&k_count[4i], 1i)");
    rk_transpile_result_destroy(r);
    printf("WGSL: side effects in ?: arms and after && / || are statements; CAS is strong\n");
}

static void nan_tests_and_nonfinite_constants(void) {
    static const char src[] = "RK_KERNEL void k(const float *f, int *out) {\n"
                              "    float x = f[0], inf = INFINITY;\n"
                              "    out[0] = x != x;\n"
                              "    out[1] = isnan(x) + isinf(x) + isfinite(x);\n"
                              "    out[2] = x == 1.0f / 0.0f || x == -(1e30f * 1e30f) || x == 1e39f || x == inf;\n"
                              "}\n";
    rk_transpile_result *r = transpile(src, RK_TARGET_WGSL);
    check_after(r, "k_out[0i] = ", "rk_isnan(x)");
    check_after(r, "fn rk_isnan(x: f32) -> bool", "bitcast<u32>(x)");
    check_after(r, "k_out[1i] = ", "rk_isinf(x)");
    check_absent(r, "(x != x)");
    /* an infinite constant expression makes the module invalid */
    check_absent(r, "1.0f / 0.0f");
    check_absent(r, "bitcast<f32>(0x7f800000u)");
    check_after(r, "var<private> rk_f32_inf_bits: u32", "0x7f800000u");
    rk_transpile_result_destroy(r);
    r = transpile(src, RK_TARGET_CUDA);
    check_absent(r, "1e30f * 1e30f"); /* NVRTC warns about the overflow */
    check_after(r, "out[2] = ", "__int_as_float((int)0xff800000u)");
    rk_transpile_result_destroy(r);
    printf("NaN tests by bits on WGSL; constants folding to inf/NaN written as bits on both targets\n");
}

/* A WebGPU caller may pass its device's maxComputeWorkgroupStorageSize. */
static void shared_memory_limit_from_the_caller(void) {
    static const char src[] = "#include <ringkernel/dsl.h>\n"
                              "RK_KERNEL void k(float *o) { RK_SHARED float t[6000]; t[thread_idx_x()] = 1.0f; o[0] = t[0]; }\n";
    rk_transpile_desc d = {.source = src, .path = "k.c", .target = RK_TARGET_WGSL, .no_file_system = true};
    rk_transpile_result *r = NULL;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "uses 24000 bytes of shared memory");
    rk_transpile_result_destroy(r);
    d.shared_memory_limit = 32768;
    CHECK_OK(rk_transpile(&d, &r));
    rk_transpile_result_destroy(r);
    d.shared_memory_limit = 20000;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "allows 20000 (rk_transpile_desc.shared_memory_limit)");
    rk_transpile_result_destroy(r);
    printf("shared memory limit: WGSL default 16 KiB, raised or lowered by the caller\n");
}

/* wgsl_state_struct: s->m on a struct of buffer pointers reads the binding
 * rk_b_m; the parameter leaves signatures and calls; every kernel that takes
 * the struct first binds its buffers at 0.., its own after; a kernel that
 * takes it elsewhere is refused. */
static void wgsl_state_struct_as_bindings(void) {
    static const char src[] = "#include <ringkernel/dsl.h>\n"
                              "typedef struct st { float *a; const int *b; int rows; } st;\n"
                              "RK_DEVICE float value_at(const st *s, int i) { return s->a[i] + (float)s->b[i] + (float)s->rows; }\n"
                              "RK_KERNEL void k1(const st *s, float *out) { out[0] = value_at(s, thread_idx_x()); }\n"
                              "RK_KERNEL void k2(const st *s, int n) { if (thread_idx_x() < n) s->a[0] = 1.0f; }\n";
    rk_transpile_desc d = {.source = src, .path = "st.c", .target = RK_TARGET_WGSL, .no_file_system = true,
                           .wgsl_state_struct = "other,st"};
    rk_transpile_result *r = NULL;
    rk_status s = rk_transpile(&d, &r);
    if (s != RK_OK) fprintf(stderr, "%s\n", rk_transpile_diagnostics_text(r));
    CHECK_OK(s);
    check_after(r, "@binding(0)", "var<storage, read_write> rk_b_a: array<f32>;");
    check_after(r, "@binding(1)", "var<storage, read> rk_b_b: array<i32>;");
    check_after(r, "@binding(2)", "k1_out");
    check_after(r, "fn value_at(rk_p_i: i32)", "rk_b_a[");
    check_after(r, "fn value_at(", "rk_b_rows");
    check_absent(r, "struct st");
    check_after(r, "fn k1(", "value_at(i32(");
    rk_transpile_result_destroy(r);

    static const char late[] = "#include <ringkernel/dsl.h>\n"
                               "typedef struct st { float *a; } st;\n"
                               "RK_KERNEL void k1(const st *s, float *out) { out[0] = s->a[0]; }\n"
                               "RK_KERNEL void k2(float *out, const st *s) { out[0] = s->a[1]; }\n";
    d.source = late;
    r = NULL;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR); /* how the transpiler reports any error */
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "a state parameter must come where every kernel has it");
    rk_transpile_result_destroy(r);
    printf("WGSL state struct: members as bindings, parameter dropped, misplaced parameter refused\n");
}

/* A void pointer parameter (a handler's unused payload) has no WGSL type:
 * dropped with its arguments when only (void)p names it, refused otherwise. */
static void wgsl_void_pointer_parameter(void) {
    rk_transpile_result *r = transpile("RK_DEVICE int first(const int *v, const void *p) { (void)p; return v[0]; }\n"
                                       "RK_KERNEL void k(int *out) { int x = 3; out[0] = first(&x, &x); }\n",
                                       RK_TARGET_WGSL);
    check_after(r, "fn first(", "v: ptr<function, i32>) -> i32");
    check_after(r, "fn k(", "first(&x)");
    rk_transpile_result_destroy(r);
    static const char used[] = "#include <ringkernel/dsl.h>\n"
                               "RK_DEVICE int first(const void *p) { return *(const int *)p; }\n"
                               "RK_KERNEL void k(int *out) { int x = 3; out[0] = first(&x); }\n";
    rk_transpile_desc d = {.source = used, .path = "v.c", .target = RK_TARGET_WGSL, .no_file_system = true};
    r = NULL;
    CHECK_STATUS(rk_transpile(&d, &r), RK_PARSE_ERROR);
    CHECK_STR_CONTAINS(rk_transpile_diagnostics_text(r), "v.c:2:"); /* reading through it */
    rk_transpile_result_destroy(r);
    printf("WGSL void pointer parameter: dropped when unread, refused when read\n");
}

int main(void) {
    else_if_then_statement();
    wgsl_side_effects_not_selected();
    nan_tests_and_nonfinite_constants();
    shared_memory_limit_from_the_caller();
    wgsl_state_struct_as_bindings();
    wgsl_void_pointer_parameter();
    return 0;
}
