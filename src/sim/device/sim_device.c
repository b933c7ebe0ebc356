/* The library's side of every simulation kernel, in the DSL. Compiled after
 * sim_protocol.h, the generated declarations (rk_sim_state, rk_sim_region),
 * the user's source and the generated rk_sim_step_ / rk_sim_dispatch_; the
 * generated kernels that follow only unpack their arguments into an
 * rk_sim_state and call the bodies here (src/sim/sim_source.c).
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
/* Nothing at all without RK_SIM_TRACE: not even the timer's read. */
#define RK_SIM_STAMP(board, seq, event, value)                        \
    do {                                                              \
        if (RK_SIM_TRACE) rk_sim_stamp_((board), (seq), (event), (value)); \
    } while (0)

/* A polling warp's pause between two rounds of loads, by lane 0 only: the
 * warp's next vote waits for it anyway, and on the CPU, where a lane is a
 * thread of its own, 32 lanes stepping aside would yield the core 32 times
 * a round (tests on a loaded machine slowed tenfold). */
#ifndef RK_SIM_PAUSE_CLOCK
#define RK_SIM_PAUSE_CLOCK 0 /* 1: a GPU's pause spins on the multiprocessor's own cycle counter, not the global timer */
#endif
RK_DEVICE void rk_sim_nap_(unsigned ns) {
#if defined(__CUDACC_RTC__)
    /* __nanosleep may end microseconds after a short request (a traced relay
     * waited 1.5-2 us per 32 ns nap; spinning made an inject 5.1 -> 3.2 us on
     * an H200), so the GPU spins on the global timer instead -- or, with
     * RK_SIM_PAUSE_CLOCK, on %clock64, 2 cycles a nanosecond (2 GHz: at a
     * lower clock the pause is longer), which every multiprocessor reads
     * itself, where the global timer is one for the GPU, read by every
     * polling warp of the grid (131 of them for the wave). */
    if (lane_id() == 0) {
        unsigned long long t0, t;
        if (RK_SIM_PAUSE_CLOCK) {
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0));
            do asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)); while (t - t0 < 2ull * ns);
        } else {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
            do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
        }
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

/* The host's side of the answer to command seq: tagged words, no release
 * (sim_protocol.h says why); `strong`: a release at system scope first, for
 * the commands after which the host copies memory (a fence, a stop, a
 * global command). */
RK_DEVICE void rk_sim_answer_host_(rk_sim_mailbox *mb, uint32_t seq, uint64_t value, int strong) {
    const uint32_t slot = seq & (RK_SIM_SLOTS - 1u);
    const uint64_t tag = (uint64_t)seq << 32;
    store_relaxed_u64(&mb->answer[slot][0], tag | (value & 0xffffffffu));
    store_relaxed_u64(&mb->answer[slot][1], tag | (value >> 32));
    if (strong) store_release_u64(&mb->done[slot], (uint64_t)seq);
    else store_relaxed_u64(&mb->done[slot], (uint64_t)seq);
}

/* Answers command seq (thread 0 of the block that completes it), and marks
 * it answered on the board for the relay. */
RK_DEVICE void rk_sim_answer_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, uint64_t value, int strong) {
    RK_SIM_STAMP(board, seq, RK_SIM_T_ANSWER, rk_sim_now_());
    /* The mark first: it only times the relay's next read of the host's
     * ring (rk_sim_await_answer_), so nothing needs it after the host's
     * words (no difference either way that an H100 call could see). */
    store_relaxed_u64(&board->answered[seq & (RK_SIM_SLOTS - 1u)], (uint64_t)seq);
    rk_sim_answer_host_(mb, seq, value, strong);
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
#ifndef RK_SIM_AWAIT_ACQUIRE
#define RK_SIM_AWAIT_ACQUIRE 1 /* 0: relaxed loads and a fence after, for any number of bands */
#endif
RK_DEVICE int rk_sim_await_bands_(const rk_sim_board *board, int lo, int hi, uint64_t tick, int bands, int all,
                                  int self) {
    RK_SHARED int every_band_done;
    if (RK_SIM_AWAIT_ACQUIRE && !all && hi - lo < 32) {
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

/* The relay's warp: once every band has read command `oldest`, the last
 * command all of them have read (the slowest band's). */
RK_DEVICE uint32_t rk_sim_slowest_band_(const rk_sim_board *board, int bands, uint32_t oldest) {
    for (;;) {
        int ahead = 0x7fffffff; /* how far past oldest the slowest band is */
        for (int base = 0; base < bands; base += 32 * RK_SIM_LOADS_AHEAD) {
            uint64_t v[RK_SIM_LOADS_AHEAD];
            rk_sim_band_loads_(board, 1, base, bands - 1, v);
            for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) {
                if (base + 32 * k + lane_id() >= bands) continue;
                const int d = (int)((uint32_t)v[k] - oldest);
                ahead = d < ahead ? d : ahead;
            }
        }
        for (int k = 16; k > 0; k /= 2) {
            const int other = shfl_xor_i32(ahead, k);
            ahead = other < ahead ? other : ahead;
        }
        if (ahead >= 0) return oldest + (uint32_t)ahead;
        rk_sim_pause_();
    }
}

/* The relay's warp, after a read of the host's ring found nothing: a host
 * that waits for an answer writes its next command only once the answer has
 * crossed the bus, and a read that gets there first finds nothing and holds
 * the next one back a whole bus round trip (a warp has one read of host
 * memory in flight). So it waits, from the L2, until command seq has been
 * answered, and a little longer, or RK_SIM_ANSWER_POLLS looks at most.
 *
 * In that little longer it looks at the bands, if they have not all been
 * seen past `busy` (the ticks up to the last command they apply): the loads
 * go out before the pause and are used after it, so the look costs nothing
 * on the way of the next command, and a command the relay's block may
 * apply (rk_sim_relay_takes_) need not wait for a look before it goes to
 * the log. *idle: every band has been seen past this tick (a fence after). */
#ifndef RK_SIM_STEP_AWAITS
#define RK_SIM_STEP_AWAITS 4 /* a step's answer: this many times RK_SIM_ANSWER_POLLS looks at most; 0: until it comes */
#endif
#ifndef RK_SIM_STEP_PAUSE_NS
#define RK_SIM_STEP_PAUSE_NS 100u /* after a step's answer, before the relay reads the host's ring again */
#endif
#ifndef RK_SIM_IDLE_LOOK
#define RK_SIM_IDLE_LOOK 2 /* 1: after every answer; 2: not after a step's; 0: never (only rk_sim_relay_takes_) */
#endif
#ifndef RK_SIM_LOOK_LATE
#define RK_SIM_LOOK_LATE 1 /* 1: the look's loads are compared after the relay has issued its next read (rk_sim_relay_) */
#endif
/* Returns 1 when, with RK_SIM_LOOK_LATE, the look's loads are in v[] for
 * the caller to compare (rk_sim_look_done_) once its next read is out: the
 * look then never holds up that read (loads issued before it are back
 * before it; 0 and 1 measured alike on the H100, session 19). */
RK_DEVICE int rk_sim_await_answer_(const rk_sim_board *board, uint32_t seq, int step, int bands, uint64_t busy,
                                   uint64_t *idle, uint64_t *v) {
    const uint64_t *mark = &board->answered[seq & (RK_SIM_SLOTS - 1u)];
    /* After a step the look would hold up the read that brings the next
     * one (measured: a single step 4.6 -> 5.0 us), and the relay applies
     * nothing that the host sends right behind a step before the bands
     * have finished it anyway. */
    const int look = RK_SIM_IDLE_LOOK == 1 || (RK_SIM_IDLE_LOOK == 2 && !step);
    /* A step's answer may be a whole step away (heat3d 64^3: 12 us), and
     * its pause is its own (RK_SIM_STEP_PAUSE_NS). */
    const int polls = !step ? RK_SIM_ANSWER_POLLS : RK_SIM_STEP_AWAITS > 0 ? RK_SIM_STEP_AWAITS * RK_SIM_ANSWER_POLLS : 0x7fffffff;
    const unsigned pause = step ? RK_SIM_STEP_PAUSE_NS : RK_SIM_ANSWER_PAUSE_NS;
    for (int i = 0; i < polls; i++) {
        /* Decided by the whole warp: the look below is a warp's. */
        if (warp_all((uint32_t)load_relaxed_u64(mark) == seq)) {
            if (RK_SIM_TRACE && lane_id() == 0) rk_sim_stamp_((rk_sim_board *)board, seq, RK_SIM_T_MARK_SEEN, rk_sim_now_());
            if (look && RK_SIM_RELAY_INLINE > 0 && *idle < busy && bands <= 32 * RK_SIM_LOADS_AHEAD) {
                rk_sim_band_loads_(board, 0, 0, bands - 1, v);
                rk_sim_nap_(pause);
                if (RK_SIM_LOOK_LATE) return 1;
                int all = 1;
                for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) all &= v[k] >= busy;
                if (warp_all(all)) {
                    rk_sim_fence_();
                    *idle = busy;
                }
            } else {
                rk_sim_nap_(pause);
            }
            return 0;
        }
        rk_sim_pause_();
    }
    return 0;
}

/* RK_SIM_LOOK_LATE: the look's loads, issued before the relay's read of
 * the host's ring and back before it: whether every band was past `busy`. */
RK_DEVICE int rk_sim_look_done_(const uint64_t *v, uint64_t busy) {
    int all = 1;
    for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) all &= v[k] >= busy;
    return warp_all(all);
}

/* A block's copy of the scalars (the whole block; a barrier after): user
 * code reads them in every step and command, and a read of device memory
 * there is a dependent load on the command's path. Only a global command
 * changes them, and every band copies them again after one. */
RK_DEVICE void rk_sim_copy_scalars_(rk_sim_scalars *to, const rk_sim_scalars *from) {
    const int words = (int)(sizeof(rk_sim_scalars) / sizeof(uint32_t));
    for (int i = thread_idx_x(); i < words; i += block_dim_x())
        ((uint32_t *)to)[i] = load_acquire_u32((const uint32_t *)from + i);
    sync_threads();
}

/* RK_SIM_TAKE_LONE (0: off, not yet measured on a GPU): a command found
 * alone in a read that the block could apply but for busy bands -- a
 * row-wise one or a query -- is the block's all the same: it first waits
 * for the bands it reaches to finish what came before (returns 2, with
 * *wait_lo .. *wait_hi), as the showcase's applier warp does, rather than
 * handing it to the bands. With RK_SIM_FOLLOW_UP_READ 3 the relay's look
 * after an answer comes early enough to find the bands busy (the wave's
 * mixed workload with each command waited 7-10% slower, session 19): this
 * is meant to keep such an inject off the bands' longer path. */
#ifndef RK_SIM_TAKE_LONE
#define RK_SIM_TAKE_LONE 0
#endif
/* The relay block's shared memory: the command its threads apply together
 * (rk_sim_relay_apply_), set by warp 0 before the barrier that starts them. */
typedef struct rk_sim_relay_cmd {
    uint64_t buffer[RK_SIM_CMD_WORDS / 2]; /* the words; 8-byte aligned: the payload is a user's struct */
    uint64_t steps;                        /* steps before the command */
    uint32_t seq;
    int go;      /* 1: apply it; 0: the relay has stopped */
    int refresh; /* a global command came since the block's copy of the scalars */
#if RK_SIM_TAKE_LONE
    uint64_t wait_tick; /* first wait until bands wait_lo .. wait_hi have finished this tick; 0: no wait */
    int wait_lo, wait_hi;
#endif
} rk_sim_relay_cmd;

/* Warp 0 of the relay block, a lane per band, loads in flight at once: 1
 * if every band has finished every tick up to `tick`, 2 if bands lo .. hi
 * have (both: 3); an acquire after, if either. */
RK_DEVICE int rk_sim_bands_past_(const rk_sim_board *board, int bands, int lo, int hi, uint64_t tick) {
    int all = 1, range = 1;
    for (int base = 0; base < bands; base += 32 * RK_SIM_LOADS_AHEAD) {
        uint64_t v[RK_SIM_LOADS_AHEAD];
        rk_sim_band_loads_(board, 0, base, bands - 1, v);
        for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) {
            const int b = base + 32 * k + lane_id(), done = v[k] >= tick;
            all &= done;
            if (b >= lo && b <= hi) range &= done;
        }
    }
    const int past = (warp_all(all) ? 1 : 0) | (warp_all(range) ? 2 : 0);
    if (past) rk_sim_fence_();
    return past;
}

#ifndef RK_SIM_RELAY_MARKER
#define RK_SIM_RELAY_MARKER 1 /* 0: thread 0 answers after the block's barrier and marks it too */
#endif
/* The relay block's threads, together: a region command applied band by
 * band, each band's share with the band's own region (the same calls as
 * the bands make, so the same results bit for bit), or a row-wise one
 * (RK_SIM_ROWWISE) in one call over all its rows; the answer the sum of
 * thread 0's values; thread 0 answers. */
RK_DEVICE void rk_sim_relay_apply_(const rk_sim_state *local, const rk_sim_state *s, rk_sim_mailbox *mb,
                                   rk_sim_board *board, rk_sim_relay_cmd *c, int bands) {
    /* Read before the last barrier: after it the relay's warp may already
     * be filling c with the next command. */
    const uint32_t seq = c->seq;
    const uint64_t steps = c->steps;
#if RK_SIM_TAKE_LONE
    const uint64_t wait_tick = c->wait_tick;
    const int wait_lo = c->wait_lo, wait_hi = c->wait_hi;
    if (wait_tick != 0u) {
        /* RK_SIM_TAKE_LONE: the bands it reaches finish what came before
         * it first (they need nothing from this block for that: every
         * earlier command is in the log, and earlier ones of this block's
         * are answered); an acquire after (rk_sim_bands_past_). */
        if (thread_idx_x() < 32)
            while (!(rk_sim_bands_past_(board, bands, wait_lo, wait_hi, wait_tick) & 2)) rk_sim_pause_();
        sync_threads();
    }
#endif
    if (thread_idx_x() == 0) RK_SIM_STAMP(board, seq, RK_SIM_T_BAND, rk_sim_now_()); /* the block has it */
    if (c->refresh) rk_sim_copy_scalars_(local->scalars, s->scalars);
    const uint32_t *words = (const uint32_t *)c->buffer;
    const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
    const int whole = (words[RK_SIM_W_ARG] & RK_SIM_ARG_ROWWISE) != 0u;
    const int b0 = whole ? 0 : rk_sim_band_of_row_(begin, bands, s->rows);
    const int b1 = whole ? 0 : rk_sim_band_of_row_(end - 1, bands, s->rows);
    uint64_t sum = 0;
    for (int band = b0; band <= b1; band++) {
        const rk_sim_region r = rk_sim_clip_(begin, end, whole ? begin : rk_sim_band_first_(band, bands, s->rows),
                                             whole ? end : rk_sim_band_first_(band + 1, bands, s->rows), steps);
        sum += rk_sim_dispatch_(local, &r, words[RK_SIM_W_OP], &words[RK_SIM_W_PAYLOAD]);
        if (RK_SIM_RELAY_MARKER && band == b1 && thread_idx_x() == 0) {
            RK_SIM_STAMP(board, seq, RK_SIM_T_ANSWER, rk_sim_now_());
            rk_sim_answer_host_(mb, seq, sum, 0);
        }
        sync_threads();
    }
    /* The host's answer first (thread 0's sum is complete after its last
     * call; nothing written needs ordering before it, rk_sim_gather_); then,
     * after a release of the block's writes (ordered before it by the
     * barrier), the mark the bands near the command wait for: by the
     * block's second warp, so that the relay's warp reads the host's ring
     * again without waiting for the fence. */
    const int marker = RK_SIM_RELAY_MARKER && block_dim_x() > 32 ? 32 : 0;
    if (!RK_SIM_RELAY_MARKER && thread_idx_x() == 0) {
        RK_SIM_STAMP(board, seq, RK_SIM_T_ANSWER, rk_sim_now_());
        rk_sim_answer_host_(mb, seq, sum, 0);
    }
    if (thread_idx_x() == marker) {
        rk_sim_fence_();
        store_relaxed_u64(&board->answered[seq & (RK_SIM_SLOTS - 1u)], (uint64_t)seq);
    }
}

/* Whether the relay's block applies a command itself (1) or the bands do
 * (0): a region command whose rows lie in one band (RK_SIM_RELAY_INLINE), or
 * a row-wise one reaching at most RK_SIM_RELAY_ROWWISE bands, while every
 * band has finished every command the bands apply -- or, a query, its own
 * bands; a row-wise command, the bands within halo rows of it. The relay
 * never waits for them: a band still busy means commands in flight, which
 * the bands apply in order as well as the relay would (waiting held up the
 * commands behind: measured, a pipelined inject/step/query mix ran 1.4x
 * slower). */
#define RK_SIM_RELAY_ROWWISE 4
/* Whether the relay, with the bands not known idle, looks at them (a round
 * trip to the L2) before it copies a command it might apply to the log:
 * 0 never (the bands apply it; rk_sim_await_answer_ keeps *idle current
 * while the relay waits anyway), 1 for a row-wise command, 2 for a query
 * too. A look there delays the commands behind it in the log: a query sent
 * right behind a step waited for one every time. */
#ifndef RK_SIM_RELAY_LOOK
#define RK_SIM_RELAY_LOOK 0
#endif
/* RK_SIM_TAKE_BY_LENGTH (1): a command short enough that it cannot meet
 * more bands than the limit, whatever its first row, needs no divisions
 * to say so: with every band at least `least` rows high (the partition's
 * floor(rows / bands)), L rows meet at most 1 + ceil((L - 1) / least)
 * bands. An inject of the wave (7 rows, bands of 3-4) and any one-row
 * query pass so; longer ones are worked out exactly. 0: always divided. */
#ifndef RK_SIM_TAKE_BY_LENGTH
#define RK_SIM_TAKE_BY_LENGTH 1
#endif
RK_DEVICE int rk_sim_relay_takes_(const rk_sim_board *board, const rk_sim_state *s, uint32_t op, uint32_t arg,
                                  int begin, int end, int bands, int halo, int least, uint64_t busy, uint64_t *idle,
                                  int lone, int *wait_lo, int *wait_hi) {
    if (op >= RK_SIM_OP_STEP || end == 0 || RK_SIM_RELAY_INLINE <= 0) return 0;
    const int rowwise = (arg & RK_SIM_ARG_ROWWISE) != 0u;
    const int wait = RK_SIM_TAKE_LONE && lone && *idle < busy && (rowwise || (arg & RK_SIM_ARG_QUERY));
    /* Busy bands and no look: the bands apply it, decided before the
     * divisions below, on the way of every command the relay copies. */
    if (*idle < busy && !wait && RK_SIM_RELAY_LOOK < (rowwise ? 1 : 2)) return 0;
    const int limit = rowwise ? RK_SIM_RELAY_ROWWISE : RK_SIM_RELAY_INLINE;
    int lo = 0, hi = 0;
    if (!RK_SIM_TAKE_BY_LENGTH || end - begin > (limit - 1) * least + 1) {
        lo = rk_sim_band_of_row_(begin, bands, s->rows);
        hi = rk_sim_band_of_row_(end - 1, bands, s->rows);
        if (hi - lo >= limit) return 0;
    }
    if (*idle >= busy) return 1;
    if (!wait && RK_SIM_RELAY_LOOK < (rowwise ? 1 : 2)) return 0;
    if (rowwise) {
        rk_sim_reach_(begin, end, halo, bands, s->rows, &lo, &hi);
    } else {
        lo = rk_sim_band_of_row_(begin, bands, s->rows);
        hi = rk_sim_band_of_row_(end - 1, bands, s->rows);
    }
    if (wait) {
        *wait_lo = lo;
        *wait_hi = hi;
        return 2;
    }
    const int past = rk_sim_bands_past_(board, bands, lo, hi, busy);
    if (past & 1) *idle = busy;
    return (past & 1) || ((rowwise || (arg & RK_SIM_ARG_QUERY)) && (past & 2));
}

/* The relay's warp, with lane l holding word l % W of command seq + l / W
 * in w0 and, for W = 16, of seq + 2 + l / 16 in w1 (W = RK_SIM_WORDS,
 * sim_protocol.h): how many commands from seq on are whole (every word
 * tagged with its number). */
/* The commands from `first` on, up to `most`, that are whole (lanes as
 * above): one ballot a load and the count from its bits, as the showcase's
 * relay; a vote per command, as before, was a chain of dependent warp-wide
 * instructions on the way of every command (with the one-store log copy
 * below: the wave's inject applied 2.94 -> 2.82 us, mixed with queries
 * waited 448 -> 422 us, H100, session 19). A band still counts its read of
 * the log with a vote per command: with the ballot there heat3d 64^3's step
 * was 10.4 -> 13.5-14.8 us in three calls (not understood). */
RK_DEVICE int rk_sim_count_whole_(uint64_t w0, uint64_t w1, int part, uint32_t first, int most) {
    const unsigned full = (1u << RK_SIM_WORDS) - 1u; /* RK_SIM_WORDS is 8 or 16 */
    const unsigned b0 = warp_ballot((uint32_t)(w0 >> 32) == first + (uint32_t)part);
    const unsigned b1 = RK_SIM_SECOND ? warp_ballot((uint32_t)(w1 >> 32) == first + RK_SIM_PARTS + (uint32_t)part) : 0u;
    int n = 0;
    while (n < most && (((RK_SIM_LOAD_OF(n) ? b1 : b0) >> (RK_SIM_PART_OF(n) * RK_SIM_WORDS)) & full) == full) n++;
    return n;
}
RK_DEVICE int rk_sim_whole_commands_(uint64_t w0, uint64_t w1, int part, uint32_t seq) {
    return rk_sim_count_whole_(w0, w1, part, seq, 4);
}

/* RK_SIM_IDLE_ROUNDS n (0: never): after n staggered reads in a row found
 * nothing (a long step, an idle host), the relay's pause between them
 * sleeps (__nanosleep on a GPU) instead of spinning on the global timer;
 * a command that comes then is found a little later, one that comes soon
 * after an answer as before (part of the 10 000 steps' 19.63 -> 18.39 ms
 * with RK_SIM_BAND_STRIDE and RK_SIM_BAND_SLEEP_NS; alone, no difference). */
#ifndef RK_SIM_IDLE_ROUNDS
#define RK_SIM_IDLE_ROUNDS 16u
#endif
RK_DEVICE void rk_sim_doze_(unsigned ns) {
    if (lane_id() == 0) sleep_ns(ns);
}

/* The relay's warp polls the host's ring with two reads issued
 * RK_SIM_READ_STAGGER_NS apart, until command seq is whole; returns the
 * commands found (w as for rk_sim_whole_commands_). 0: one read at a time.
 * Measured on the H100 (docs/simulations.md, session 11), with
 * RK_SIM_SELF_PAUSE_NS 300: the wave's inject applied 3.55 -> 2.69 us p50.
 * But the second read is not a stagger behind the first: a load of host
 * memory leaves only once an earlier one of the same lines is back (session
 * 19, scripts/device-host-reads.sh: issued 0-800 ns after, it came back
 * 1.04-1.13 us after the first; of other lines, the delay after), so it
 * finds what the host wrote up to about a round trip later. */
#ifndef RK_SIM_READ_STAGGER_NS
#define RK_SIM_READ_STAGGER_NS 400u
#endif
RK_DEVICE int rk_sim_read_staggered_(const rk_sim_mailbox *mb, uint32_t seq, int part, int word, uint64_t *w0,
                                     uint64_t *w1, uint64_t *issued, uint64_t *newer0, uint64_t *newer1,
                                     uint64_t *newer_issued) {
    const uint64_t *p0 = &mb->cmd[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
    const uint64_t *p1 = &mb->cmd[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
    uint64_t ta = RK_SIM_TRACE ? rk_sim_now_() : 0u;
    uint64_t a0 = load_relaxed_u64(p0), a1 = RK_SIM_SECOND ? load_relaxed_u64(p1) : 0u;
    for (unsigned rounds = 0;; rounds++) {
        if (RK_SIM_IDLE_ROUNDS > 0u && rounds >= RK_SIM_IDLE_ROUNDS) rk_sim_doze_(RK_SIM_READ_STAGGER_NS);
        else rk_sim_nap_(RK_SIM_READ_STAGGER_NS);
        sync_warp(); /* every lane issues the next read after the nap */
        const uint64_t tb = RK_SIM_TRACE ? rk_sim_now_() : 0u;
        const uint64_t b0 = load_relaxed_u64(p0), b1 = RK_SIM_SECOND ? load_relaxed_u64(p1) : 0u;
        const int n = rk_sim_whole_commands_(a0, a1, part, seq); /* the older read: waits for it, not the newer */
        if (n) {
            *w0 = a0;
            *w1 = a1;
            *issued = ta;
            *newer0 = b0; /* still in flight: used at the relay's next read (rk_sim_pending_commands_) */
            *newer1 = b1;
            *newer_issued = tb;
            return n;
        }
        a0 = b0;
        a1 = b1;
        ta = tb;
    }
}

/* The relay's warp: the commands from seq on in the newer of the staggered
 * reads (of commands from `from` on, laid out as for rk_sim_whole_commands_),
 * which was still in flight when the older one found commands; w0, w1 as
 * for rk_sim_whole_commands_. Used rather than dropped: a load's register
 * cannot be written again before the load is back, so a dropped read still
 * held up whatever came after it (traced on the H100: 1.0-1.6 us from
 * finding a command to its copy in the log, about a bus read), and it may
 * hold the next command already. */
#ifndef RK_SIM_KEEP_NEWER_READ
#define RK_SIM_KEEP_NEWER_READ 1 /* 0: the newer read is dropped */
#endif
RK_DEVICE uint64_t rk_sim_pick_word_(uint64_t v0, uint64_t v1, int j, int word, uint32_t seq) {
    const int src = RK_SIM_PART_OF(j) * RK_SIM_WORDS + word;
    const uint32_t lo0 = (uint32_t)shfl_i32((int)(uint32_t)v0, src), hi0 = (uint32_t)shfl_i32((int)(uint32_t)(v0 >> 32), src);
    const uint32_t lo1 = (uint32_t)shfl_i32((int)(uint32_t)v1, src), hi1 = (uint32_t)shfl_i32((int)(uint32_t)(v1 >> 32), src);
    if (j > 3) return (uint64_t)(seq + 1u) << 32; /* not in the read: a tag that is not the command's */
    return RK_SIM_LOAD_OF(j) ? (uint64_t)hi1 << 32 | lo1 : (uint64_t)hi0 << 32 | lo0;
}
RK_DEVICE int rk_sim_pending_commands_(uint64_t v0, uint64_t v1, uint32_t from, uint32_t seq, int part, int word,
                                       uint64_t *w0, uint64_t *w1) {
    const uint32_t d = seq - from;
    if (d > 3u) return 0;
    *w0 = rk_sim_pick_word_(v0, v1, (int)d + part, word, seq + (uint32_t)part);
    *w1 = rk_sim_pick_word_(v0, v1, (int)d + RK_SIM_PARTS + part, word, seq + RK_SIM_PARTS + (uint32_t)part);
    return rk_sim_whole_commands_(*w0, *w1, part, seq);
}

#ifndef RK_SIM_LOG_EARLY
#define RK_SIM_LOG_EARLY 1 /* 0: the log's stores always wait for the relay's per-command decisions (rk_sim_relay_) */
#endif
/* The relay's warp: commands seq .. seq + m - 1 of a read (w0, w1 as for
 * rk_sim_whole_commands_) into the log, those of `take` (bit i: command
 * seq + i) marked applied by the relay's block. The whole read at once: a
 * band that reads it then finds a query with the step before it, and
 * answers it with the step. One store a load, each lane its own word (a
 * loop over the commands cost tens of instructions each, on the way of
 * every command); with 16-word commands the later two first: a band takes
 * the commands up to the first one not yet whole, so one that polls
 * between the stores finds fewer rather than a step without the query
 * behind it, which it would answer only after its whole step and another
 * read of the log (traced on the H100: half of the mixed workload's
 * queries, when each command had a store of its own in order). */
RK_DEVICE void rk_sim_log_store_(rk_sim_board *board, uint32_t seq, int m, uint32_t take, int part, int word, uint64_t w0,
                                 uint64_t w1) {
    const uint64_t relayed = word == RK_SIM_W_OP ? (uint64_t)RK_SIM_OP_RELAYED : 0u;
    if (RK_SIM_SECOND && RK_SIM_PARTS + part < m)
        store_relaxed_u64(&board->log[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word],
                          w1 | (((take >> (RK_SIM_PARTS + part)) & 1u) ? relayed : 0u));
    if (part < m)
        store_relaxed_u64(&board->log[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word],
                          w0 | (((take >> part) & 1u) ? relayed : 0u));
}
#ifndef RK_SIM_FOLLOW_UP_READ
#define RK_SIM_FOLLOW_UP_READ 2 /* 0: only a staggered read leaves a newer read for the next; 1: every read that found commands; 2 and 3: below (rk_sim_relay_) */
#endif
#ifndef RK_SIM_STEP_READ_ONCE
#define RK_SIM_STEP_READ_ONCE 1 /* 0: after a step, one more read of the host's ring besides the one in flight */
#endif
#ifndef RK_SIM_READ_AGAIN
#define RK_SIM_READ_AGAIN 0 /* 1: the relay reads again at once after any command the bands apply, not only a step */
#endif
/* The relay's warp: copies commands seq, seq + 1, ... from the host's ring
 * to the log until the STOP command, up to four commands per read of the bus
 * (lanes 0-15 the words of the first and third, 16-31 of the second and
 * fourth, both loads in flight at once). A log slot is written again only
 * once every band has read the command it held; the host's slot once the
 * command is done (it was copied before: no taken word with a relay).
 *
 * Commands the relay's block applies (rk_sim_relay_takes_) go to the log
 * marked RK_SIM_OP_RELAYED with the others of their read, then the block
 * applies and answers them; a band whose rows one reaches waits for its
 * answer's mark (released after the block's writes), the others skip it. It
 * saves the bands' read of the log, their gather and their neighbour wait.
 *
 * When it reads: a host that waits for an answer writes its next command
 * only once the answer has crossed the bus, and a read that gets there
 * first finds nothing and holds the next one back a whole bus round trip (a
 * warp has one read of host memory in flight; more slow the whole GPU). So
 * before reading again it waits, from the L2, for the last command it copied
 * to be answered (rk_sim_await_answer_) -- except after a step, whose
 * answer is more than a round trip off: then it reads once at once, for
 * commands a host that does not wait has sent right behind it. After a
 * query or another command the bands apply, that read would come back
 * empty while the answer is on its way, and hold up the read that brings
 * the host's next command (a query waited for behind an impulse and a step,
 * the seed table's mixed workload, paid it every time). */
RK_DEVICE void rk_sim_relay_(rk_sim_mailbox *mb, rk_sim_board *board, rk_sim_relay_cmd *c,
                             const rk_sim_state *local, const rk_sim_state *s, uint32_t seq, uint64_t tick,
                             uint64_t steps, int bands, int halo) {
    const int lane = lane_id(), part = lane / RK_SIM_WORDS, word = lane % RK_SIM_WORDS;
    uint32_t known = seq - 1u; /* every band has read the commands before seq; asked again only when needed */
    const int least = s->rows / bands; /* the fewest rows a band has (rk_sim_relay_takes_) */
    uint32_t awaited = 0;      /* the last command copied; 0: none yet */
    int read_again = 1; /* read once more at once before waiting for the last command's answer */
    uint64_t busy = tick;      /* the ticks up to the last command the bands apply */
    uint64_t idle = 0;         /* every band has been seen past this tick */
    int refresh = 0;           /* a global command since the block copied the scalars */
    int last_taken = 0;        /* the block applied the last command read */
    int last_step = 0;         /* the last command read is a step */
    int pending = 0;           /* newer0/1: the newer staggered read, of commands from pending_from on */
    uint64_t newer0 = 0, newer1 = 0, newer_issued = 0;
    uint32_t pending_from = 0;
    for (;;) {
        uint64_t w0 = 0, w1 = 0, issued = 0;
        int n = 0;
        if (pending) {
            pending = 0;
            n = rk_sim_pending_commands_(newer0, newer1, pending_from, seq, part, word, &w0, &w1);
            if (RK_SIM_TRACE && lane == 0 && awaited != 0u) rk_sim_stamp_(board, awaited, RK_SIM_T_READ_BACK, rk_sim_now_());
            issued = newer_issued;
            /* After a step, the read in flight is the read at once: empty,
             * the relay waits for the step's answer now rather than after
             * one more bus round trip (RK_SIM_STEP_READ_ONCE). */
            if (RK_SIM_STEP_READ_ONCE && n == 0) read_again = 0;
        }
        /* The block answered the last command itself: RK_SIM_SELF_PAUSE_NS,
         * so that the read reaches the host's ring about when the host,
         * having seen the answer, has written its next command (a read that
         * gets there first comes back empty). RK_SIM_SELF_AWAIT: as after
         * any answer, the wait for its mark (which the block's second warp
         * writes after a fence) and RK_SIM_ANSWER_PAUSE_NS, the showcase's
         * timing after an impulse its second warp applied. */
        uint64_t look[RK_SIM_LOADS_AHEAD]; /* RK_SIM_LOOK_LATE: the look's loads, compared after the next read is out */
        int looked = 0, idle_due = 0;
        if (n == 0 && awaited != 0u && !read_again && (!last_taken || RK_SIM_SELF_AWAIT))
            looked = rk_sim_await_answer_(board, awaited, last_step, bands, busy, &idle, look);
        else if (n == 0 && awaited != 0u && last_taken && RK_SIM_SELF_PAUSE_NS > 0u) rk_sim_nap_(RK_SIM_SELF_PAUSE_NS);
        while (n == 0) {
            /* Commands seq + part and (16 words a command) seq + 2 + part. */
            if (RK_SIM_TRACE) issued = rk_sim_now_();
            w0 = load_relaxed_u64(&mb->cmd[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]);
            w1 = RK_SIM_SECOND ? load_relaxed_u64(&mb->cmd[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]) : 0u;
            if (looked) idle_due = rk_sim_look_done_(look, busy);
            looked = 0;
            n = rk_sim_whole_commands_(w0, w1, part, seq);
            if (idle_due) { /* the read is back: the fence after the look costs nothing more now */
                rk_sim_fence_();
                idle = busy;
                idle_due = 0;
            }
            if (n) break;
            if (read_again && awaited != 0u) {
                looked = rk_sim_await_answer_(board, awaited, last_step, bands, busy, &idle, look); /* the one read at once found nothing */
                read_again = 0;
            } else if (RK_SIM_READ_STAGGER_NS > 0u) {
                n = rk_sim_read_staggered_(mb, seq, part, word, &w0, &w1, &issued, &newer0, &newer1, &newer_issued);
                pending = RK_SIM_KEEP_NEWER_READ;
                pending_from = seq;
                break;
            } else {
                rk_sim_pause_();
            }
        }
        if (RK_SIM_TRACE && lane == 0) {
            const uint64_t found = rk_sim_now_();
            for (int i = 0; i < n; i++) {
                rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_ISSUE, issued);
                rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_FOUND, found);
            }
        }
        const uint32_t last = seq + (uint32_t)n - 1u;
        if ((int32_t)(known - (last - RK_SIM_SLOTS)) < 0) known = rk_sim_slowest_band_(board, bands, last - RK_SIM_SLOTS);
        /* Every command goes to the log, those the block applies marked
         * (the bands near one wait for its answer's mark; the others go on
         * at once), then the block applies them, in order. When none can be
         * the block's (busy bands, no look), the log gets the read at once
         * and the bookkeeping below follows, on no band's way
         * (RK_SIM_LOG_EARLY): it took 0.15 us a command (traced on the
         * H100: found -> in the log 0.42 us for one command, 0.74 for three),
         * where the showcase's relay stores what it read first. */
        const int early = RK_SIM_LOG_EARLY && (RK_SIM_RELAY_INLINE <= 0 || (RK_SIM_RELAY_LOOK == 0 && idle < busy &&
                                                                          !(RK_SIM_TAKE_LONE && n == 1)));
        if (early) {
            int upto = n; /* the commands up to a stop */
            for (int i = 0; i < n; i++) {
                const uint64_t x = RK_SIM_LOAD_OF(i) ? w1 : w0;
                if ((uint32_t)shfl_i32((int)(uint32_t)x, RK_SIM_PART_OF(i) * RK_SIM_WORDS + RK_SIM_W_OP) == RK_SIM_OP_STOP) {
                    upto = i + 1;
                    break;
                }
            }
            rk_sim_log_store_(board, seq, upto, 0u, part, word, w0, w1);
        }
        uint64_t logged = RK_SIM_TRACE && early ? rk_sim_now_() : 0u; /* the stores, not the decisions after */
        if (RK_SIM_TRACE && lane == 0) {
            const uint64_t deciding = rk_sim_now_();
            for (int i = 0; i < n; i++) rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_DECIDING, deciding);
        }
        uint32_t take = 0, fresh = 0; /* bit i: the block applies command i; and copies the scalars first */
        uint64_t steps_before[4];     /* of each command the block applies */
        uint64_t wait_tick = 0;       /* RK_SIM_TAKE_LONE: what the block waits for first (n is 1) */
        int wait_lo = 0, wait_hi = 0;
        last_taken = 0;
        int stop = 0, m = 0; /* m: the commands of this read up to a stop */
        for (int i = 0; i < n && !stop; i++, m++) {
            const int k = RK_SIM_LOAD_OF(i), base = RK_SIM_PART_OF(i) * RK_SIM_WORDS;
            const uint64_t x = k ? w1 : w0;
            const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)x, base + RK_SIM_W_OP);
            const uint32_t arg = (uint32_t)shfl_i32((int)(uint32_t)x, base + RK_SIM_W_ARG);
            const int begin = shfl_i32((int)(uint32_t)x, base + RK_SIM_W_BEGIN);
            const int end = shfl_i32((int)(uint32_t)x, base + RK_SIM_W_END);
            const uint64_t ticks = op == RK_SIM_OP_STEP && arg > 0u ? arg : 1u;
            const int applied = rk_sim_relay_takes_(board, s, op, arg, begin, end, bands, halo, least, busy, &idle,
                                                    n == 1, &wait_lo, &wait_hi);
            if (applied == 2) wait_tick = busy;
            if (applied) {
                take |= 1u << i;
                if (refresh) fresh |= 1u << i;
                refresh = 0;
                steps_before[i] = steps;
            } else {
                busy = tick + ticks;
                if (op > RK_SIM_OP_STEP || (op < RK_SIM_OP_STEP && end == 0)) refresh = 1;
            }
            tick += ticks;
            if (op == RK_SIM_OP_STEP) steps += arg;
            if (op == RK_SIM_OP_STOP) stop = 1; /* nothing follows a stop */
            /* A step's answer is more than a bus round trip off; with
             * RK_SIM_READ_AGAIN, any command's the bands apply. */
            read_again = op == RK_SIM_OP_STEP || (RK_SIM_READ_AGAIN && !applied);
            last_taken = applied;
            last_step = op == RK_SIM_OP_STEP;
        }
        if (!early) rk_sim_log_store_(board, seq, m, take, part, word, w0, w1);
        if (RK_SIM_TRACE && !early) logged = rk_sim_now_();
        /* After the log's stores (only the decisions above are on their
         * way), a read that found commands is followed at once by another
         * of the same slots, used at the next read: a host that sends several
         * commands without waiting may have been writing the later ones
         * while the read crossed the bus, and without it the relay would
         * find them only after the last found command's answer (traced: an
         * inject found alone, its step and query 6 us later). With 2, not
         * when the block applies the last command: its read comes after a
         * pause tuned for that (RK_SIM_SELF_PAUSE_NS). With 3, only after
         * a step (its read at once, RK_SIM_STEP_READ_ONCE). The follow-up
         * read holds up every load the relay's warp issues after it until
         * it is back (loads complete in order: session 19,
         * scripts/device-host-reads.sh), so after a query the relay saw
         * the answer's mark 0.99 us after the answer, 0.35 with 3; but 3
         * measured the wave's mixed workload with queries waited only
         * 5-10 us better and with each command waited 7-10% worse
         * (H100, session 19). */
        if (RK_SIM_KEEP_NEWER_READ && !pending &&
            (RK_SIM_FOLLOW_UP_READ == 1 || (RK_SIM_FOLLOW_UP_READ == 2 && !last_taken) ||
             (RK_SIM_FOLLOW_UP_READ == 3 && last_step))) {
            newer_issued = RK_SIM_TRACE ? rk_sim_now_() : 0u;
            newer0 = load_relaxed_u64(&mb->cmd[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]);
            newer1 = RK_SIM_SECOND ? load_relaxed_u64(&mb->cmd[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]) : 0u;
            pending = 1;
            pending_from = seq;
        }
        if (RK_SIM_TRACE && word == RK_SIM_W_OP) {
            for (int i = 0; i < m; i++) {
                if (part != RK_SIM_PART_OF(i)) continue;
                const uint64_t v = RK_SIM_LOAD_OF(i) ? w1 : w0;
                rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_SEQ, seq + (uint32_t)i);
                rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_OP, (v & 0xffffffffu) | (((take >> i) & 1u) ? RK_SIM_OP_RELAYED : 0u));
                rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_LOGGED, logged);
            }
        }
        for (int i = 0; i < m; i++) {
            if (!((take >> i) & 1u)) continue;
            if (part == RK_SIM_PART_OF(i)) ((uint32_t *)c->buffer)[word] = (uint32_t)(RK_SIM_LOAD_OF(i) ? w1 : w0);
            if (lane == 0) {
                c->steps = steps_before[i];
                c->seq = seq + (uint32_t)i;
                c->go = 1;
                c->refresh = (fresh >> i) & 1u;
#if RK_SIM_TAKE_LONE
                c->wait_tick = wait_tick; /* n is 1 when it is not 0 */
                c->wait_lo = wait_lo;
                c->wait_hi = wait_hi;
#endif
            }
            sync_threads(); /* the block applies it */
            rk_sim_relay_apply_(local, s, mb, board, c, bands);
        }
        if (stop) return;
        awaited = last;
        seq = last + 1u;
    }
}

/* The relay block: warp 0 relays (rk_sim_relay_); the other warps wait at a
 * barrier for the commands the relay has the whole block apply. */
RK_DEVICE void rk_sim_relay_block_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                   uint64_t tick, uint64_t steps, int bands, int halo) {
    RK_SHARED rk_sim_relay_cmd c;
    RK_SHARED rk_sim_scalars scalars;
    rk_sim_state local = *s;
    local.scalars = &scalars;
    rk_sim_copy_scalars_(&scalars, s->scalars);
    if (thread_idx_x() < 32) {
        rk_sim_relay_(mb, board, &c, &local, s, seq, tick, steps, bands, halo);
        if (thread_idx_x() == 0) c.go = 0;
        sync_threads(); /* the others leave */
        return;
    }
    for (;;) {
        sync_threads();
        if (!c.go) return;
        rk_sim_relay_apply_(&local, s, mb, board, &c, bands);
    }
}

/* A band's read of the log: up to RK_SIM_BATCH commands from seq on (their
 * words, as the relay copied them), and how far the bands near it were
 * then. A band applies them one after the other from shared memory: a step
 * with the query right behind it, or an impulse, a step and a query sent
 * together, cost the band one read of the log, not one each. */
#ifndef RK_SIM_BATCH
#define RK_SIM_BATCH 4
#endif
typedef struct rk_sim_batch {
    uint64_t buffer[RK_SIM_BATCH][RK_SIM_CMD_WORDS / 2]; /* 8-byte aligned: a payload is a user's struct */
    uint64_t near; /* the least band_done of the bands near this one, seen with the read, or a lower bound (RK_SIM_NEAR_VOTE); 0: not watched */
    int n;         /* commands read, 1 .. RK_SIM_BATCH */
    int early;     /* the place + 1 of a step whose query behind warp 0 answered at the read (rk_sim_answer_early_); 0: none */
} rk_sim_batch;

/* The least of a 64-bit value over the warp. */
RK_DEVICE uint64_t rk_sim_warp_min_u64_(uint64_t v) {
    for (int k = 16; k > 0; k /= 2) {
        const uint32_t lo = (uint32_t)shfl_xor_i32((int)(uint32_t)v, k);
        const uint32_t hi = (uint32_t)shfl_xor_i32((int)(uint32_t)(v >> 32), k);
        const uint64_t other = (uint64_t)hi << 32 | lo;
        v = other < v ? other : v;
    }
    return v;
}

/* Warp 0 reads commands seq, seq + 1, ... from the log (lanes 0-15 the words
 * of seq and seq + 2, 16-31 of seq + 1 and seq + 3) until seq is whole, and
 * with the same loads in flight the progress of the bands lo .. hi (a lane
 * each, at most 32 of them) into b; after a block barrier (the caller's)
 * the whole block has the batch. The band says it has read them (its
 * words are in shared memory now). */
#ifndef RK_SIM_NEAR_VOTE
#define RK_SIM_NEAR_VOTE 1 /* 0: how far the bands near are, as the least of their words (five rounds of shuffles) */
#endif
RK_DEVICE void rk_sim_read_batch_(rk_sim_board *board, uint32_t seq, rk_sim_batch *b, int band, int lo, int hi,
                                  uint64_t need, uint64_t shared_tick) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const int part = tid / RK_SIM_WORDS, word = tid % RK_SIM_WORDS;
        const uint64_t *first = &board->log[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
        const uint64_t *second = &board->log[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
        const int watching = hi - lo < 32, b_near = lo + tid;
        for (;;) {
            const uint64_t w0 = load_relaxed_u64(first), w1 = RK_SIM_SECOND ? load_relaxed_u64(second) : 0u;
            /* Not the band's own word: it is past its own commands, and may not have said so yet. */
            const uint64_t d = watching && b_near <= hi && b_near != band ? load_acquire_gpu_u64(&RK_SIM_DONE(board, b_near))
                                                                          : ~(uint64_t)0;
            int n = 0;
            while (n < RK_SIM_BATCH &&
                   warp_all(part != RK_SIM_PART_OF(n) || (uint32_t)((RK_SIM_LOAD_OF(n) ? w1 : w0) >> 32) == seq + (uint32_t)n))
                n++;
            if (n) {
                if (part < n) ((uint32_t *)b->buffer[part])[word] = (uint32_t)w0;
                if (RK_SIM_SECOND && RK_SIM_PARTS + part < n) ((uint32_t *)b->buffer[RK_SIM_PARTS + part])[word] = (uint32_t)w1;
                /* Not the least of them (five rounds of shuffles, on the way of
                 * every command) but the larger of the two ticks the band
                 * compares it with that they are all past (need >=
                 * shared_tick; 0: neither): a lower bound, which can only
                 * make the band wait or look where it need not have. */
                const uint64_t least = !RK_SIM_NEAR_VOTE    ? rk_sim_warp_min_u64_(d)
                                       : warp_all(d >= need) ? need
                                       : warp_all(d >= shared_tick) ? shared_tick
                                                                     : 0u;
                if (tid == 0) {
                    b->n = n;
                    b->near = watching ? least : 0u;
                    b->early = 0;
                    store_relaxed_u64(&RK_SIM_TAKEN(board, band), (uint64_t)(seq + (uint32_t)n - 1u));
                }
                break;
            }
            if (RK_SIM_LOG_SLEEP) rk_sim_band_pause_();
            else rk_sim_pause_();
        }
        sync_warp(); /* the lanes' words, for warp 0 (rk_sim_answer_early_) */
    }
}

#ifndef RK_SIM_QUERY_AHEAD
#define RK_SIM_QUERY_AHEAD 3 /* 2: an RK_SIM_QUERY_NEXT behind a step is answered by the block after the read (not warp 0 at it); 1: as any query; 0: a query behind a step waits for the band's whole step */
#endif
/* A query (RK_SIM_QUERY, applied by the bands) of this band's rows
 * [*begin, *end) whose words are h; else 0. */
RK_DEVICE int rk_sim_query_behind_(const uint32_t *h, int rb, int re, int *begin, int *end) {
    if (!h || h[RK_SIM_W_OP] >= RK_SIM_OP_STEP || h[RK_SIM_W_END] == 0u || !(h[RK_SIM_W_ARG] & RK_SIM_ARG_QUERY) ||
        (int)h[RK_SIM_W_BEGIN] < rb || (int)h[RK_SIM_W_END] > re)
        return 0;
    *begin = (int)h[RK_SIM_W_BEGIN];
    *end = (int)h[RK_SIM_W_END];
    return 1;
}

/* Warp 0 of a band, with batch b just read (commands seq, ...) and before
 * the block meets: an RK_SIM_QUERY_NEXT of this band's rows right behind a
 * one-step step, with nothing before the step in the batch that this band
 * would wait for or apply first (only region commands whose rows and halo
 * miss the band's, queries, and commands the relay's block applied that
 * do not reach it), is answered now when the bands near this one had
 * finished `need` at the read -- the showcase's answer ahead of the
 * barrier: one load round trip after the read. Its handler runs in this
 * warp alone (r->threads 32), one step ahead (r->ahead); thread 0 answers.
 * b->early says which step it was behind (its place + 1). */
RK_DEVICE void rk_sim_answer_early_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, rk_sim_batch *b,
                                    uint32_t seq, int rb, int re, int halo, uint64_t need, uint64_t steps) {
    /* Volatile: NVVM hoisted this load above the caller's tid < 32 test, so
     * every warp read the word thread 0 was about to write (a discarded
     * value, but a shared-memory hazard to compute-sanitizer's racecheck). */
    if (*(volatile const uint64_t *)&b->near < need) return;
    for (int i = 0; i + 1 < b->n; i++) {
        const uint32_t *h = (const uint32_t *)b->buffer[i];
        const uint32_t op = h[RK_SIM_W_OP];
        int qb = 0, qe = 0;
        if (op == RK_SIM_OP_STEP) {
            const uint32_t *q = (const uint32_t *)b->buffer[i + 1];
            if (h[RK_SIM_W_ARG] != 1u || !rk_sim_query_behind_(q, rb, re, &qb, &qe) || !(q[RK_SIM_W_ARG] & RK_SIM_ARG_NEXT))
                return;
            rk_sim_region r = rk_sim_clip_(qb, qe, rb, re, steps + 1u);
            r.threads = 32;
            r.ahead = 1;
            const uint64_t a = rk_sim_dispatch_(s, &r, q[RK_SIM_W_OP], &q[RK_SIM_W_PAYLOAD]);
            if (r.tid == 0) {
                rk_sim_answer_(mb, board, seq + (uint32_t)i + 1u, a, 0);
                b->early = i + 1;
            }
            return;
        }
        /* What comes before the step: nothing this band does or waits for. */
        const uint32_t user = op & ~RK_SIM_OP_RELAYED;
        if (user >= RK_SIM_OP_STEP || h[RK_SIM_W_END] == 0u) return; /* a library or global command */
        int rows_b = (int)h[RK_SIM_W_BEGIN], rows_e = (int)h[RK_SIM_W_END];
        const int query = (h[RK_SIM_W_ARG] & RK_SIM_ARG_QUERY) != 0u;
        if ((op & RK_SIM_OP_RELAYED) || !query) rk_sim_reach_rows_(rows_b, rows_e, halo, s->rows, &rows_b, &rows_e);
        if (rows_b < re && rows_e > rb && !(query && !(op & RK_SIM_OP_RELAYED))) return;
    }
}

/* One step of the band's rows [begin, end) (nothing if empty). */
RK_DEVICE void rk_sim_step_rows_(const rk_sim_state *s, int begin, int end, uint64_t step) {
    if (begin >= end) return;
    const rk_sim_region r = rk_sim_clip_(begin, end, begin, end, step);
    rk_sim_step_(s, &r);
}

#ifndef RK_SIM_NEAR_SKIP
#define RK_SIM_NEAR_SKIP 1 /* 0: a region command that writes always looks at the bands it waits for */
#endif
#ifndef RK_SIM_LAZY_DONE
#define RK_SIM_LAZY_DONE 1 /* 0: a band says it has finished every command at once */
#endif
/* The finisher thread of band `band`: says the band has finished tick
 * `tick` (rk_sim_finished_) unless it last said so already. */
RK_DEVICE void rk_sim_say_done_(rk_sim_board *board, int band, uint64_t tick, uint64_t *said) {
    if (*said < tick) {
        rk_sim_finished_(board, band, tick);
        *said = tick;
    }
}

/* The bands' loop: every band reads every command, in order, from seq on;
 * tick: the ticks before seq; steps: the steps before seq.
 *
 * A step waits for the bands near it (within halo rows) to have finished
 * `need`: the last tick that could have changed rows it reads, or rows they
 * read that it writes -- a step, a global command, or a region command the
 * bands apply that writes rows within halo of the band's own. A query
 * changes nothing; a command the relay's block applied is waited for
 * through its answer's mark by the bands within halo of it (below), so
 * neither needs the neighbours' word: an impulse far away, and the bands
 * that took it in, do not hold up the step after it.
 *
 * A band says at once that it has finished a step or a command that wrote
 * its rows (others wait for those); one it had nothing to do for (a region
 * command elsewhere, a query, a command the relay's block applied) only
 * before it next waits or reads the log (RK_SIM_LAZY_DONE): each saying is
 * a release by warp 1, which the block's next barrier waits for, so saying
 * it at once put a release on the way of the command behind (the step
 * after an impulse far away, in the wave's mixed workload). Any band that
 * waits has said everything it finished, so no two wait for each other. */
RK_DEVICE void rk_sim_band_loop_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                 uint64_t tick, uint64_t steps, int bands, int relay, int halo) {
    RK_SHARED rk_sim_batch batch;
    RK_SHARED rk_sim_scalars scalars;
    rk_sim_state local = *s; /* what steps and region commands see: the scalars in shared memory */
    local.scalars = &scalars;
    rk_sim_copy_scalars_(&scalars, s->scalars);
    const int band = block_idx_x(), tid = thread_idx_x();
    const int rb = rk_sim_band_first_(band, bands, s->rows), re = rk_sim_band_first_(band + 1, bands, s->rows);
    int near_lo = 0, near_hi = 0;
    rk_sim_reach_(rb, re, halo, bands, s->rows, &near_lo, &near_hi);
    /* The rows of the bands near this one: a command's reach is compared with them, not worked out as bands. */
    const int near_rb = rk_sim_band_first_(near_lo, bands, s->rows), near_re = rk_sim_band_first_(near_hi + 1, bands, s->rows);
    uint64_t shared_tick = tick; /* the last step or global command: what region commands wait for */
    uint64_t acquired = 0;       /* every band has been seen past this tick (a fence after) */
    uint64_t need = tick;        /* what the next step waits for the bands near it to finish (above) */
    uint64_t near = 0;           /* the bands near this one had finished this tick when the batch was read */
    /* Warp 1 says the band has finished a tick (a release, which waits for
     * the block's writes), so that thread 0 may answer meanwhile. */
    const int finisher = block_dim_x() > 32 ? 32 : 0;
    uint64_t said = 0; /* the finisher: the last tick it said the band finished (the launch's, before the first read) */
    int answered_ahead = 0; /* the command after this one was answered with it */
    int at = 0, n = 0;      /* the next command's place in the batch; the batch's commands */
    uint64_t read_at = 0;   /* RK_SIM_TRACE: when the batch was read */
    for (;; seq++) {
        if (at == n) {
            if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
            sync_threads(); /* everyone is done with the last batch's words */
            if (relay) {
                rk_sim_read_batch_(board, seq, &batch, band, near_lo, near_hi, need, shared_tick);
                if (RK_SIM_QUERY_AHEAD >= 3 && tid < 32) rk_sim_answer_early_(&local, mb, board, &batch, seq, rb, re, halo, need, steps);
                sync_threads();
                n = batch.n;
                near = batch.near;
                if (RK_SIM_TRACE) read_at = rk_sim_now_();
            } else {
                if (tid == 0) batch.early = 0;
                rk_sim_read_(mb, seq, (uint32_t *)batch.buffer[0], 1);
                if (tid == 0) rk_sim_taken_(mb, board, seq, bands);
                n = 1;
                near = 0;
            }
            at = 0;
        }
        const uint32_t *words = (const uint32_t *)batch.buffer[at];
        const uint32_t *after = at + 1 < n ? (const uint32_t *)batch.buffer[at + 1] : 0;
        at++;
        const uint32_t op = words[RK_SIM_W_OP];
        if (RK_SIM_TRACE && relay && tid == 0 && !(op & RK_SIM_OP_RELAYED)) {
            /* The band that answers it, or band 0 for a step or global command. */
            const int global = op >= RK_SIM_OP_STEP || words[RK_SIM_W_END] == 0u;
            if (band == (global ? 0 : rk_sim_band_of_row_((int)words[RK_SIM_W_BEGIN], bands, s->rows)))
                rk_sim_stamp_(board, seq, RK_SIM_T_BAND, read_at);
        }
        if (op & RK_SIM_OP_RELAYED) {
            /* Applied by the relay's block, maybe after the commands behind
             * it went to the log: a band whose rows are within halo of the
             * command's (a query: whose rows it reads, which the band may
             * write next) waits for its answer's mark, released after the
             * block's writes; the others go on at once. */
            tick++;
            int b = (int)words[RK_SIM_W_BEGIN], e = (int)words[RK_SIM_W_END];
            if (!(words[RK_SIM_W_ARG] & RK_SIM_ARG_QUERY)) rk_sim_reach_rows_(b, e, halo, s->rows, &b, &e);
            if (b < re && e > rb) {
                /* RK_SIM_TAKE_LONE: the block may be waiting for this band
                 * to say it finished what came before (any band that
                 * waits has said everything it finished). */
                if (RK_SIM_TAKE_LONE) {
                    sync_threads();
                    if (tid == finisher) rk_sim_say_done_(board, band, tick - 1u, &said);
                }
                /* The mark says seq or a later command: the host may have
                 * sent a ring's length more once seq was answered, and the
                 * relay applied one in the same slot while this band lagged
                 * (its writes are released after seq's, by the same thread). */
                if (tid == 0) {
                    const uint64_t *mark = &board->answered[seq & (RK_SIM_SLOTS - 1u)];
                    while ((int32_t)((uint32_t)load_relaxed_u64(mark) - seq) < 0) rk_sim_pause_();
                    rk_sim_fence_();
                }
                sync_threads();
            }
            if (!RK_SIM_LAZY_DONE && tid == finisher) rk_sim_say_done_(board, band, tick, &said);
        } else if (answered_ahead) {
            answered_ahead = 0; /* a query, answered with the step before it */
            tick++;
            if (!RK_SIM_LAZY_DONE && tid == finisher) rk_sim_say_done_(board, band, tick, &said);
        } else if (op == RK_SIM_OP_STEP) {
            const uint32_t count = words[RK_SIM_W_ARG];
            int qb = 0, qe = 0, next = 0;
            if (RK_SIM_QUERY_AHEAD && count == 1u && rk_sim_query_behind_(after, rb, re, &qb, &qe)) {
                answered_ahead = 1;
                next = RK_SIM_QUERY_AHEAD >= 2 && (after[RK_SIM_W_ARG] & RK_SIM_ARG_NEXT) != 0u;
            }
            for (uint32_t k = 0; k < count; k++) {
                const uint64_t want = k == 0 ? need : tick;
                if (k > 0 || near < want) {
                    if (tid == finisher) rk_sim_say_done_(board, band, tick, &said); /* before it waits */
                    rk_sim_await_bands_(board, near_lo, near_hi, want, bands, 0, band);
                }
                if (next) {
                    /* An RK_SIM_QUERY_NEXT: answered now, one step ahead of
                     * the rows (the bands near have finished the step
                     * before, and none writes what it reads before this
                     * band's step), then the step, once its reads are done
                     * -- unless warp 0 answered it at the read. */
                    if (batch.early != at) {
                        rk_sim_region r = rk_sim_clip_(qb, qe, rb, re, steps + 1u);
                        r.ahead = 1;
                        const uint64_t a = rk_sim_dispatch_(&local, &r, after[RK_SIM_W_OP], &after[RK_SIM_W_PAYLOAD]);
                        if (tid == 0) rk_sim_answer_(mb, board, seq + 1u, a, 0);
                        sync_threads();
                    }
                    rk_sim_step_rows_(&local, rb, re, steps);
                } else if (answered_ahead) {
                    /* The query's rows first, then its answer, then the rest. */
                    rk_sim_step_rows_(&local, qb, qe, steps);
                    sync_threads();
                    rk_sim_region_command_(&local, mb, board, after, seq + 1u, bands, rb, re, steps + 1u);
                    rk_sim_step_rows_(&local, rb, qb, steps);
                    rk_sim_step_rows_(&local, qe, re, steps);
                } else {
                    rk_sim_step_rows_(&local, rb, re, steps);
                }
                steps++;
                tick++;
                sync_threads();
                if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
            }
            if (count == 0) {
                tick++;
                if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
            }
            shared_tick = tick;
            need = tick;
            if (tid == 0) rk_sim_gather_(mb, board, seq, bands, 0);
        } else if (rk_sim_is_global_(words)) {
            tick++;
            if (tid == finisher) rk_sim_say_done_(board, band, tick - 1u, &said); /* before it waits */
            if (band == 0) {
                rk_sim_await_bands_(board, 0, bands - 1, tick - 1, bands, 0, band);
                const uint64_t a = rk_sim_global_command_(s, words, steps); /* on the scalars in device memory */
                if (tid == 0) {
                    rk_sim_finished_(board, 0, tick);
                    rk_sim_answer_(mb, board, seq, a, 1);
                }
            } else {
                rk_sim_await_bands_(board, 0, 0, tick, bands, 0, band);
                if (tid == 0) rk_sim_finished_(board, band, tick);
            }
            said = tick; /* thread 0 said it, after the finisher's last (a barrier between) */
            if (op != RK_SIM_OP_STOP) rk_sim_copy_scalars_(&scalars, s->scalars);
            shared_tick = tick;
            need = tick;
            if (op == RK_SIM_OP_STOP) return;
        } else {
            tick++;
            const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
            const int query = (words[RK_SIM_W_ARG] & RK_SIM_ARG_QUERY) != 0u;
            int rb_reach = 0, re_reach = 0; /* the rows within halo of the command's */
            rk_sim_reach_rows_(begin, end, halo, s->rows, &rb_reach, &re_reach);
            if (!query && rb_reach < re && re_reach > rb) need = tick; /* it writes rows this band's step reads */
            const int mine = begin < re && end > rb;
            if (mine) {
                /* A writer waits for the bands whose steps read its rows; a
                 * query reads only its band's rows, which are in order. */
                /* The bands near this one, acquired with the batch's read
                 * (rk_sim_read_batch_), often have finished it already:
                 * then there is nothing to wait for or look at. */
                const int seen = RK_SIM_NEAR_SKIP && rb_reach >= near_rb && re_reach <= near_re && near >= shared_tick;
                if (acquired < shared_tick && !query && !seen) {
                    int lo = 0, hi = 0;
                    rk_sim_reach_(begin, end, halo, bands, s->rows, &lo, &hi);
                    if (tid == finisher) rk_sim_say_done_(board, band, tick - 1u, &said); /* before it waits */
                    if (rk_sim_await_bands_(board, lo, hi, shared_tick, bands, 1, band)) acquired = shared_tick;
                }
                rk_sim_region_command_(&local, mb, board, words, seq, bands, rb, re, steps);
            }
            if ((!RK_SIM_LAZY_DONE || (mine && !query)) && tid == finisher) rk_sim_say_done_(board, band, tick, &said);
        }
    }
}

/* The persistent kernel: `relay` says whether the last block relays. */
RK_DEVICE void rk_sim_persistent_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                       uint64_t tick, uint64_t steps, int relay, int halo) {
    const int bands = grid_dim_x() - (relay ? 1 : 0);
    if (block_idx_x() < bands) {
        rk_sim_band_loop_(s, mb, board, seq, tick, steps, bands, relay, halo);
    } else {
        rk_sim_relay_block_(s, mb, board, seq, tick, steps, bands, halo);
    }
}

/* Traditional: one step over the band of this block (of `bands`); the launch
 * for the last step of command seq (seq != 0) answers it. */
RK_DEVICE void rk_sim_step_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                 uint64_t step) {
    const int bands = grid_dim_x(), band = block_idx_x();
    rk_sim_step_rows_(s, rk_sim_band_first_(band, bands, s->rows), rk_sim_band_first_(band + 1, bands, s->rows), step);
    sync_threads();
    if (seq != 0u && thread_idx_x() == 0) rk_sim_gather_(mb, board, seq, bands, 0);
}

/* Traditional: command seq, already in the ring. A region command is launched
 * on the bands it reaches (block i is band first_band + i of `bands`); a
 * global one (and a step of 0, a fence) on one block. */
RK_DEVICE void rk_sim_command_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                    uint64_t steps, int first_band, int bands) {
    RK_SHARED uint64_t buffer[RK_SIM_CMD_WORDS / 2];
    uint32_t *words = (uint32_t *)buffer;
    rk_sim_read_(mb, seq, words, 0);
    if (words[RK_SIM_W_OP] == RK_SIM_OP_STEP || rk_sim_is_global_(words)) {
        const uint64_t a = words[RK_SIM_W_OP] == RK_SIM_OP_STEP ? 0 : rk_sim_global_command_(s, words, steps);
        if (thread_idx_x() == 0) {
            thread_fence();
            rk_sim_answer_(mb, board, seq, a, 1);
        }
        return;
    }
    const int band = first_band + block_idx_x();
    rk_sim_region_command_(s, mb, board, words, seq, bands, rk_sim_band_first_(band, bands, s->rows),
                           rk_sim_band_first_(band + 1, bands, s->rows), steps);
}
