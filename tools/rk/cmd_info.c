/* rk info: every built-in backend in selection order, its devices, why it is
 * unavailable if it is, and which device automatic selection would pick. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "output.h"

static void print_device_text(uint32_t index, const rk_device_info *d) {
    char mem[32] = "unknown", units[48] = "";
    if (d->total_memory) cli_format_bytes(d->total_memory, mem, sizeof mem);
    if (d->multiprocessors)
        snprintf(units, sizeof units, ", %u %s", d->multiprocessors,
                 strcmp(d->backend, "cpu") == 0 ? "cores" : "multiprocessors");
    printf("    [%u] %s\n", index, d->name);
    printf("        vendor %s, architecture %s%s%s\n", d->vendor[0] ? d->vendor : "-",
           d->architecture[0] ? d->architecture : "-", d->driver[0] ? ", driver " : "", d->driver);
    if (d->compute_major) printf("        compute capability %d.%d\n", d->compute_major, d->compute_minor);
    printf("        memory %s%s, warp %u, shared memory/block %u B\n", mem, units, d->warp_size,
           d->max_shared_memory_per_block);
    printf("        max threads/block %u, block %ux%ux%u, grid %ux%ux%u\n", d->max_threads_per_block,
           d->max_block_dim[0], d->max_block_dim[1], d->max_block_dim[2], d->max_grid_dim[0], d->max_grid_dim[1],
           d->max_grid_dim[2]);
    printf("        persistent kernels %s, cooperative launch %s, host-mapped memory %s\n",
           d->persistent_kernels ? "yes" : "no", d->cooperative_launch ? "yes" : "no",
           d->host_mapped_memory ? "yes" : "no");
    if (d->software) printf("        software device: automatic selection prefers the native CPU backend\n");
}

static void print_device_json(json_writer *j, uint32_t index, const rk_device_info *d) {
    json_object_begin(j);
    json_field_u64(j, "index", index);
    json_field_string(j, "name", d->name);
    json_field_string(j, "vendor", d->vendor);
    json_field_string(j, "driver", d->driver);
    json_field_string(j, "architecture", d->architecture);
    json_key(j, "compute_capability");
    if (d->compute_major) {
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", d->compute_major, d->compute_minor);
        json_string(j, cc);
    } else {
        json_null(j);
    }
    /* 0 means the backend could not tell: null, not a count of zero. */
    json_key(j, "total_memory");
    if (d->total_memory) json_u64(j, d->total_memory); else json_null(j);
    json_key(j, "multiprocessors");
    if (d->multiprocessors) json_u64(j, d->multiprocessors); else json_null(j);
    json_field_u64(j, "warp_size", d->warp_size);
    json_field_u64(j, "max_threads_per_block", d->max_threads_per_block);
    json_field_u64(j, "max_shared_memory_per_block", d->max_shared_memory_per_block);
    json_key(j, "max_block_dim");
    json_array_begin(j);
    for (int i = 0; i < 3; i++) json_u64(j, d->max_block_dim[i]);
    json_array_end(j);
    json_key(j, "max_grid_dim");
    json_array_begin(j);
    for (int i = 0; i < 3; i++) json_u64(j, d->max_grid_dim[i]);
    json_array_end(j);
    json_field_bool(j, "persistent_kernels", d->persistent_kernels);
    json_field_bool(j, "cooperative_launch", d->cooperative_launch);
    json_field_bool(j, "host_mapped_memory", d->host_mapped_memory);
    json_field_bool(j, "software", d->software);
    json_object_end(j);
}

int rk_cmd_info(int argc, char **argv) {
    bool as_json = false;
    const cli_opt opts[] = {
        {"json", 0, CLI_FLAG, &as_json, NULL, "print one JSON object instead of text", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "info",
        .synopsis = "[options]",
        .summary = "Lists every backend built into this library, in automatic-selection order,\n"
                   "with its devices, or the reason it cannot run here, and the device that\n"
                   "automatic selection (honouring RK_BACKEND) would use.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }

    /* Selection first, so its error text is not overwritten by the listing. */
    const rk_backend *chosen = NULL;
    uint32_t chosen_device = 0;
    rk_status sel = rk_select_device(NULL, &chosen, &chosen_device);
    char sel_error[512] = "";
    if (sel != RK_OK) snprintf(sel_error, sizeof sel_error, "%s: %s", rk_status_name(sel), rk_last_error());
    const char *env = getenv("RK_BACKEND");
    /* A named backend that cannot be selected (RK_BACKEND=nonesuch) is a
     * failure of this command, not only a line in its listing. */
    int exit_code = sel == RK_OK ? RK_EXIT_OK : cli_exit_for_selection(sel);

    json_writer j;
    if (as_json) {
        json_init(&j, stdout);
        json_object_begin(&j);
        json_field_string(&j, "version", rk_version());
        json_field_string(&j, "commit", cli_git_describe());
        json_key(&j, "backends");
        json_array_begin(&j);
    } else {
        printf("ringkernel %s (commit %s)\n\nbackends, in automatic-selection order:\n", rk_version(),
               cli_git_describe());
    }

    for (size_t b = 0; b < rk_backend_count(); b++) {
        const rk_backend *backend = rk_backend_at(b);
        uint32_t count = 0;
        rk_status s = rk_backend_device_count(backend, &count);
        const char *reason = rk_backend_unavailable_reason(backend);
        bool available = s == RK_OK && count > 0;
        if (as_json) {
            json_object_begin(&j);
            json_field_string(&j, "name", rk_backend_name(backend));
            json_field_bool(&j, "available", available);
            json_field_string(&j, "reason", available ? NULL : reason);
            json_key(&j, "devices");
            json_array_begin(&j);
        } else if (available) {
            printf("  %-8s %u device%s\n", rk_backend_name(backend), count, count == 1 ? "" : "s");
        } else {
            printf("  %-8s unavailable: %s\n", rk_backend_name(backend), reason);
        }
        for (uint32_t d = 0; available && d < count; d++) {
            rk_device_info info;
            rk_status is = rk_backend_device_info(backend, d, &info);
            if (is != RK_OK) {
                cli_report_status("info", "device info", is);
                exit_code = RK_EXIT_FAILURE;
                continue;
            }
            if (as_json)
                print_device_json(&j, d, &info);
            else
                print_device_text(d, &info);
        }
        if (as_json) {
            json_array_end(&j);
            json_object_end(&j);
        }
    }

    if (as_json) {
        json_array_end(&j);
        json_field_string(&j, "rk_backend_env", env && *env ? env : NULL);
        json_key(&j, "selected");
        if (sel == RK_OK) {
            char name[48];
            snprintf(name, sizeof name, "%s:%u", rk_backend_name(chosen), chosen_device);
            json_string(&j, name);
        } else {
            json_null(&j);
        }
        json_field_string(&j, "selection_error", sel == RK_OK ? NULL : sel_error);
        json_object_end(&j);
        json_finish(&j);
    } else if (sel == RK_OK) {
        printf("\nautomatic selection: %s:%u%s%s%s\n", rk_backend_name(chosen), chosen_device,
               env && *env ? " (RK_BACKEND=" : "", env && *env ? env : "", env && *env ? ")" : "");
    } else {
        printf("\nautomatic selection failed: %s\n", sel_error);
    }
    return exit_code;
}
