/* rk transpile from the command line: output to stdout and -o, -I, -D,
 * --kind, --tile, --halo, standard input, and the exit codes (0 success,
 * 1 errors in the source or unreadable files, 2 usage). argv[1] is rk. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases.h"
#include "check.h"

static const char *rk;
static char dir[] = "/tmp/rk_cli_XXXXXX";

typedef struct outcome {
    int code;
    char *out, *err;
} outcome;

/* Runs `rk transpile ARGS` through the shell; stdout and stderr to files. */
static outcome run(const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' transpile %s >'%s/stdout' 2>'%s/stderr'", RK_SOURCE_DIR, rk, args, dir,
             dir);
    int status = system(cmd);
    CHECK(status != -1 && WIFEXITED(status));
    outcome o = {.code = WEXITSTATUS(status)};
    char path[512];
    snprintf(path, sizeof path, "%s/stdout", dir);
    o.out = rk_test_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/stderr", dir);
    o.err = rk_test_read_file(path, NULL);
    CHECK(o.out && o.err);
    return o;
}

static void expect(const char *args, int code, const char *in_out, const char *in_err) {
    outcome o = run(args);
    if (o.code != code || (in_out && !strstr(o.out, in_out)) || (in_err && !strstr(o.err, in_err))) {
        fprintf(stderr, "rk transpile %s\n  exit %d (expected %d)\n  stdout: %.400s\n  stderr: %.400s\n", args, o.code,
                code, o.out, o.err);
        exit(1);
    }
    free(o.out);
    free(o.err);
}

static char *golden(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, "tests/transpile/golden/%s.cu", name);
    char *path = tp_case_path(rel);
    char *text = rk_test_read_file(path, NULL);
    CHECK(text != NULL);
    free(path);
    return text;
}

static void write_file(const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_TO_RK\n", argv[0]);
        return 2;
    }
    rk = argv[1];
    CHECK(mkdtemp(dir) != NULL);
    char args[1024];

    expect("--help", 0, "usage: rk transpile", NULL);

    /* The examples give their golden files, on stdout or with -o. */
    char *want = golden("vector_scale");
    outcome o = run("--target cuda examples/kernels/vector_scale.c");
    CHECK_EQ(o.code, 0);
    CHECK(strcmp(o.out, want) == 0);
    CHECK_STR_CONTAINS(o.err, "vector_scale: global");
    free(o.out), free(o.err), free(want);

    snprintf(args, sizeof args, "examples/kernels/laplacian.c --tile 8x4 --halo 2 -q -o '%s/lap.cu'", dir);
    expect(args, 0, NULL, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/lap.cu", dir);
    char *written = rk_test_read_file(path, NULL);
    want = golden("laplacian_8x4_halo2");
    CHECK(written && strcmp(written, want) == 0);
    free(written), free(want);

    expect("--kind stencil --tile=16x8x4 examples/kernels/heat3d.c", 0, "__launch_bounds__(512)",
           "heat3d: stencil, 3-D, block 16x8x4, halo 1, extra arguments nx, ny, nz");
    expect("-k handler examples/kernels/poly_handler.c", 0, "__device__ int poly_eval(",
           "poly_eval: handler, request 44 B, reply 16 B, state 16 B");

    /* -I, -D and standard input. */
    snprintf(path, sizeof path, "%s/inc", dir);
    CHECK(mkdir(path, 0700) == 0);
    write_file("inc/scale.h", "#define FACTOR (SCALE * 2)\n");
    write_file("k.c", "#include <ringkernel/dsl.h>\n#include \"scale.h\"\n"
                      "RK_KERNEL void k(float *d) { d[0] = FACTOR; }\n");
    snprintf(args, sizeof args, "-I '%s/inc' -D SCALE=3 '%s/k.c'", dir, dir);
    expect(args, 0, "d[0] = 3 * 2;", NULL);
    snprintf(args, sizeof args, "-I'%s/inc' -DSCALE=5 - < '%s/k.c'", dir, dir);
    expect(args, 0, "d[0] = 5 * 2;", NULL);

    /* Errors in the source: exit 1 and compiler-style diagnostics. */
    write_file("bad.c", "#include <ringkernel/dsl.h>\nRK_KERNEL void k(float *d) {\n    d[0] = printf(1);\n}\n");
    snprintf(args, sizeof args, "'%s/bad.c'", dir);
    expect(args, 1, NULL, "bad.c:3:12: error: 'printf' is a host library function; kernels cannot call it");
    expect("--kind handler examples/kernels/vector_scale.c", 1, NULL, "the requested kind is handler");
    expect("examples/kernels/no_such_file.c", 1, NULL, "cannot read 'examples/kernels/no_such_file.c'");

    /* Usage errors: exit 2. */
    expect("", 2, NULL, "no input file");
    expect("--frobnicate examples/kernels/vector_scale.c", 2, NULL, "unknown option '--frobnicate'");
    expect("--target metal examples/kernels/vector_scale.c", 2, NULL, "unknown target 'metal'");
    expect("--kind global2 examples/kernels/vector_scale.c", 2, NULL, "unknown kind 'global2'");
    expect("--tile 0x4 examples/kernels/laplacian.c", 2, NULL, "--tile wants WxH or WxHxD");
    expect("--tile 16 examples/kernels/laplacian.c", 2, NULL, "--tile wants WxH or WxHxD");
    expect("--halo -1 examples/kernels/laplacian.c", 2, NULL, "--halo wants a number from 1 to 64");
    expect("examples/kernels/laplacian.c -o", 2, NULL, "'-o' needs a value");
    expect("a.c b.c", 2, NULL, "more than one input file");

    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    CHECK(system(args) == 0);
    printf("rk transpile checks passed\n");
    return 0;
}
