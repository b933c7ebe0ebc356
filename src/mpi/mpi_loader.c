/* The rk_mpi_* calls of libringkernel: they open the MPI plugin
 * (mpi_plugin.h) beside this library on first use, or the file named by
 * RK_MPI_PLUGIN; without it (built without MPI, or Open MPI not installed
 * here) every call returns RK_UNSUPPORTED saying why. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_impl.h"
#include "mpi_plugin.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const rk__mpi_plugin *plugin;
static char why[768];
static const char anchor; /* an address inside this library, for dladdr */

static void load(void) {
    char path[4096];
    const char *env = getenv("RK_MPI_PLUGIN");
    Dl_info info;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else if (dladdr(&anchor, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
        int dir = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
        snprintf(path, sizeof path, "%.*s/%s", dir, info.dli_fname, RK__MPI_PLUGIN_FILE);
    } else {
        snprintf(path, sizeof path, "%s", RK__MPI_PLUGIN_FILE);
    }
    /* GLOBAL: Open MPI's own components resolve libmpi's symbols. */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "MPI channels are not available (built without MPI, or Open MPI is not installed): %.600s",
                 e ? e : path);
        return;
    }
    const rk__mpi_plugin *p = dlsym(h, RK__MPI_PLUGIN_SYMBOL);
    if (!p || p->abi != RK__MPI_PLUGIN_ABI) {
        snprintf(why, sizeof why, "%.600s is not a ringkernel MPI plugin of this version", path);
        dlclose(h);
        return;
    }
    plugin = p; /* stays loaded: MPI cannot be initialized twice in a process */
}

static bool ready(void) {
    pthread_once(&once, load);
    return plugin != NULL;
}

static rk_status absent(const char *fn) { return rk__fail(RK_UNSUPPORTED, "%s: %s", fn, why); }

rk_status rk_mpi_create(const rk_mpi_desc *desc, rk_mpi **out) {
    if (out) *out = NULL;
    return ready() ? plugin->create(desc, out) : absent("rk_mpi_create");
}

rk_status rk_mpi_destroy(rk_mpi *m) { return ready() ? plugin->destroy(m) : absent("rk_mpi_destroy"); }

rk_status rk_mpi_rank(rk_mpi *m, int *rank, int *size) {
    return ready() ? plugin->rank(m, rank, size) : absent("rk_mpi_rank");
}

rk_status rk_mpi_export(rk_mpi *m, rk_kernel *dst, const char *name) {
    return ready() ? plugin->export_kernel(m, dst, name) : absent("rk_mpi_export");
}

rk_status rk_mpi_connect(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                         uint64_t timeout_ns, rk_channel **out) {
    if (out) *out = NULL;
    return ready() ? plugin->connect(m, src, port, name, desc, timeout_ns, out) : absent("rk_mpi_connect");
}

rk_status rk_mpi_check(rk_mpi *m) { return ready() ? plugin->check(m) : absent("rk_mpi_check"); }
