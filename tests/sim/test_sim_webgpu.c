/* WebGPU and simulations: the sim API does not run on WebGPU yet
 * (docs/simulations.md, "WebGPU"), so rk_sim_create there must refuse with
 * RK_UNSUPPORTED and say why, never fail later or crash; the kernel source
 * a simulation would compile is still generated for inspection. Skipped
 * (77) without a WebGPU device. */
#include <stdlib.h>

#include "sim_test.h"

static const char source[] =
    "RK_DEVICE void tick(const rk_sim_state *s, const rk_sim_region *r) {\n"
    "    for (int i = r->row_begin + r->tid; i < r->row_end; i += r->threads) s->cells[i] += 1;\n"
    "}\n";

int main(int argc, char **argv) {
    const char *device = sim_test_device(argc, argv); /* CTest passes "webgpu" */
    static const rk_sim_field fields[] = {{"cells", RK_SIM_I32, 8}};
    for (int p = 0; p < 2; p++) {
        rk_sim_desc d = {.device = device, .pattern = p ? RK_SIM_TRADITIONAL : RK_SIM_PERSISTENT, .source = source,
                         .fields = fields, .field_count = 1, .rows = 8, .step = "tick"};
        rk_sim *sim = NULL;
        CHECK_STATUS(rk_sim_create(&d, &sim), RK_UNSUPPORTED);
        CHECK(sim == NULL);
        CHECK_STR_CONTAINS(rk_last_error(), "webgpu");
        CHECK_STR_CONTAINS(rk_last_error(), "cannot map host memory");
        char *text = NULL;
        CHECK_OK(rk_sim_generate_source(&d, &text));
        CHECK(text && strstr(text, "rk_sim_step"));
        free(text);
    }
    printf("sim on %s: refused with RK_UNSUPPORTED and its reason\n", device);
    return 0;
}
