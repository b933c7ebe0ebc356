/* A DSL handler at launch (src/core/kernel_handler.c), on one backend
 * (argv[1]: cpu, webgpu, cuda; 77 when it is not here):
 * sizes come from the handler's types (0 = take them, a differing size is
 * refused naming both), state of the State type's size with an initial
 * value, the CUDA and WGSL dialect checks applied on the CPU too, and
 * handlers read from files with messages naming the file's lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel_test.h"

typedef struct { uint32_t a, b; } Pair;                 /* 8 bytes */
typedef struct { uint64_t sum; uint32_t calls, pad; } Total; /* 16 bytes */
typedef struct { uint32_t calls, pad; uint64_t big[511]; } Big; /* 4096 bytes */

/* Line 4 is the state's use: the tests below point at it. */
static const char counter_source[] =
    "typedef struct { uint32_t a, b; } Pair;\n"
    "typedef struct { uint64_t sum; uint32_t calls, pad; } Total;\n"
    "typedef struct { uint32_t calls, pad; uint64_t big[511]; } Big;\n"
    "RK_HANDLER int count(const Pair *req, Total *resp, Big *state) {\n"
    "    state->calls += 1u;\n"
    "    state->big[510] += (uint64_t)req->a + req->b;\n"
    "    resp->sum = state->big[510];\n"
    "    resp->calls = state->calls;\n"
    "    return 0;\n"
    "}\n";

static rk_kernel_desc counter_desc(void) {
    rk_kernel_desc d = {.name = "counter", .handler_source = counter_source, .handler_name = "count",
                        .queue_capacity = 16};
    return d;
}

static Total call_once(rk_kernel *k, uint32_t a, uint32_t b) {
    Pair p = {a, b};
    Total t;
    memset(&t, 0xee, sizeof t);
    CHECK_OK(rk_kernel_call(k, &p, sizeof p, &t, sizeof t, NULL, SECONDS(30)));
    return t;
}

static void expect_launch(rk_runtime *rt, const rk_kernel_desc *d, rk_status want, const char *words) {
    rk_kernel *k = (rk_kernel *)0x1;
    CHECK_STATUS(rk_kernel_launch(rt, d, &k), want);
    CHECK(k == NULL);
    CHECK_STR_CONTAINS(rk_last_error(), words);
}

/* Sizes 0 take the handler's: an 8-byte request, a 16-byte reply and a
 * 4 KiB state that persists (the old crash with state_size 0). */
static void test_sizes_from_handler(rk_runtime *rt) {
    rk_kernel_desc d = counter_desc();
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    Total t = call_once(k, 2, 3);
    CHECK_U64_EQ(t.sum, 5);
    CHECK_EQ(t.calls, 1u);
    t = call_once(k, 10, 0);
    CHECK_U64_EQ(t.sum, 15);
    CHECK_EQ(t.calls, 2u);
    /* message_size became 8: a longer request is refused. */
    unsigned char nine[9] = {0};
    CHECK_STATUS(rk_kernel_call(k, nine, sizeof nine, &t, sizeof t, NULL, SECONDS(1)), RK_MESSAGE_TOO_LARGE);
    CHECK_STR_CONTAINS(rk_last_error(), "message_size 8");
    CHECK_OK(rk_kernel_destroy(k));

    /* The same sizes given explicitly are accepted. */
    d.message_size = sizeof(Pair);
    d.reply_size = sizeof(Total);
    d.state_size = sizeof(Big);
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_destroy(k));
}

static void test_size_mismatch_refused(rk_runtime *rt) {
    rk_kernel_desc d = counter_desc();
    d.message_size = 4;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "message_size is 4 but handler 'count' takes a 8-byte request");
    d = counter_desc();
    d.reply_size = 32;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "reply_size is 32 but handler 'count' takes a 16-byte reply");
    d = counter_desc();
    d.state_size = 16;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "state_size is 16 but handler 'count' takes a 4096-byte state");
}

static void test_initial_state(rk_runtime *rt) {
    static Big first; /* 4 KiB: not on the stack */
    memset(&first, 0, sizeof first);
    first.calls = 41;
    first.big[510] = 1000;
    rk_kernel_desc d = counter_desc();
    d.initial_state = &first;
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    first.calls = 0; /* copied at launch: later changes do not matter */
    CHECK_OK(rk_kernel_activate(k));
    Total t = call_once(k, 1, 2);
    CHECK_EQ(t.calls, 42u);
    CHECK_U64_EQ(t.sum, 1003);
    CHECK_OK(rk_kernel_destroy(k));

    if (strcmp(rk_runtime_backend_name(rt), "cpu") != 0) return;
    /* No state to start from (a host function: CPU only). */
    rk_kernel_desc h = test_desc(RK_MODE_PERSISTENT, 16);
    h.state_size = 0;
    h.initial_state = &first;
    expect_launch(rt, &h, RK_INVALID_ARGUMENT, "initial_state is set but the kernel has no state");
}

/* What only the CPU's C compiler would take is refused on the CPU too, with
 * the position and the target that refuses it. */
static void test_dialect_enforced(rk_runtime *rt) {
    rk_kernel_desc d = {.name = "dialect", .handler_name = "h", .queue_capacity = 16};
    d.handler_source = "RK_HANDLER int h(const uint32_t *req, uint32_t *resp, void *state) {\n"
                       "    (void)state;\n"
                       "    printf(\"%u\\n\", *req);\n"
                       "    *resp = *req;\n"
                       "    return 0;\n"
                       "}\n";
    expect_launch(rt, &d, RK_COMPILE_FAILED, "handler_source:3:5:");
    CHECK_STR_CONTAINS(rk_last_error(), "printf");
    CHECK_STR_CONTAINS(rk_last_error(), "target");

    d.handler_source = "RK_HANDLER int h(const uint32_t *req, uint32_t *resp, void *state) {\n"
                       "    (void)state;\n"
                       "    static uint32_t seen;\n"
                       "    seen += *req;\n"
                       "    *resp = seen;\n"
                       "    return 0;\n"
                       "}\n";
    expect_launch(rt, &d, RK_COMPILE_FAILED, "handler_source:3:");
    CHECK_STR_CONTAINS(rk_last_error(), "static local");
    CHECK_STR_CONTAINS(rk_last_error(), "refuse");

    /* The same handler in the dialect launches. */
    d.handler_source = "RK_HANDLER int h(const uint32_t *req, uint32_t *resp, uint32_t *seen) {\n"
                       "    *seen += *req;\n"
                       "    *resp = *seen;\n"
                       "    return 0;\n"
                       "}\n";
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_destroy(k));

    /* A handler with K2K channels (rk_emit) passes the check, leaving no error text. */
    if (strcmp(rk_runtime_backend_name(rt), "cpu") != 0) return;
    d.handler_source = "RK_HANDLER int h(const uint32_t *req, uint32_t *resp, void *state) {\n"
                       "    (void)state;\n"
                       "    *resp = *req;\n"
                       "    return rk_emit(0, req);\n"
                       "}\n";
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    if (rk_last_error()[0]) fprintf(stderr, "text after the launch: %s\n", rk_last_error());
    CHECK(strstr(rk_last_error(), "rk_emit") == NULL);
    CHECK_OK(rk_kernel_destroy(k));
}

static char dir[] = "/tmp/rk-handler-test-XXXXXX";

static char *write_file(const char *name, const char *text) {
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_handler_file(rk_runtime *rt) {
    CHECK(mkdtemp(dir) != NULL);
    /* The types in a header beside the handler: found by its #include. */
    char *header = write_file("pair.h", "typedef struct { uint32_t a, b; } Pair;\n");
    char *good = write_file("sum.c", "#include \"pair.h\"\n"
                                     "RK_HANDLER int sum(const Pair *req, uint64_t *resp, void *state) {\n"
                                     "    (void)state;\n"
                                     "    *resp = (uint64_t)req->a + req->b;\n"
                                     "    return 0;\n"
                                     "}\n");
    rk_kernel_desc d = {.name = "file", .handler_file = good, .handler_name = "sum", .queue_capacity = 16};
    rk_kernel *k;
    CHECK_OK(rk_kernel_launch(rt, &d, &k));
    CHECK_OK(rk_kernel_activate(k));
    Pair p = {7, 8};
    uint64_t r = 0;
    CHECK_OK(rk_kernel_call(k, &p, sizeof p, &r, sizeof r, NULL, SECONDS(30)));
    CHECK_U64_EQ(r, 15);
    CHECK_OK(rk_kernel_destroy(k));

    /* A dialect error names the file and its line. */
    char *bad = write_file("bad.c", "#include \"pair.h\"\n"
                                    "RK_HANDLER int sum(const Pair *req, uint64_t *resp, void *state) {\n"
                                    "    (void)state;\n"
                                    "    *resp = req->a + no_such_name;\n"
                                    "    return 0;\n"
                                    "}\n");
    d.handler_file = bad;
    char where[300];
    snprintf(where, sizeof where, "%s:4:22:", bad);
    expect_launch(rt, &d, RK_COMPILE_FAILED, where);

    char *plain = NULL;
    if (strcmp(rk_runtime_backend_name(rt), "cpu") == 0) {
        /* Backend C (no RK_HANDLER) goes to the C compiler unchecked: its
         * errors name the file and line too, not the cache's copy. */
        plain = write_file("plain.c", "int sum(const void *req, void *resp, void *state) {\n"
                                            "    (void)req; (void)resp; (void)state;\n"
                                            "    return missing_identifier;\n"
                                            "}\n");
        d.handler_file = plain;
        d.message_size = 8;
        snprintf(where, sizeof where, "%s:3:", plain);
        expect_launch(rt, &d, RK_COMPILE_FAILED, where);
    }

    d.handler_file = "/nonexistent/handler.c";
    expect_launch(rt, &d, RK_IO_ERROR, "cannot open handler_file '/nonexistent/handler.c'");
    d.handler_file = good;
    d.handler_source = counter_source;
    expect_launch(rt, &d, RK_INVALID_ARGUMENT, "more than one of handler_source, handler_file and handler");

    unlink(header), unlink(good), unlink(bad);
    if (plain) unlink(plain);
    rmdir(dir);
    free(header), free(good), free(bad), free(plain);
}

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "cpu";
    rk_runtime *rt = NULL;
    rk_runtime_desc rd = {.backend = backend};
    rk_status s = rk_runtime_create(&rd, &rt);
    if (s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE) RK_SKIP("%s: %s", backend, rk_last_error());
    CHECK_OK(s);
    test_sizes_from_handler(rt);
    test_size_mismatch_refused(rt);
    test_initial_state(rt);
    test_dialect_enforced(rt);
    test_handler_file(rt);
    CHECK_OK(rk_runtime_destroy(rt));
    puts("ok");
    return 0;
}
