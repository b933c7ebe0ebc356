/* Sending commands and waiting for them, in every pattern. Commands are
 * written as tagged words into the ring in host-mapped memory either way;
 * the persistent kernel polls the ring, the traditional pattern launches
 * a kernel per command that reads its words there (the graph pattern
 * replays those launches: sim_graph.c). Completion is the done word of
 * the kernels' reply in all. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "core/kernel_wait.h"
#include "sim/sim_internal.h"
#include "sim/sim_webgpu.h"

enum { SPIN_BEFORE_YIELD = 2000 };

/* The kernel's stream ran dry: for the persistent pattern, the kernel
 * returned (STOP) or died. */
static void *watch(void *arg) {
    rk_sim *sim = arg;
    rk_status s = rk_stream_synchronize(sim->stream);
    if (s != RK_OK) snprintf(sim->watch_error, sizeof sim->watch_error, "%s", rk_last_error());
    sim->watch_status = s;
    __atomic_store_n(&sim->watch_state, 1, __ATOMIC_RELEASE);
    return NULL;
}

static rk_status start_watcher(rk_sim *sim) {
    sim->watch_state = 0;
    sim->watch_status = RK_OK;
    sim->watch_error[0] = '\0';
    if (pthread_create(&sim->watcher, NULL, watch, sim) != 0)
        return rk__fail(RK_IO_ERROR, "rk_sim: cannot start the thread that watches the kernel");
    sim->watching = true;
    return RK_OK;
}

static rk_status join_watcher(rk_sim *sim) {
    if (!sim->watching) return RK_OK;
    pthread_join(sim->watcher, NULL);
    sim->watching = false;
    return sim->watch_status;
}

static rk_status launch(rk_sim *sim, rk_function *fn, uint32_t blocks, rk_arg *args, size_t n, bool cooperative) {
    rk_launch_desc d = {
        .grid = RK_DIM3(blocks, 1, 1),
        .block = RK_DIM3(sim->threads, 1, 1),
        .stream = sim->stream,
        .args = args,
        .arg_count = n,
        .cooperative = cooperative,
    };
    rk_status s = rk_launch(fn, &d);
    if (s == RK_OK) sim->launches++;
    return s;
}

rk_status rk__sim_launch_persistent(rk_sim *sim) {
    rk_arg args[RK_SIM_MAX_FIELDS + 8];
    size_t n = 0;
    rk__sim_state_args(sim, args, &n);
    sim->least_rows = (uint32_t)sim->rows / sim->blocks; /* the grid is settled now (applier_mark) */
    sim->first_seq = (uint32_t)(sim->sent + 1);
    sim->first_tick = sim->ticks;
    args[n++] = RK_ARG_UINT(sim->first_seq);
    args[n++] = RK_ARG_ULONG(sim->ticks);
    args[n++] = RK_ARG_ULONG(sim->steps);
    args[n++] = RK_ARG_INT(sim->relay ? (sim->applier ? 2 : 1) : 0); /* sim_bands.c, rk_sim_persistent_body_ */
    args[n++] = RK_ARG_INT(sim->halo);
    rk_status s = launch(sim, sim->persistent_fn, sim->blocks + (sim->relay ? 1u : 0u), args, n, true);
    if (s != RK_OK) return s;
    sim->running = true;
    return start_watcher(sim);
}

/* A command number a kernel wrote, seq, is t's or a later one's: compared
 * in the 32-bit space the kernels count in. */
static bool at_or_past(uint32_t seq, rk_sim_ticket t) { return (int32_t)(seq - (uint32_t)t) >= 0; }

/* Command t has completed: its slot's done word (sim_protocol.h, reply)
 * carries the tag of t or a later command. */
static bool completed(const rk_sim *sim, rk_sim_ticket t) {
    return at_or_past((uint32_t)(__atomic_load_n(&sim->mb->reply[t & (RK_SIM_SLOTS - 1u)][0], __ATOMIC_ACQUIRE) >> 32), t);
}

/* Persistent: every block has read command t, too (sim_protocol.h, taken).
 * With a relay, a command completes only after the relay has copied it and
 * every one before it, so one seen complete settles it without reading the
 * words the device writes (each read of them is a cache miss, and a slow
 * host write of a command can make the kernel's read of it come back
 * empty). */
static bool slot_known_free(const rk_sim *sim, rk_sim_ticket t) {
    return sim->pattern == RK_SIM_PERSISTENT && sim->relay && t <= sim->seen_done;
}

static bool slot_free(const rk_sim *sim, rk_sim_ticket t) {
    if (sim->pattern != RK_SIM_PERSISTENT || sim->relay) return completed(sim, t);
    return completed(sim, t) && at_or_past((uint32_t)__atomic_load_n(&sim->mb->taken[t & (RK_SIM_SLOTS - 1u)], __ATOMIC_ACQUIRE), t);
}

/* Why nothing can complete any more, or RK_OK. Persistent: the kernel's
 * stream ran dry before a STOP, so the kernel died. Traditional: the
 * watcher synchronized the stream (a wait took long) and the stream failed. */
static rk_status dead(rk_sim *sim) {
    if (sim->failed != RK_OK) return sim->failed;
    if (!sim->watching || !__atomic_load_n(&sim->watch_state, __ATOMIC_ACQUIRE)) return RK_OK;
    rk_status w = join_watcher(sim);
    /* A persistent kernel told to stop may return between the host's look
     * at the STOP's done word and this one: that is no fault. */
    if (w == RK_OK && (sim->pattern != RK_SIM_PERSISTENT || sim->stopping)) return RK_OK;
    sim->running = false;
    sim->failed = RK_DEVICE_FAULT;
    return rk__fail(RK_DEVICE_FAULT, "rk_sim: the %s (%s%s%s)",
                    sim->pattern == RK_SIM_PERSISTENT ? "persistent kernel stopped on its own" : "kernels' stream failed",
                    rk_status_name(sim->watch_status), sim->watch_error[0] ? ": " : "", sim->watch_error);
}

/* Traditional and graph: a wait that takes long hands the stream to the watcher, so
 * that a fault is seen while the host keeps polling (and a hang is not a
 * blocked host). */
enum { WATCH_AFTER_NS = 5000000 };

rk_status rk__sim_join_watcher(rk_sim *sim) { return join_watcher(sim); }

/* Every command up to seen_done has completed: move it past those that have since. */
static bool advance(rk_sim *sim) {
    rk_sim_ticket before = sim->seen_done;
    while (sim->seen_done < sim->sent && completed(sim, sim->seen_done + 1)) sim->seen_done++;
    return sim->seen_done != before;
}

void rk__sim_advance(rk_sim *sim) { (void)advance(sim); }

/* Command t's answer, when both words of its reply carry t's tag. */
static bool answer_now(const rk_sim *sim, rk_sim_ticket t, uint64_t *answer) {
    const uint64_t *reply = sim->mb->reply[t & (RK_SIM_SLOTS - 1u)];
    const uint64_t lo = __atomic_load_n(&reply[0], __ATOMIC_ACQUIRE), hi = __atomic_load_n(&reply[1], __ATOMIC_ACQUIRE);
    if ((uint32_t)(lo >> 32) != (uint32_t)t || (uint32_t)(hi >> 32) != (uint32_t)t) return false;
    *answer = (hi << 32) | (lo & 0xffffffffu);
    return true;
}

/* Waits until command t has completed (or, with for_slot, its slot is free).
 * With answer (not NULL), it takes t's answer at once when both its words
 * have landed (*got says so): they share the done word's line. */
static rk_status wait_for(rk_sim *sim, rk_sim_ticket t, bool for_slot, uint64_t *answer, bool *got) {
    if (!for_slot && t <= sim->seen_done) return RK_OK;
    if (for_slot && slot_known_free(sim, t)) return RK_OK;
    uint64_t since = rk__now_ns();
    for (unsigned i = 0;; i++) {
        if (for_slot ? slot_free(sim, t) : completed(sim, t)) {
            if (answer) *got = answer_now(sim, t, answer);
            if (for_slot) advance(sim);
            else if (t == sim->seen_done + 1) sim->seen_done = t;
            return RK_OK;
        }
        /* seen_done moves on while the host waits, a command a look: after
         * the command has completed, each look at a done word the device
         * wrote is a cache miss on the way back to the caller (the wave's
         * mixed workload: two to four a query waited for; H200, session 22:
         * mixed 384 against 410 us moving it after the wait). */
        if (sim->seen_done < sim->sent && completed(sim, sim->seen_done + 1))
            sim->seen_done++;
        if (i < SPIN_BEFORE_YIELD) {
            rk__cpu_relax(); /* as the former kernel's host did; no difference measured (H200, session 23) */
            continue;
        }
        sched_yield(); /* the CPU backend's workers may share this core */
        if ((i & 63) != 0) continue;
        rk_status s = dead(sim);
        if (s != RK_OK) return s;
        uint64_t now = rk__now_ns();
        if (sim->pattern != RK_SIM_PERSISTENT && !sim->watching && now - since > WATCH_AFTER_NS) {
            s = start_watcher(sim);
            if (s != RK_OK) return s;
        }
        if (advance(sim)) {
            since = now;
        } else if (now - since > sim->hang_ns) {
            return rk__fail(RK_HUNG, "rk_sim: no command completed for %llu ms (waiting for %llu, command %llu not done)",
                            (unsigned long long)(sim->hang_ns / 1000000u), (unsigned long long)t,
                            (unsigned long long)(sim->seen_done + 1));
        }
    }
}

rk_status rk__sim_wait(rk_sim *sim, rk_sim_ticket t) {
    return sim->wg ? rk__sim_wg_wait(sim, t) : wait_for(sim, t, false, NULL, NULL);
}

rk_status rk__sim_wait_answer(rk_sim *sim, rk_sim_ticket t, uint64_t *answer) {
    if (sim->wg) {
        rk_status s = rk__sim_wg_wait(sim, t);
        return s != RK_OK ? s : rk__sim_read_answer(sim, t, answer);
    }
    bool got = false;
    rk_status s = wait_for(sim, t, false, answer, &got);
    if (s != RK_OK || got) return s;
    return rk__sim_read_answer(sim, t, answer);
}

/* The answer of a completed command: its reply's high word may land a
 * moment after the done word (sim_protocol.h); their tags say when both
 * have. */
rk_status rk__sim_read_answer(rk_sim *sim, rk_sim_ticket t, uint64_t *answer) {
    const uint64_t since = rk__now_ns();
    for (unsigned i = 0;; i++) {
        if (answer_now(sim, t, answer)) return RK_OK;
        if (i < SPIN_BEFORE_YIELD) {
            rk__cpu_relax();
            continue;
        }
        sched_yield();
        if (rk__now_ns() - since > sim->hang_ns)
            return rk__fail(RK_HUNG, "rk_sim: command %llu is done but its answer never arrived", (unsigned long long)t);
    }
}

/* Traditional: the launches of command t, whose words are in the ring. */
static rk_status launch_traditional(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg,
                                    rk_sim_ticket t, uint64_t steps) {
    rk_arg args[RK_SIM_MAX_FIELDS + 8];
    size_t n = 0;
    rk__sim_state_args(sim, args, &n);
    if (op == RK_SIM_OP_STEP && arg > 0) {
        for (uint32_t k = 0; k < arg; k++) {
            size_t m = n;
            args[m++] = RK_ARG_UINT(k + 1 == arg ? (uint32_t)t : 0u);
            args[m++] = RK_ARG_ULONG(steps + k);
            rk_status s = launch(sim, sim->step_fn, sim->blocks, args, m, false);
            if (s != RK_OK) return s;
        }
        return RK_OK;
    }
    const int count = rk__sim_command_args(sim, op, begin, end, t, steps, args, &n);
    return launch(sim, sim->command_fn, (uint32_t)count, args, n, false);
}

/* Whether the relay block's applier (device/sim_applier.c) applies a
 * command (RK_SIM_OP_RELAYED in its OP word, or 0): one reaching at most
 * RK_SIM_APPLIER_ROWWISE bands, where the simulation has an applier, if
 * row-wise (an impulse), or an RK_SIM_QUERY_NEXT while the applier has
 * nothing else to do. Only these: their handlers may run on one warp
 * (sim.h), where a region command's or another query's may use block
 * barriers. Decided here, where it costs nothing, rather than by the
 * relay's warp on the way of every command. */
#define RK_SIM_APPLIER_ROWWISE 4u
static bool reaches_few_bands(const rk_sim *sim, uint32_t begin, uint32_t end) {
    /* With every band at least rows / bands rows high, L rows meet at most
     * 1 + ceil((L - 1) / least) bands: a short command needs no division
     * (two of them cost the call about as much as the rest of it). */
    if (end - begin <= (RK_SIM_APPLIER_ROWWISE - 1u) * sim->least_rows + 1u) return true;
    const int lo = RK_SIM_BAND_OF_ROW(begin, sim->blocks, sim->rows), hi = RK_SIM_BAND_OF_ROW(end - 1u, sim->blocks, sim->rows);
    return (uint32_t)(hi - lo) < RK_SIM_APPLIER_ROWWISE;
}

static uint32_t applier_mark(const rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg) {
    if (!sim->applier || op >= RK_SIM_OP_STEP || end == 0u) return 0u;
    if (arg & RK_SIM_ARG_ROWWISE) return reaches_few_bands(sim, begin, end) ? RK_SIM_OP_RELAYED : 0u;
    /* A query: the applier has it from shared memory at once, where its
     * band reads it from the log (H200, session 24: the wave's mixed
     * workload with each command waited 1079 -> 992 us). But only while the
     * applier has nothing else to do: behind an impulse sent with it (the
     * same workload with queries waited) it waited for the impulse, where
     * its band answers it beside the applier (360 -> 483 us, measured with
     * a first version that also answered it ahead of its step). */
    const uint32_t next = RK_SIM_ARG_QUERY | RK_SIM_ARG_NEXT;
    if (sim->applier_queries && (arg & next) == next &&
        (sim->last_relayed <= sim->seen_done || completed(sim, sim->last_relayed)) && reaches_few_bands(sim, begin, end))
        return RK_SIM_OP_RELAYED;
    return 0u;
}

rk_status rk__sim_submit(rk_sim *sim, uint32_t op, uint32_t begin, uint32_t end, uint32_t arg, const void *payload,
                         size_t size, rk_sim_ticket *ticket) {
    if (sim->wg) return rk__sim_wg_submit(sim, op, begin, end, arg, payload, size, ticket); /* sim_webgpu.c */
    if (ticket) *ticket = 0;
    rk_status s = dead(sim);
    if (s != RK_OK) return s;
    rk_sim_ticket t = sim->sent + 1;
    /* The slot last held command t - SLOTS: it must have completed and been read. */
    if (t > RK_SIM_SLOTS) {
        s = wait_for(sim, t - RK_SIM_SLOTS, true, NULL, NULL);
        if (s != RK_OK) return s;
    }
    uint32_t fields[RK_SIM_CMD_WORDS] = {0};
    const uint32_t mark = applier_mark(sim, op, begin, end, arg);
    fields[RK_SIM_W_OP] = op | mark;
    fields[RK_SIM_W_BEGIN] = begin;
    fields[RK_SIM_W_END] = end;
    fields[RK_SIM_W_ARG] = arg;
    if (size) memcpy(&fields[RK_SIM_W_PAYLOAD], payload, size);
    uint64_t *slot = sim->mb->cmd[t & (RK_SIM_SLOTS - 1u)];
    for (unsigned w = 0; w < sim->words; w++) /* the words the kernels read (rk__sim_wire_words) */
        __atomic_store_n(&slot[w], (uint64_t)(uint32_t)t << 32 | fields[w], __ATOMIC_RELEASE);
    sim->sent = t;
    if (mark) sim->last_relayed = t;
    uint64_t steps_before = sim->steps;
    if (op == RK_SIM_OP_STEP) sim->steps += arg;
    sim->ticks += op == RK_SIM_OP_STEP && arg > 0 ? arg : 1u;
    if (sim->pattern != RK_SIM_PERSISTENT) {
        s = sim->pattern == RK_SIM_GRAPH ? rk__sim_graph_launch(sim, op, begin, end, arg, t, steps_before)
                                         : launch_traditional(sim, op, begin, end, arg, t, steps_before);
        if (s != RK_OK) {
            sim->failed = s;
            return s;
        }
    }
    if (ticket) *ticket = t;
    return RK_OK;
}

/* A command's done word can come before the rest of its block has written
 * its rows (rk_sim_region_command_ answers before the block's barrier, for
 * latency): only the end of its launch says every row is written, and a
 * copy on the copy stream must not start before it. The watcher waits for
 * that end, so that a launch that never ends is RK_HUNG, not a hung host. */
rk_status rk__sim_drain(rk_sim *sim) {
    if (sim->wg || sim->pattern == RK_SIM_PERSISTENT) return RK_OK;
    if (!sim->watching) {
        rk_status s = start_watcher(sim);
        if (s != RK_OK) return s;
    }
    const uint64_t since = rk__now_ns();
    for (unsigned i = 0; !__atomic_load_n(&sim->watch_state, __ATOMIC_ACQUIRE); i++) {
        if (i < SPIN_BEFORE_YIELD) continue;
        sched_yield();
        if (rk__now_ns() - since > sim->hang_ns)
            return rk__fail(RK_HUNG, "rk_sim: every command sent has answered, but their launches did not end within "
                                     "%llu ms (a thread of a command or step still runs)",
                            (unsigned long long)(sim->hang_ns / 1000000u));
    }
    rk_status s = join_watcher(sim);
    if (s == RK_OK) return RK_OK;
    sim->failed = RK_DEVICE_FAULT;
    return rk__fail(RK_DEVICE_FAULT, "rk_sim: the kernels' stream failed (%s: %s)", rk_status_name(s),
                    sim->watch_error);
}

rk_status rk__sim_stop(rk_sim *sim) {
    if (!sim->running) return RK_OK;
    rk_sim_ticket t = 0;
    sim->stopping = true;
    rk_status s = rk__sim_submit(sim, RK_SIM_OP_STOP, 1, 0, 0, NULL, 0, &t);
    if (s == RK_OK) s = rk__sim_wait(sim, t);
    sim->stopping = false;
    if (s != RK_OK && s != RK_DEVICE_FAULT) return s; /* still running: leave the watcher alone */
    rk_status w = join_watcher(sim);
    sim->running = false;
    return s != RK_OK ? s : w;
}
