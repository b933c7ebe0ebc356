/* The library's side of every simulation kernel, in the DSL, in three
 * parts compiled one after the other: this file (what the relay and the
 * bands share: bands of rows, answers, pauses, the bands' progress words),
 * sim_relay.c (the relay) and sim_bands.c (the bands and the kernel
 * bodies). Compiled after sim_protocol.h, the generated declarations
 * (rk_sim_state, rk_sim_region), the user's source and the generated
 * rk_sim_step_ / rk_sim_dispatch_; the generated kernels that follow only
 * unpack their arguments into an rk_sim_state and call the bodies in
 * sim_bands.c (src/sim/sim_source.c).
 *
 * Bands: block b owns rows RK_SIM_BAND_FIRST(b) .. of the partition. Steps
 * and global commands meet every band at a grid barrier (persistent) or a
 * launch boundary (traditional); a region command runs on the bands it
 * reaches only, and those add up its answer on the board. */

/* RK_SIM_BAND_OF_ROW and RK_SIM_BAND_FIRST (sim_protocol.h) in 32-bit
 * arithmetic where it cannot overflow (rows * bands < 2^32, any grid that
 * fits a GPU), with the same results: a 64-bit division is a long
 * subroutine on a GPU, and the relay and the bands work out bands on the
 * way of every command. */
RK_DEVICE int rk_sim_band_of_row_(int r, int bands, int rows) {
    if ((uint64_t)rows * (uint64_t)bands <= 0xffffffffu)
        return (int)((((uint32_t)r + 1u) * (uint32_t)bands - 1u) / (uint32_t)rows);
    return RK_SIM_BAND_OF_ROW(r, bands, rows);
}
RK_DEVICE int rk_sim_band_first_(int b, int bands, int rows) {
    if ((uint64_t)rows * (uint64_t)bands <= 0xffffffffu) return (int)((uint32_t)b * (uint32_t)rows / (uint32_t)bands);
    return RK_SIM_BAND_FIRST(b, bands, rows);
}

/* RK_SIM_TRACE (0 by default): stamps of each command's way through the
 * relay and the bands in the board's trace (sim_protocol.h), on a GPU. */
#ifndef RK_SIM_TRACE
#define RK_SIM_TRACE 0
#endif
RK_DEVICE uint64_t rk_sim_now_(void) {
#if defined(__CUDACC_RTC__)
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    return 0;
#endif
}
/* RK_SIM_TRACE_FROM (0: the last RK_SIM_TRACE_SLOTS commands): only the
 * commands FROM .. FROM + RK_SIM_TRACE_SLOTS - 1 are stamped, e.g. the
 * wave seed table's lone injects (from about 40) or single steps (5100). */
#ifndef RK_SIM_TRACE_FROM
#define RK_SIM_TRACE_FROM 0u
#endif
RK_DEVICE void rk_sim_stamp_(rk_sim_board *board, uint32_t seq, int event, uint64_t value) {
    if (RK_SIM_TRACE_FROM != 0u && seq - RK_SIM_TRACE_FROM >= RK_SIM_TRACE_SLOTS) return;
    store_relaxed_u64(&board->trace[seq & (RK_SIM_TRACE_SLOTS - 1u)][event], value);
}
/* RK_SIM_TRACE_BAND: the band whose way through each step is stamped too
 * (RK_SIM_T_B_*, by its thread `tid`). */
#ifndef RK_SIM_TRACE_BAND
#define RK_SIM_TRACE_BAND 0
#endif
#define RK_SIM_BAND_STAMP(board, band, tid, seq, event)                                              \
    do {                                                                                              \
        if (RK_SIM_TRACE && (band) == RK_SIM_TRACE_BAND && thread_idx_x() == (tid))                   \
            rk_sim_stamp_((board), (seq), (event), rk_sim_now_());                                    \
    } while (0)
/* Nothing at all without RK_SIM_TRACE: not even the timer's read. */
#define RK_SIM_STAMP(board, seq, event, value)                        \
    do {                                                              \
        if (RK_SIM_TRACE) rk_sim_stamp_((board), (seq), (event), (value)); \
    } while (0)

/* A polling warp's pause between two rounds of loads, by lane 0 only: the
 * warp's next vote waits for it anyway, and on the CPU, where a lane is a
 * thread of its own, 32 lanes stepping aside would yield the core 32 times
 * a round (tests on a loaded machine slowed tenfold). */
RK_DEVICE void rk_sim_nap_(unsigned ns) {
#if defined(__CUDACC_RTC__)
    /* __nanosleep may end microseconds after a short request (a traced relay
     * waited 1.5-2 us per 32 ns nap; spinning made an inject 5.1 -> 3.2 us on
     * an H200), so the GPU spins on the global timer instead (spinning on
     * %clock64 measured no different, session 12). */
    if (lane_id() == 0) {
        unsigned long long t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
    }
#else
    if (lane_id() == 0) sleep_ns(ns);
#endif
}
RK_DEVICE void rk_sim_pause_(void) { rk_sim_nap_(RK_SIM_POLL_NS); }

/* The bands' pause between two reads of the log or of their neighbours'
 * progress. RK_SIM_BAND_SLEEP_NS 0: as the relay's (a spin on the timer);
 * else __nanosleep of that many ns on a GPU (the showcase's bands), which
 * ends later but leaves the L2 lines that every band polls, and the relay
 * writes, less busy. 20 (session 14, H100, with RK_SIM_BAND_STRIDE 8 and
 * RK_SIM_IDLE_ROUNDS 16): the wave's 10 000 steps 19.63 -> 18.39 ms, the
 * three together; this one alone 19.47 ms. */
#ifndef RK_SIM_BAND_SLEEP_NS
#define RK_SIM_BAND_SLEEP_NS 20u
#endif
/* RK_SIM_LOG_SLEEP 0: a band polling the log for its next command spins
 * (rk_sim_pause_), as before session 14; only its wait for its neighbours
 * sleeps. 1: both (no clear difference on the H100). */
#ifndef RK_SIM_LOG_SLEEP
#define RK_SIM_LOG_SLEEP 0
#endif
RK_DEVICE void rk_sim_band_pause_(void) {
#if defined(__CUDACC_RTC__)
    if (RK_SIM_BAND_SLEEP_NS > 0u) {
        sleep_ns(RK_SIM_BAND_SLEEP_NS);
        return;
    }
#endif
    rk_sim_pause_();
}

/* Ordering at GPU scope for the board: acquire and release is all these
 * protocols need, and cheaper than __threadfence's sequentially consistent
 * fence (each of which cost an inject about a microsecond, traced). */
RK_DEVICE void rk_sim_fence_(void) {
#if defined(__CUDACC_RTC__)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
    thread_fence();
#endif
}

/* A block's copy of the scalars (the whole block, tid its place in it; a barrier after): user
 * code reads them in every step and command, and a read of device memory
 * there is a dependent load on the command's path. Only a global command
 * changes them, and every band copies them again after one. */
RK_DEVICE void rk_sim_copy_scalars_(rk_sim_scalars *to, const rk_sim_scalars *from, int tid) {
    const int words = (int)(sizeof(rk_sim_scalars) / sizeof(uint32_t));
    for (int i = tid; i < words; i += block_dim_x())
        ((uint32_t *)to)[i] = load_acquire_u32((const uint32_t *)from + i);
    sync_threads();
}

/* A word of shared memory that one warp writes and another polls (the
 * relay block's mirror and ticks, sim_applier.c): atomics at block scope,
 * which compute-sanitizer's racecheck takes for what they are; it reports
 * plain or relaxed loads and stores there as hazards. A load is a compare
 * and swap that writes nothing new (0 for 0): a 64-bit OR or ADD of shared
 * memory is a loop of them on sm_90, CAS and EXCH single instructions. The
 * seed table measured the same with relaxed loads and stores (H200,
 * session 22). */
RK_DEVICE uint64_t rk_sim_shared_load_(uint64_t *p) {
#if defined(__CUDACC_RTC__)
    uint64_t v;
    asm volatile("atom.relaxed.cta.shared.cas.b64 %0, [%1], 0, 0;" : "=l"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
    return v;
#else
    return load_relaxed_u64(p);
#endif
}
RK_DEVICE void rk_sim_shared_store_(uint64_t *p, uint64_t v) {
#if defined(__CUDACC_RTC__)
    uint64_t old = 0; /* read-write to the asm, so that NVRTC does not call it set and never used */
    asm volatile("atom.relaxed.cta.shared.exch.b64 %0, [%1], %2;" : "+l"(old) : "r"((unsigned)__cvta_generic_to_shared(p)), "l"(v) : "memory");
#else
    store_relaxed_u64(p, v);
#endif
}

/* A count that publishes what its thread did before and sees what the
 * threads that counted before it did (the last of a gather). */
RK_DEVICE int rk_sim_count_in_(int *count, int amount) {
#if defined(__CUDACC_RTC__)
    int old;
    asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(count), "r"(amount) : "memory");
    return old;
#else
    return __atomic_fetch_add(count, amount, __ATOMIC_ACQ_REL);
#endif
}

/* The host's side of the answer to command seq: its reply's two tagged
 * words (sim_protocol.h), no release (it says why); `strong`: a release at
 * system scope, for the commands after which the host copies memory (a
 * fence, a stop, a global command). On a GPU one 16-byte store, as the
 * former wave kernel's one-word reply, where the answer's words and a done
 * word apart were three writes over the bus to two lines of the host's
 * cache: measured no different (H200, session 24), kept as the simpler
 * protocol. Elsewhere the high word first, then the done word. */
RK_DEVICE void rk_sim_answer_host_(rk_sim_mailbox *mb, uint32_t seq, uint64_t value, int strong) {
    uint64_t *reply = mb->reply[seq & (RK_SIM_SLOTS - 1u)];
    const uint64_t tag = (uint64_t)seq << 32, lo = tag | (value & 0xffffffffu), hi = tag | (value >> 32);
#if defined(__CUDACC_RTC__)
    if (strong) asm volatile("st.release.sys.v2.u64 [%0], {%1, %2};" ::"l"(reply), "l"(lo), "l"(hi) : "memory");
    else asm volatile("st.relaxed.sys.v2.u64 [%0], {%1, %2};" ::"l"(reply), "l"(lo), "l"(hi) : "memory");
#else
    store_relaxed_u64(&reply[1], hi);
    if (strong) store_release_u64(&reply[0], lo);
    else store_relaxed_u64(&reply[0], lo);
#endif
}

/* Answers command seq (thread 0 of the block that completes it), and marks
 * it answered on the board for the relay. */
RK_DEVICE void rk_sim_answer_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, uint64_t value, int strong) {
    RK_SIM_STAMP(board, seq, RK_SIM_T_ANSWER, rk_sim_now_());
    /* The host's words first, then the mark, which only times the relay's
     * next read of the host's ring (rk_sim_await_answer_): as the former
     * wave kernel had it. A mark seen before the host's words are on their
     * way sent the relay's read to the host too early (H200, session 23:
     * the wave's mixed workload with queries waited 359 against 365 us,
     * four rounds each within 10 us; on the H100, session 13, no
     * difference either way). */
    rk_sim_answer_host_(mb, seq, value, strong);
    /* The mark carries when the answer left, for the relay's next read
     * (RK_SIM_READ_AFTER_ANSWER_NS): the clock's low 32 bits, read after
     * the host's store (before it, every answer took 0.25 us longer, H200,
     * session 26). */
    const uint64_t sent = RK_SIM_READ_AFTER_ANSWER_NS > 0u ? (uint64_t)(uint32_t)rk_sim_now_() : 0u;
    store_relaxed_u64(&board->answered[seq & (RK_SIM_SLOTS - 1u)], sent << 32 | seq);
}

/* Thread 0 of one of `parts` bands that applied command seq adds its answer;
 * the last to arrive answers. Nothing the bands wrote needs ordering before
 * the answer (later commands reach those rows through the bands' finished
 * marks, the host through a fence command), only a sum before the count. So
 * a band with nothing to add counts with a plain atomic, and says in the
 * count's upper bits whether it added: the last band pays an acquire only
 * when some band added (a step's bands never do). */
#define RK_SIM_ADDED (1 << 16)
RK_DEVICE void rk_sim_gather_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, int parts, uint64_t value) {
    if (parts == 1) {
        rk_sim_answer_(mb, board, seq, value, 0);
        return;
    }
    const uint32_t slot = seq & (RK_SIM_SLOTS - 1u);
    int old;
    if (value != 0u) {
        atomic_add_u64(&board->acc[slot], value);
        old = rk_sim_count_in_(&board->arrived[slot], 1 + RK_SIM_ADDED);
    } else {
        old = atomic_add_i32(&board->arrived[slot], 1);
    }
    if ((old & (RK_SIM_ADDED - 1)) == parts - 1) {
        uint64_t total = 0;
        if (old >= RK_SIM_ADDED || value != 0u) {
            rk_sim_fence_();
            total = atomic_add_u64(&board->acc[slot], 0);
            atomic_add_u64(&board->acc[slot], (uint64_t)0 - total);
        }
        atomic_exch_i32(&board->arrived[slot], 0); /* the slot's next command is a ring's length later */
        rk_sim_answer_(mb, board, seq, total, 0);
    }
}

/* Warp 0 reads the words of command seq (lane w word w, all at once) into
 * words[] once every tag says seq; wait: poll until they do. */
RK_DEVICE void rk_sim_read_(const rk_sim_mailbox *mb, uint32_t seq, uint32_t *words, int wait) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const uint64_t *slot = mb->cmd[seq & (RK_SIM_SLOTS - 1u)];
        for (;;) {
            /* Relaxed: each word carries its own tag, and the loads of all lanes are in flight at once. */
            const uint64_t w = tid < RK_SIM_WORDS ? load_relaxed_u64(&slot[tid]) : (uint64_t)seq << 32;
            if (warp_all((uint32_t)(w >> 32) == seq) || !wait) {
                if (tid < RK_SIM_WORDS) words[tid] = (uint32_t)w;
                break;
            }
            rk_sim_pause_();
        }
    }
    sync_threads();
}

/* Thread 0 of each block, once it has read command seq: the last of the
 * `blocks` to read it tells the host its slot may be written again. */
RK_DEVICE void rk_sim_taken_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, int blocks) {
    const uint32_t slot = seq & (RK_SIM_SLOTS - 1u);
    if (blocks == 1 || atomic_add_i32(&board->readers[slot], 1) == blocks - 1) {
        if (blocks > 1) atomic_exch_i32(&board->readers[slot], 0);
        store_release_u64(&mb->taken[slot], (uint64_t)seq);
    }
}

/* This thread's region for rows [begin, end) within [rb, re), after `step` steps. */
RK_DEVICE rk_sim_region rk_sim_clip_(int begin, int end, int rb, int re, uint64_t step) {
    rk_sim_region r;
    r.row_begin = begin > rb ? begin : rb;
    r.row_end = end < re ? end : re;
    r.tid = thread_idx_x();
    r.threads = block_dim_x();
    r.ahead = 0;
    r.step = step;
    return r;
}

/* The band's share of a region command's rows [begin, end): runs the
 * handler and adds thread 0's answer. */
RK_DEVICE void rk_sim_region_command_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board,
                                      const uint32_t *words, uint32_t seq, int bands, int rb, int re, uint64_t steps) {
    const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
    /* The band's rows [rb, re): compared with the command's rows rather
     * than worked out as bands, which takes divisions (a long dependent
     * chain on a GPU, on the way of every command). */
    if (begin >= re || end <= rb) return;
    const int alone = begin >= rb && end <= re; /* the command lies in this band */
    const rk_sim_region r = rk_sim_clip_(begin, end, rb, re, steps);
    const uint64_t a = rk_sim_dispatch_(s, &r, words[RK_SIM_W_OP], &words[RK_SIM_W_PAYLOAD]);
    /* The answer is thread 0's value and nothing written needs ordering
     * before it (rk_sim_gather_): a command of one band is answered before
     * the barrier, which waits for the block's slowest warp. */
    if (alone && r.tid == 0) rk_sim_answer_(mb, board, seq, a, 0);
    sync_threads();
    if (!alone && r.tid == 0) {
        const int b0 = rk_sim_band_of_row_(begin, bands, s->rows), b1 = rk_sim_band_of_row_(end - 1, bands, s->rows);
        rk_sim_gather_(mb, board, seq, b1 - b0 + 1, a);
    }
}

/* A global command, run by one block over every row (the others wait at a
 * barrier or are not launched). Returns its answer (thread 0's). */
RK_DEVICE uint64_t rk_sim_global_command_(const rk_sim_state *s, const uint32_t *words, uint64_t steps) {
    const uint32_t op = words[RK_SIM_W_OP];
    uint32_t *scalars = (uint32_t *)s->scalars;
    uint64_t a = 0;
    if (op == RK_SIM_OP_GET_SCALAR) {
        a = scalars[words[RK_SIM_W_ARG]];
    } else if (op == RK_SIM_OP_SET_SCALAR) {
        if (thread_idx_x() == 0) scalars[words[RK_SIM_W_ARG]] = words[RK_SIM_W_PAYLOAD];
    } else if (op < RK_SIM_OP_STEP) {
        const rk_sim_region r = rk_sim_clip_(0, s->rows, 0, s->rows, steps);
        a = rk_sim_dispatch_(s, &r, op, &words[RK_SIM_W_PAYLOAD]);
    }
    sync_threads();
    return a;
}

RK_DEVICE int rk_sim_is_global_(const uint32_t *words) {
    const uint32_t op = words[RK_SIM_W_OP];
    return op > RK_SIM_OP_STEP || (op < RK_SIM_OP_STEP && words[RK_SIM_W_END] == 0u);
}

/* ---- the persistent kernel ------------------------------------------------------
 *
 * Blocks 0 .. bands-1 are the bands; with a relay, block `bands` is the relay.
 * The relay's warp 0 reads the host's ring over the bus and copies each
 * command into the log in device memory, where the bands read it from the
 * L2: only one warp polls host memory. Without a relay (the CPU, where host
 * memory is the device's) the bands read the host's ring themselves.
 *
 * No grid barrier: every band publishes on the board how far it has got, in
 * ticks (a step of n is n ticks, any other command one, counted alike by the
 * host and every band), and waits only for the bands it depends on:
 *   a step waits for the bands within `halo` rows of its own to finish the
 *     tick before (0 = every band);
 *   a region command waits, in the bands it reaches, for the bands within
 *     `halo` rows of its rows to finish the last step or global command;
 *     the bands it does not reach go on at once; one band's answer goes to
 *     the host as soon as that band is done;
 *   a global command runs on band 0 once every band has finished the tick
 *     before; the others wait for band 0 to finish it.
 * So an impulse waits only for the bands it reaches, and a query is answered
 * ahead of the bands that have nothing to do with it. */

/* Where band b's progress words are in the board's band_words: with
 * RK_SIM_BAND_STRIDE 1, band_done packed (eight bands to a 64-byte line,
 * each written at every step) and band_taken after them; with a stride of
 * 8, a line a band (band_done, then band_taken), as the showcase's bands
 * have, where the board has room for the grid (grid * stride words at most
 * 2 * RK_SIM_MAX_BANDS), else packed. */
#ifndef RK_SIM_BAND_STRIDE
#define RK_SIM_BAND_STRIDE 8 /* 8: the wave's 10 000 steps 19.63 -> 18.92 ms alone (H100, session 14) */
#endif
RK_DEVICE int rk_sim_stride_(void) {
    return RK_SIM_BAND_STRIDE > 1 && grid_dim_x() * RK_SIM_BAND_STRIDE <= 2 * RK_SIM_MAX_BANDS ? RK_SIM_BAND_STRIDE : 1;
}
#define RK_SIM_DONE(board, b) ((board)->band_words[(b) * rk_sim_stride_()])
#define RK_SIM_TAKEN_AT(stride, b) ((stride) > 1 ? (b) * (stride) + 1 : RK_SIM_MAX_BANDS + (b))
#define RK_SIM_TAKEN(board, b) ((board)->band_words[RK_SIM_TAKEN_AT(rk_sim_stride_(), (b))])

/* The bands [lo, hi] whose rows are within halo rows of [begin, end). */
RK_DEVICE void rk_sim_reach_(int begin, int end, int halo, int bands, int rows, int *lo, int *hi) {
    if (halo <= 0) {
        *lo = 0;
        *hi = bands - 1;
        return;
    }
    const int b = begin - halo < 0 ? 0 : begin - halo, e = end + halo > rows ? rows : end + halo;
    *lo = rk_sim_band_of_row_(b, bands, rows);
    *hi = rk_sim_band_of_row_(e - 1, bands, rows);
}

/* The rows [*b, *e) within halo rows of [begin, end) (every row for halo
 * 0): a band is among those rk_sim_reach_ gives when its rows [rb, re)
 * meet them, *b < re && *e > rb, which needs no division. */
RK_DEVICE void rk_sim_reach_rows_(int begin, int end, int halo, int rows, int *b, int *e) {
    *b = halo <= 0 || begin - halo < 0 ? 0 : begin - halo;
    *e = halo <= 0 || end + halo > rows ? rows : end + halo;
}

/* A warp's loads of per-band words (band_done, or with `taken`
 * band_taken) base .. last (at most RK_SIM_LOADS_AHEAD a lane: lane l
 * gets base + l, base + 32 + l, ...; past `last`, all ones),
 * every one issued before any is used, so that a look at 130 bands costs
 * one L2 round trip rather than maybe one per 32 bands in turn (a loop that
 * compares each load before the next lets each wait for the one before; on
 * the wave's seed table the difference was within the noise). */
#define RK_SIM_LOADS_AHEAD 8
RK_DEVICE void rk_sim_band_loads_(const rk_sim_board *board, int taken, int base, int last, uint64_t *v) {
    const int stride = rk_sim_stride_();
    for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) {
        const int b = base + 32 * k + lane_id();
        v[k] = b <= last ? load_relaxed_u64(&board->band_words[taken ? RK_SIM_TAKEN_AT(stride, b) : b * stride]) : ~(uint64_t)0;
    }
}

/* The whole block: returns once bands lo .. hi have finished tick `tick`
 * (warp 0 polls, a lane per band; the fence makes their writes visible).
 * Band `self` (the caller's; -1: none) counts as finished: its own work is
 * ordered by its barriers, and it may not have said yet how far it is
 * (rk_sim_band_loop_ says so lazily). With `all`, also says whether every
 * band had (block-uniform), so that a band can skip the wait for the
 * commands that follow until the next step. */
RK_DEVICE int rk_sim_await_bands_(const rk_sim_board *board, int lo, int hi, uint64_t tick, int bands, int all,
                                  int self) {
    RK_SHARED int every_band_done;
    if (!all && hi - lo < 32) {
        /* A few bands (a step's neighbours): an acquire load a lane, which
         * orders only what follows it, where a fence after the loop waits
         * for this warp's stores of the last step too; the barrier passes
         * what the lanes acquired on to the block. */
        if (thread_idx_x() < 32) {
            const int b = lo + lane_id();
            while (!warp_all(b > hi || b == self || load_acquire_gpu_u64(&RK_SIM_DONE(board, b)) >= tick)) rk_sim_band_pause_();
            if (thread_idx_x() == 0) every_band_done = 0;
        }
        sync_threads();
        return every_band_done;
    }
    if (thread_idx_x() < 32) {
        const int first = all ? 0 : lo, last = all ? bands - 1 : hi;
        int every = 1;
        for (;;) {
            int done = 1;
            every = 1;
            for (int base = first; base <= last; base += 32 * RK_SIM_LOADS_AHEAD) {
                uint64_t v[RK_SIM_LOADS_AHEAD];
                rk_sim_band_loads_(board, 0, base, last, v);
                for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) {
                    const int b = base + 32 * k + lane_id(), d = b == self || v[k] >= tick;
                    every &= d;
                    if (b >= lo && b <= hi) done &= d;
                }
            }
            if (warp_all(done)) break;
            rk_sim_band_pause_();
        }
        rk_sim_fence_();
        every = warp_all(every);
        if (thread_idx_x() == 0) every_band_done = all && every;
    }
    sync_threads();
    return every_band_done;
}

/* Thread 0, after a block barrier: this band has finished tick `tick`. */
RK_DEVICE void rk_sim_finished_(rk_sim_board *board, int band, uint64_t tick) {
    store_release_gpu_u64(&RK_SIM_DONE(board, band), tick); /* cumulative: the block's writes, ordered by the barrier */
}
