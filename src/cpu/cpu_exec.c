/* Runs one block: every thread of it on the calling OS thread, as fibers, so
 * that sync_threads() is a real barrier and warp operations see all lanes.
 *
 * Fast path: a fiber starts threads one after another on its own stack, with
 * no switch between them. Only a thread that waits (at a barrier or a warp
 * operation) keeps its fiber parked, and switches straight to the next thing
 * to run: a released fiber, or another fiber that starts the next unstarted
 * thread. A kernel without barriers therefore costs one switch into a fiber
 * and one back per block, not per thread; one with barriers, one switch per
 * thread per barrier. Control returns to the worker's own stack when nothing
 * is left to run: the block is done, or stuck (a divergent barrier).
 *
 * Fibers are cached per executor (one executor per OS thread) and reused by
 * later blocks. All fibers of a block run on one OS thread, so RK_SHARED
 * (_Thread_local) statics are per block, as long as a thread runs one block
 * at a time, which it does.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_channel.h"
#include "cpu_device.h"
#include "ringkernel/dsl.h"

/* Kernels run on these stacks: room for local arrays and sanitizer redzones. */
enum { FIBER_STACK_SIZE = 256 * 1024, MAX_WARPS = RK_CPU_MAX_THREADS_PER_BLOCK / RK_CPU_WARP_SIZE };

typedef enum warp_op { WARP_SHFL, WARP_BALLOT } warp_op;

typedef struct fiber {
    rk__cpu_fiber_ctx ctx;
    rk__cpu_executor *ex;
    rk_dsl_thread self;    /* what rk__dsl_runtime->self() returns for the thread it runs */
    uint32_t linear;       /* linear thread index in the block */
    bool quit;             /* set at teardown: leave the idle loop for good */
    struct fiber *next;    /* in exactly one list: idle, runnable, barrier or warp waiters */
} fiber;

typedef struct fiber_list {
    fiber *head, *tail;
} fiber_list;

/* One warp operation in flight: each lane's operands, then each lane's result. */
typedef struct warp_exchange {
    uint32_t lanes, arrived, exited;
    uint32_t value[RK_CPU_WARP_SIZE], result[RK_CPU_WARP_SIZE];
    int32_t src[RK_CPU_WARP_SIZE];
    uint8_t mode[RK_CPU_WARP_SIZE], op[RK_CPU_WARP_SIZE], present[RK_CPU_WARP_SIZE];
    fiber_list waiters;
} warp_exchange;

typedef struct block_state {
    const rk__cpu_call *call;
    rk_dsl_thread proto;   /* block index and dimensions shared by every thread */
    uint32_t threads, started, exited, at_barrier, at_warp;
    bool grid_sync_refused;  /* grid_sync() in a launch that is not cooperative */
    uint32_t next_idx[3];  /* thread index of the next thread to start */
    fiber_list runnable, barrier;
    uint32_t warp_count;
    warp_exchange warps[MAX_WARPS];
} block_state;

struct rk__cpu_executor {
    rk__cpu_fiber_ctx thread; /* the OS thread's own stack: rk__cpu_run_block runs here */
    fiber_list idle;
    unsigned char *shared;
    size_t shared_size;
    rk_status failure;        /* a fiber could not be made for the block */
    char failure_text[RK_CPU_ERROR_TEXT];
    block_state block;
};

/* The fiber running on this OS thread; NULL outside a block. Initial-exec:
 * every DSL call reads it, and the default model costs a __tls_get_addr call. */
static _Thread_local fiber *current_fiber __attribute__((tls_model("initial-exec")));

static void list_push(fiber_list *l, fiber *f) {
    f->next = NULL;
    if (l->tail)
        l->tail->next = f;
    else
        l->head = f;
    l->tail = f;
}

static fiber *list_pop(fiber_list *l) {
    fiber *f = l->head;
    if (f) {
        l->head = f->next;
        if (!l->head) l->tail = NULL;
        f->next = NULL;
    }
    return f;
}

/* Moves every fiber of from to the end of to, in order. */
static void list_splice(fiber_list *to, fiber_list *from) {
    if (!from->head) return;
    if (to->tail)
        to->tail->next = from->head;
    else
        to->head = from->head;
    to->tail = from->tail;
    from->head = from->tail = NULL;
}

/* ---- the scheduler's side ------------------------------------------------- */

static rk_status take_fiber(rk__cpu_executor *ex, fiber **out);

/* What runs next on this executor: a released fiber, else a fiber for the next
 * unstarted thread, else the worker's own stack (the block is done or stuck).
 * start_first: an unstarted thread before a released fiber. */
static rk__cpu_fiber_ctx *next_context(rk__cpu_executor *ex, bool start_first) {
    block_state *b = &ex->block;
    fiber *f = start_first ? NULL : list_pop(&b->runnable);
    if (!f && b->started < b->threads && ex->failure == RK_OK) {
        rk_status s = take_fiber(ex, &f);
        if (s != RK_OK) {
            ex->failure = s;
            snprintf(ex->failure_text, sizeof ex->failure_text, "%s", rk_last_error());
            f = NULL;
        }
    }
    if (!f) f = list_pop(&b->runnable);
    current_fiber = f;
    return f ? &f->ctx : &ex->thread;
}

/* The thread on f waits: run something else until it is released. */
static void park(fiber *f) {
    rk__cpu_fiber_switch(&f->ctx, next_context(f->ex, false), false);
}

/* Computes every present lane's result, then lets the warp's waiters run. */
static void warp_complete(block_state *b, warp_exchange *w) {
    for (uint32_t lane = 0; lane < w->lanes; lane++) {
        if (!w->present[lane]) continue;
        if (w->op[lane] == WARP_BALLOT) {
            uint32_t bits = 0;
            for (uint32_t l = 0; l < w->lanes; l++)
                if (w->present[l] && w->op[l] == WARP_BALLOT && w->value[l]) bits |= 1u << l;
            w->result[lane] = bits;
            continue;
        }
        /* As CUDA with width 32: a source outside the warp, or a lane that has
         * exited or is elsewhere, gives the caller its own value back. */
        uint32_t s = (uint32_t)w->src[lane], src;
        switch (w->mode[lane]) {
        case 1: src = s >= RK_CPU_WARP_SIZE ? RK_CPU_WARP_SIZE : lane + s; break;
        case 2: src = lane ^ (s & (RK_CPU_WARP_SIZE - 1)); break;
        default: src = s & (RK_CPU_WARP_SIZE - 1); break;
        }
        bool usable = src < w->lanes && w->present[src] && w->op[src] == WARP_SHFL;
        w->result[lane] = usable ? w->value[src] : w->value[lane];
    }
    memset(w->present, 0, sizeof w->present);
    b->at_warp -= w->arrived;
    w->arrived = 0;
    list_splice(&b->runnable, &w->waiters);
}

/* The thread on f returned from the kernel. */
static void thread_exited(block_state *b, fiber *f) {
    b->exited++;
    warp_exchange *w = &b->warps[f->linear / RK_CPU_WARP_SIZE];
    w->exited++;
    /* A warp operation waits only for lanes that have not exited (CUDA's rule). */
    if (w->arrived && w->arrived + w->exited == w->lanes) warp_complete(b, w);
}

/* Sets f up as the next unstarted thread of the block. */
static void start_thread(block_state *b, fiber *f) {
    f->self = b->proto;
    memcpy(f->self.thread_idx, b->next_idx, sizeof b->next_idx);
    f->linear = b->started++;
    if (++b->next_idx[0] == b->proto.block_dim[0]) {
        b->next_idx[0] = 0;
        if (++b->next_idx[1] == b->proto.block_dim[1]) {
            b->next_idx[1] = 0;
            b->next_idx[2]++;
        }
    }
}

static void fiber_main(void *arg) {
    fiber *f = arg;
    rk__cpu_executor *ex = f->ex;
    rk__cpu_fiber_started(&f->ctx);
    for (;;) {
        if (f->quit) rk__cpu_fiber_switch(&f->ctx, &ex->thread, true);
        block_state *b = &ex->block;
        const rk__cpu_call *call = b->call;
        while (b->started < b->threads) {
            start_thread(b, f);
            rk__cpu_call_invoke(call);
            thread_exited(b, f);
        }
        /* Nothing left to start: wait in the idle list for a later block. */
        list_push(&ex->idle, f);
        park(f);
    }
}

static rk_status take_fiber(rk__cpu_executor *ex, fiber **out) {
    fiber *f = list_pop(&ex->idle);
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for a fiber");
        f->ex = ex;
        rk_status s = rk__cpu_fiber_create(&f->ctx, FIBER_STACK_SIZE, fiber_main, f);
        if (s != RK_OK) {
            free(f);
            return s;
        }
    }
    *out = f;
    return RK_OK;
}

static void free_fiber(fiber *f) {
    rk__cpu_fiber_destroy(&f->ctx);
    free(f);
}

/* Fibers stuck mid-kernel cannot be resumed: drop them with their stacks. */
static void drop_waiters(fiber_list *l) {
    for (fiber *f; (f = list_pop(l));) free_fiber(f);
}

static rk_status fault(block_state *b, char *error) {
    const rk_dsl_thread *p = &b->proto;
    int n = snprintf(error, RK_CPU_ERROR_TEXT, "cpu: kernel '%s', block (%u,%u,%u): ", b->call->name, p->block_idx[0],
                     p->block_idx[1], p->block_idx[2]);
    size_t used = n > 0 && n < RK_CPU_ERROR_TEXT ? (size_t)n : 0;
    if (b->at_barrier && b->exited)
        snprintf(error + used, RK_CPU_ERROR_TEXT - used,
                 "%u of %u threads wait at sync_threads() but %u threads returned without reaching it "
                 "(divergent barrier: every thread of a block must call sync_threads() the same number of times)",
                 b->at_barrier, b->threads, b->exited);
    else
        snprintf(error + used, RK_CPU_ERROR_TEXT - used,
                 "%u threads wait at sync_threads() while %u wait at a warp operation (shfl/ballot) that lanes at the "
                 "barrier never reach (divergent barrier or warp operation)",
                 b->at_barrier, b->at_warp);
    drop_waiters(&b->barrier);
    for (uint32_t i = 0; i < b->warp_count; i++) drop_waiters(&b->warps[i].waiters);
    return RK_DEVICE_FAULT;
}

static void block_init(rk__cpu_executor *ex, const rk__cpu_call *call, uint64_t linear) {
    block_state *b = &ex->block;
    uint64_t gx = call->grid.x, gy = call->grid.y;
    b->call = call;
    memset(&b->proto, 0, sizeof b->proto);
    b->proto.block_idx[0] = (unsigned)(linear % gx);
    b->proto.block_idx[1] = (unsigned)(linear / gx % gy);
    b->proto.block_idx[2] = (unsigned)(linear / gx / gy);
    b->proto.block_dim[0] = call->block.x;
    b->proto.block_dim[1] = call->block.y;
    b->proto.block_dim[2] = call->block.z;
    b->proto.grid_dim[0] = call->grid.x;
    b->proto.grid_dim[1] = call->grid.y;
    b->proto.grid_dim[2] = call->grid.z;
    b->proto.dynamic_shared = ex->shared;
    b->threads = call->block.x * call->block.y * call->block.z;
    b->started = b->exited = b->at_barrier = b->at_warp = 0;
    b->grid_sync_refused = false;
    memset(b->next_idx, 0, sizeof b->next_idx);
    b->runnable.head = b->runnable.tail = NULL;
    b->barrier.head = b->barrier.tail = NULL;
    b->warp_count = (b->threads + RK_CPU_WARP_SIZE - 1) / RK_CPU_WARP_SIZE;
    for (uint32_t i = 0; i < b->warp_count; i++) {
        warp_exchange *w = &b->warps[i];
        uint32_t first = i * RK_CPU_WARP_SIZE;
        w->lanes = b->threads - first < RK_CPU_WARP_SIZE ? b->threads - first : RK_CPU_WARP_SIZE;
        w->arrived = w->exited = 0;
        memset(w->present, 0, sizeof w->present);
        w->waiters.head = w->waiters.tail = NULL;
    }
}

rk_status rk__cpu_run_block(rk__cpu_executor *ex, const rk__cpu_call *call, uint64_t block_linear, char *error) {
    if (call->shared_memory != ex->shared_size || !ex->shared) {
        /* Exactly the launch's size, so ASan sees overruns of dynamic shared memory. */
        free(ex->shared);
        ex->shared_size = 0;
        ex->shared = malloc(call->shared_memory ? call->shared_memory : 1);
        if (!ex->shared) {
            snprintf(error, RK_CPU_ERROR_TEXT, "cpu: out of memory for %zu bytes of shared memory", call->shared_memory);
            return RK_OUT_OF_MEMORY;
        }
        ex->shared_size = call->shared_memory;
    }
    block_init(ex, call, block_linear);
    block_state *b = &ex->block;
    ex->failure = RK_OK;
    rk__cpu_fiber_ctx *first = next_context(ex, false);
    if (first != &ex->thread) rk__cpu_fiber_switch(&ex->thread, first, false);
    current_fiber = NULL;
    if (ex->failure != RK_OK) {
        /* Threads already parked cannot finish without the rest. */
        snprintf(error, RK_CPU_ERROR_TEXT, "%s", ex->failure_text);
        drop_waiters(&b->runnable);
        drop_waiters(&b->barrier);
        for (uint32_t i = 0; i < b->warp_count; i++) drop_waiters(&b->warps[i].waiters);
        return ex->failure;
    }
    if (b->at_barrier || b->at_warp) return fault(b, error);
    if (b->grid_sync_refused) {
        const rk_dsl_thread *p = &b->proto;
        snprintf(error, RK_CPU_ERROR_TEXT,
                 "cpu: kernel '%s', block (%u,%u,%u): grid_sync() in a launch of %u x %u x %u blocks that is not "
                 "cooperative (set rk_launch_desc.cooperative)",
                 call->name, p->block_idx[0], p->block_idx[1], p->block_idx[2], call->grid.x, call->grid.y,
                 call->grid.z);
        return RK_DEVICE_FAULT;
    }
    return RK_OK;
}

rk_status rk__cpu_executor_create(rk__cpu_executor **out) {
    rk__cpu_executor *ex = calloc(1, sizeof *ex);
    if (!ex) return rk__fail(RK_OUT_OF_MEMORY, "cpu: out of memory for an executor");
    rk__cpu_fiber_thread_init(&ex->thread);
    *out = ex;
    return RK_OK;
}

void rk__cpu_executor_destroy(rk__cpu_executor *ex) {
    if (!ex) return;
    /* Let each idle fiber leave its loop, so ASan can drop its fake stack. */
    for (fiber *f; (f = list_pop(&ex->idle));) {
        f->quit = true;
        rk__cpu_fiber_switch(&ex->thread, &f->ctx, false);
        free_fiber(f);
    }
    free(ex->shared);
    free(ex);
}

void rk__cpu_executor_destroy_cancelled(rk__cpu_executor *ex, const void *live_frame) {
    if (!ex) return;
    fiber *running = current_fiber;
    current_fiber = NULL;
    rk__cpu_fiber_abandoned(&ex->thread, live_frame);
    block_state *b = &ex->block;
    drop_waiters(&b->runnable);
    drop_waiters(&b->barrier);
    for (uint32_t i = 0; i < b->warp_count; i++) drop_waiters(&b->warps[i].waiters);
    if (running) free_fiber(running);
    rk__cpu_executor_destroy(ex);
}

/* ---- the kernel's side: rk__dsl_runtime ------------------------------------ */

/* What self() returns outside a block (a host thread calling a DSL function):
 * a single thread of a single block. */
static _Thread_local rk_dsl_thread lone_thread __attribute__((tls_model("initial-exec"))) = {
    .block_dim = {1, 1, 1},
    .grid_dim = {1, 1, 1},
};

static rk_dsl_thread *dsl_self(void) {
    fiber *f = current_fiber;
    return f ? &f->self : &lone_thread;
}

static void dsl_sync_threads(void) {
    fiber *f = current_fiber;
    if (!f) return;
    block_state *b = &f->ex->block;
    if (++b->at_barrier == b->threads) {
        /* The last to arrive releases the others and carries on without a switch. */
        b->at_barrier = 0;
        list_splice(&b->runnable, &b->barrier);
        return;
    }
    list_push(&b->barrier, f);
    park(f);
}

static uint32_t warp_exchange_value(warp_op op, uint32_t value, int src, int mode) {
    fiber *f = current_fiber;
    if (!f) return op == WARP_BALLOT ? (value ? 1u : 0u) : value;
    block_state *b = &f->ex->block;
    warp_exchange *w = &b->warps[f->linear / RK_CPU_WARP_SIZE];
    uint32_t lane = f->linear % RK_CPU_WARP_SIZE;
    w->value[lane] = value;
    w->src[lane] = src;
    w->mode[lane] = (uint8_t)mode;
    w->op[lane] = (uint8_t)op;
    w->present[lane] = 1;
    w->arrived++;
    b->at_warp++;
    if (w->arrived + w->exited == w->lanes) {
        warp_complete(b, w);
        return w->result[lane];
    }
    list_push(&w->waiters, f);
    park(f);
    return w->result[lane];
}

/* Block barrier, then thread 0 meets the other blocks, then the block again:
 * the rest of the block waits at the second barrier meanwhile. */
static void dsl_grid_sync(void) {
    fiber *f = current_fiber;
    if (!f) return;
    block_state *b = &f->ex->block;
    rk__cpu_grid_barrier *g = b->call->grid_barrier;
    uint64_t blocks = (uint64_t)b->call->grid.x * b->call->grid.y * b->call->grid.z;
    dsl_sync_threads();
    if (f->linear == 0) {
        if (g)
            rk__cpu_grid_barrier_wait(g);
        else if (blocks > 1)
            b->grid_sync_refused = true; /* reported when the block ends; blocks here run one after another */
    }
    dsl_sync_threads();
}

/* A polling pause. On a GPU the block's other warps run meanwhile; here the
 * calling thread also steps aside for the block's other threads, unstarted
 * ones first (next_context runs released threads before it starts new ones,
 * so a warp that polls for another warp's work, with warp operations in its
 * loop, would otherwise keep the later warps from ever starting). */
static void dsl_sleep_ns(unsigned ns) {
    (void)ns;
    sched_yield();
    fiber *f = current_fiber;
    if (!f) return;
    block_state *b = &f->ex->block;
    if (b->started < b->threads || b->runnable.head) {
        list_push(&b->runnable, f); /* runs again after the others (next_context pops f last at worst) */
        rk__cpu_fiber_switch(&f->ctx, next_context(f->ex, true), false);
    }
}

static uint32_t dsl_shfl(uint32_t bits, int src, int mode) { return warp_exchange_value(WARP_SHFL, bits, src, mode); }

static uint32_t dsl_ballot(int pred) { return warp_exchange_value(WARP_BALLOT, pred != 0, 0, 0); }

const rk_dsl_runtime rk__cpu_dsl_runtime_table = {
    .abi_version = RK_DSL_ABI_VERSION,
    .self = dsl_self,
    .sync_threads = dsl_sync_threads,
    .shfl = dsl_shfl,
    .ballot = dsl_ballot,
    .grid_sync = dsl_grid_sync,
    .sleep_ns = dsl_sleep_ns,
    .emit = rk__cpu_channel_emit,
};

/* For kernels compiled into the host program (dsl.h declares it extern). */
const rk_dsl_runtime *rk__dsl_runtime = &rk__cpu_dsl_runtime_table;
