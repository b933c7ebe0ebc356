/* The exported entry points of the calls in api_entry.h: clear the calling
 * thread's error text, then run the implementation (built as rk__impl_<name>).
 * One wrapper for every call, rather than a line at the top of each, so no
 * call can forget it. */
#include "api_entry.h"
#include "backend_impl.h"
#include "ringkernel/channel.h"
#include "ringkernel/channel_mpi.h"
#include "ringkernel/sim.h"
#include "ringkernel/transpile.h"

/* The names are used only with # and ##, so the renaming macros of the build
 * do not touch them: the symbol is the public name, the callee the internal one. */
#define RK_ENTRY(name, params, args)                                                              \
    rk_status rk__entry_##name params __asm__(#name);                                            \
    rk_status rk__entry_##name params {                                                           \
        rk__clear_error();                                                                         \
        return rk__impl_##name args;                                                               \
    }                                                                                              \
    _Static_assert(__builtin_types_compatible_p(__typeof__(rk__entry_##name), __typeof__(rk__impl_##name)), \
                   #name ": the wrapper's parameters differ from the header's");

RK_PUBLIC_STATUS_CALLS(RK_ENTRY)
