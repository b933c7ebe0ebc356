/* The relay block as the wave showcase built it: warps with one job each,
 * so that none waits for another.
 *   warp 0 relays: it reads the host's ring over the bus, copies what it
 *          finds to the log at once (it decides nothing: the host has
 *          marked the commands warp 1 applies) and waits for the last
 *          command's answer before it reads again;
 *   warp 1 applies: it reads the log's mirror in shared memory and
 *          applies the commands the host marked RK_SIM_OP_RELAYED (short
 *          row-wise writers: sim_exec.c, applier_takes), once the
 *          bands within halo of their rows have finished every command
 *          before them; it answers them, then releases their writes
 *          (board->released), which the bands near them wait for;
 *   warp 2 watches the bands for warp 1 while it waits.
 * A block of one warp (the CPU's default) only relays: the host marks
 * nothing, the bands apply every command. A design in which warp 0 decided
 * for each command whether its block applies it (sessions 18-20) was
 * slower on the H100 -- that bookkeeping sat on the way of every command --
 * and is gone (docs/simulations.md, sessions 21-22). Compiled after
 * sim_relay.c (the ring's reads, the log's stores) and before sim_bands.c,
 * in the DSL. */
/* RK_SIM_APPLIER_NEAR 1: warp 1 waits for the bands near a command's rows
 * alone (rk_sim_applier_apply_); 0: with a look at every band. */
#ifndef RK_SIM_APPLIER_NEAR
#define RK_SIM_APPLIER_NEAR 1
#endif

/* What the relay block's warps share, every word through the block-scope
 * atomics of sim_device.c (rk_sim_shared_load_, _store_). The mirror: warp
 * 0 stores each command it copies to the log here too, where warp 1 polls
 * for it -- shared memory, not a trip to the L2 and back (a slot is written
 * again when the log's is: warp 1's word of band_taken says what it has
 * read). want and past: warp 2, where the block has one, watches the bands
 * for warp 1 while it waits for its next command, so that one sent after
 * a step finds them seen past it. */
typedef struct rk_sim_applier_shared {
    uint64_t mirror[RK_SIM_SLOTS][RK_SIM_WORDS];
    uint64_t want; /* warp 1: every band should be past this tick before its next command; ~0: stop */
    uint64_t past; /* warp 2: every band was seen past this tick (with an acquire after) */
} rk_sim_applier_shared;
#define RK_SIM_WATCH_STOP (~(uint64_t)0)

/* Warp 0: copies commands seq, seq + 1, ... from the host's ring to the log
 * until the STOP command; with an applier (sh), to its mirror too. A log
 * slot is written again once every band and warp 1 (`readers`: its word
 * after the bands') have read the command it held.
 * When it reads: a host that waits for an answer writes its next command
 * only once the answer has crossed the bus, and a read that gets there
 * first finds nothing and holds the next one back a whole bus round trip (a
 * warp has one read of host memory in flight). So before reading again it
 * waits, from the L2, for the last command it copied to be answered
 * (rk_sim_await_answer_) -- except after a step, whose answer is more than
 * a round trip off: then it reads once at once, for commands a host that
 * does not wait has sent right behind it. While it finds nothing it reads
 * staggered (rk_sim_read_staggered_); after a read that found commands it
 * leaves one more in flight (RK_SIM_FOLLOW_UP_READ). */
#ifndef RK_SIM_KNOWN_MARGIN
#define RK_SIM_KNOWN_MARGIN 32 /* 0: the readers are looked at only where a copy needs it */
#endif
RK_DEVICE void rk_sim_relay_lean_(rk_sim_mailbox *mb, rk_sim_board *board, rk_sim_applier_shared *sh, uint32_t seq,
                                  int bands, int readers) {
    const int lane = lane_id(), part = lane / RK_SIM_WORDS, word = lane % RK_SIM_WORDS;
    uint32_t known = seq - 1u;  /* every reader has read the commands before it; asked again only when needed */
    uint32_t awaited = 0;       /* the last command copied; 0: none yet */
    int read_again = 1;         /* read once more at once before waiting for the last command's answer */
    int last_step = 0;          /* the last command copied is a step */
    int pending = 0;            /* newer0/1: a read still in flight, of commands from pending_from on */
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
            if (RK_SIM_STEP_READ_ONCE && n == 0) read_again = 0; /* that was the read at once after a step */
        }
        if (n == 0 && awaited != 0u && !read_again) rk_sim_await_answer_(board, awaited, last_step);
        while (n == 0) {
            if (RK_SIM_TRACE) issued = rk_sim_now_();
            rk_sim_ring_read_(mb, seq, part, word, &w0, &w1);
            n = rk_sim_whole_commands_(w0, w1, part, seq);
            if (n) break;
            if (read_again && awaited != 0u) {
                rk_sim_await_answer_(board, awaited, last_step); /* the read at once found nothing */
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
        const uint64_t found = RK_SIM_TRACE ? rk_sim_now_() : 0u;
        const uint32_t last = seq + (uint32_t)n - 1u;
        if ((int32_t)(known - (last - RK_SIM_SLOTS)) < 0) known = rk_sim_slowest_reader_(board, readers, last - RK_SIM_SLOTS);
        const int m = rk_sim_upto_stop_(w0, w1, word, n);
        if (sh) { /* warp 1's copy first: a store to shared memory waits for nothing */
            if (RK_SIM_SECOND && RK_SIM_PARTS + part < m)
                rk_sim_shared_store_(&sh->mirror[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word], w1);
            if (part < m) rk_sim_shared_store_(&sh->mirror[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word], w0);
        }
        rk_sim_log_store_(board, seq, m, part, word, w0, w1);
        if (RK_SIM_TRACE && word == RK_SIM_W_OP) {
            const uint64_t logged = rk_sim_now_();
            for (int i = 0; i < m; i++) {
                if (part != RK_SIM_PART_OF(i)) continue;
                const uint32_t at = seq + (uint32_t)i;
                rk_sim_stamp_(board, at, RK_SIM_T_SEQ, at);
                rk_sim_stamp_(board, at, RK_SIM_T_OP, (uint32_t)(RK_SIM_LOAD_OF(i) ? w1 : w0));
                rk_sim_stamp_(board, at, RK_SIM_T_ISSUE, issued);
                rk_sim_stamp_(board, at, RK_SIM_T_FOUND, found);
                rk_sim_stamp_(board, at, RK_SIM_T_LOGGED, logged);
            }
        }
        const uint64_t x = RK_SIM_LOAD_OF(m - 1) ? w1 : w0;
        const uint32_t op = (uint32_t)shfl_i32((int)(uint32_t)x, RK_SIM_PART_OF(m - 1) * RK_SIM_WORDS + RK_SIM_W_OP);
        const uint32_t arg = (uint32_t)shfl_i32((int)(uint32_t)x, RK_SIM_PART_OF(m - 1) * RK_SIM_WORDS + RK_SIM_W_ARG);
        if (op == RK_SIM_OP_STOP) return;
        last_step = op == RK_SIM_OP_STEP;
        read_again = last_step; /* a step's answer is more than a bus round trip off */
        /* The follow-up read (RK_SIM_FOLLOW_UP_READ, sim_relay.c), but
         * not when warp 1 answers the last command or it is a query: a
         * read in flight holds up the loads that watch for its answer's
         * mark. */
        if (RK_SIM_KEEP_NEWER_READ && !pending &&
            (RK_SIM_FOLLOW_UP_READ == 1 || (RK_SIM_FOLLOW_UP_READ == 2 && !(op & RK_SIM_OP_RELAYED)) ||
             (RK_SIM_FOLLOW_UP_READ == 3 && last_step) ||
             (RK_SIM_FOLLOW_UP_READ == 4 && !(op & RK_SIM_OP_RELAYED) && (op >= RK_SIM_OP_STEP || !(arg & RK_SIM_ARG_QUERY))))) {
            newer_issued = RK_SIM_TRACE ? rk_sim_now_() : 0u;
            rk_sim_ring_read_(mb, seq, part, word, &newer0, &newer1);
            pending = 1;
            pending_from = seq;
        }
        awaited = seq + (uint32_t)m - 1u;
        seq = awaited + 1u;
        /* About to wait for an answer: where fewer than RK_SIM_KNOWN_MARGIN
         * log slots are known free, a look at the readers now, so that the
         * check before a copy (above) does not wait on the way of a command
         * (a round of loads every 64 commands: traced, H200, session 30, a
         * query's way from the ring to the log 0.16 -> 0.6 us in 4 % of the
         * mixed workload's triples). */
        if (RK_SIM_KNOWN_MARGIN > 0 && !read_again && !pending &&
            (int32_t)(known - (seq + (uint32_t)RK_SIM_KNOWN_MARGIN - RK_SIM_SLOTS)) < 0)
            known = rk_sim_least_taken_(board, readers, known);
    }
}

/* Warps 1 and 2, a lane per band, loads in flight at once: 1 if every band
 * has finished every tick up to `tick`, 2 if bands lo .. hi have (lo > hi:
 * never); an acquire after, if either. */
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
    const int past = (warp_all(all) ? 1 : 0) | (lo <= hi && warp_all(range) ? 2 : 0);
    if (past) rk_sim_fence_();
    return past;
}

/* Warp 1: command seq (words in shared memory, marked RK_SIM_OP_RELAYED:
 * a row-wise command or an RK_SIM_QUERY_NEXT) after `steps` steps: once
 * the bands within halo of its rows have finished tick `busy` (the last
 * command before it that the bands apply; *seen: every band was seen past
 * this tick, with an acquire then), and with a fresh copy of the scalars
 * after a global command (*refresh), its handler in one call over all its
 * rows by this warp alone (r->threads 32), as sim.h allows either; the
 * answer lane 0's value. The answer first, then the release of every
 * lane's writes (or, for a query, its reads) that the bands near it wait
 * for. */
RK_DEVICE void rk_sim_applier_apply_(const rk_sim_state *local, const rk_sim_state *s, rk_sim_mailbox *mb,
                                     rk_sim_board *board, rk_sim_applier_shared *sh, const uint32_t *words,
                                     uint32_t seq, uint64_t steps, uint64_t busy, uint64_t *seen, int *refresh,
                                     int bands, int halo) {
    const int lane = lane_id();
    const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
    if (RK_SIM_TRACE && lane == 0) rk_sim_stamp_(board, seq, RK_SIM_T_DECIDING, rk_sim_now_()); /* warp 1 has it */
    if (*seen < busy && warp_all(rk_sim_shared_load_(&sh->past) >= busy)) {
        rk_sim_fence_(); /* warp 2 saw them, with an acquire: this one orders the cells after it */
        *seen = busy;
    }
    if (*seen < busy) {
        int lo = 0, hi = 0, past = 0;
        rk_sim_reach_(begin, end, halo, bands, s->rows, &lo, &hi);
        if (RK_SIM_APPLIER_NEAR && hi - lo < 32) {
            /* Only the bands near its rows, an acquire load a lane, no
             * fence after: it waits for the step before it (the wave's
             * mixed workload, where the next impulse comes as the bands
             * finish it), and each look is a trip to the L2. */
            const int b = lo + lane;
            while (!warp_all(b > hi || load_acquire_gpu_u64(&RK_SIM_DONE(board, b)) >= busy)) rk_sim_pause_();
            sync_warp(); /* what each lane acquired, for every lane's cells */
        } else {
            while (!((past = rk_sim_bands_past_(board, bands, lo, hi, busy)) & 2)) rk_sim_pause_();
            if (past & 1) *seen = busy;
        }
    }
    if (*refresh) {
        /* The global command is applied: every band past it waited for band 0's. */
        const int count = (int)(sizeof(rk_sim_scalars) / sizeof(uint32_t));
        for (int i = lane; i < count; i += 32)
            ((uint32_t *)local->scalars)[i] = load_acquire_u32((const uint32_t *)s->scalars + i);
        sync_warp();
        *refresh = 0;
    }
    if (lane == 0) RK_SIM_STAMP(board, seq, RK_SIM_T_BAND, rk_sim_now_()); /* warp 1 starts it */
    rk_sim_region r = rk_sim_clip_(begin, end, begin, end, steps);
    r.tid = lane;
    r.threads = 32;
    const uint64_t answer = rk_sim_dispatch_(local, &r, words[RK_SIM_W_OP] & ~RK_SIM_OP_RELAYED, &words[RK_SIM_W_PAYLOAD]);
    sync_warp(); /* every lane's writes, before the release below */
    if (lane == 0) {
        /* The answer and its mark for the relay first (rk_sim_answer_), then
         * the release the bands near it wait for: its fence then holds up
         * neither the answer nor the relay's next read. */
        rk_sim_answer_(mb, board, seq, answer, 0);
        store_release_gpu_u64(&board->released[seq & (RK_SIM_SLOTS - 1u)], (uint64_t)seq);
    }
}

/* Warp 1: reads every command from the mirror of the log, in order, from
 * seq on (up to four a read, as a band does), counting ticks as the bands
 * do, and applies those marked for it; returns at the STOP command. */
RK_DEVICE void rk_sim_applier_(rk_sim_mailbox *mb, rk_sim_board *board, rk_sim_applier_shared *sh,
                               const rk_sim_state *local, const rk_sim_state *s, uint32_t seq, uint64_t tick,
                               uint64_t steps, int bands, int halo) {
    RK_SHARED uint64_t buffer[4][RK_SIM_CMD_WORDS / 2]; /* 8-byte aligned: a payload is a user's struct */
    const int lane = lane_id(), part = lane / RK_SIM_WORDS, word = lane % RK_SIM_WORDS;
    uint64_t busy = tick; /* the ticks up to the last command the bands apply */
    uint64_t seen = 0;    /* every band was seen past this tick */
    int refresh = 0;      /* a global command came since the copy of the scalars */
    for (;;) {
        uint64_t w0 = 0, w1 = 0;
        int n = 0;
        for (;;) {
            w0 = rk_sim_shared_load_(&sh->mirror[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]);
            w1 = RK_SIM_SECOND ? rk_sim_shared_load_(&sh->mirror[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]) : 0u;
            n = rk_sim_whole_commands_(w0, w1, part, seq);
            if (n) break;
            rk_sim_pause_(); /* a spin: a sleep may end microseconds late (sim_device.c, rk_sim_nap_) */
        }
        if (part < n) ((uint32_t *)buffer[part])[word] = (uint32_t)w0;
        if (RK_SIM_SECOND && RK_SIM_PARTS + part < n) ((uint32_t *)buffer[RK_SIM_PARTS + part])[word] = (uint32_t)w1;
        if (lane == 0) store_relaxed_u64(&RK_SIM_TAKEN(board, bands), (uint64_t)(seq + (uint32_t)n - 1u));
        sync_warp();
        for (int i = 0; i < n; i++, seq++) {
            const uint32_t *words = (const uint32_t *)buffer[i];
            const uint32_t op = words[RK_SIM_W_OP], arg = words[RK_SIM_W_ARG];
            if (op & RK_SIM_OP_RELAYED) {
                rk_sim_applier_apply_(local, s, mb, board, sh, words, seq, steps, busy, &seen, &refresh, bands, halo);
                tick++;
                continue;
            }
            if (op == RK_SIM_OP_STOP) {
                if (lane == 0) rk_sim_shared_store_(&sh->want, RK_SIM_WATCH_STOP);
                return;
            }
            tick += op == RK_SIM_OP_STEP && arg > 0u ? arg : 1u;
            if (op == RK_SIM_OP_STEP) steps += arg;
            else if (rk_sim_is_global_(words)) refresh = 1;
            busy = tick; /* a query too: it must have read the rows before they change */
        }
        if (lane == 0) rk_sim_shared_store_(&sh->want, busy); /* for warp 2 */
        sync_warp(); /* every lane is done with the buffer before the next read fills it */
    }
}

/* Warp 2: while warp 1 waits for its next command, whether every band is
 * past the tick it wants (sh->want), a lane per band, loads in flight
 * together; if so, an acquire, then sh->past. Returns at the stop. */
RK_DEVICE void rk_sim_watcher_(const rk_sim_board *board, rk_sim_applier_shared *sh, int bands) {
    for (;;) {
        /* Warp-uniform: warp 1 may write it between two lanes' loads. */
        const uint64_t mine = rk_sim_shared_load_(&sh->want);
        const uint64_t want = (uint64_t)(uint32_t)shfl_i32((int)(uint32_t)mine, 0) |
                              (uint64_t)(uint32_t)shfl_i32((int)(uint32_t)(mine >> 32), 0) << 32;
        if (want == RK_SIM_WATCH_STOP) return;
        if (!warp_all(rk_sim_shared_load_(&sh->past) >= want) && (rk_sim_bands_past_(board, bands, 0, -1, want) & 1) &&
            lane_id() == 0)
            rk_sim_shared_store_(&sh->past, want);
        rk_sim_pause_();
    }
}

/* The relay block in this design: warp 0 relays; with `applier` (the host
 * decides, sim.c: a block of two warps or more and fewer bands than
 * RK_SIM_MAX_BANDS, and only then marks commands for it) warp 1 applies
 * and warp 2 watches; any other warp has nothing to do. */
RK_DEVICE void rk_sim_applier_block_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                     uint64_t tick, uint64_t steps, int bands, int halo, int applier) {
    RK_SHARED rk_sim_scalars scalars;
    RK_SHARED rk_sim_applier_shared sh;
    rk_sim_state local = *s;
    local.scalars = &scalars;
    /* Tags of no command to come in the mirror (shared memory may hold an
     * earlier launch's on the CPU), before the copy's barrier. */
    for (int i = thread_idx_x(); i < (int)(RK_SIM_SLOTS * RK_SIM_WORDS); i += block_dim_x())
        sh.mirror[i / RK_SIM_WORDS][i % RK_SIM_WORDS] = (uint64_t)(seq - 1u) << 32;
    if (thread_idx_x() == 0) {
        sh.want = tick;
        sh.past = 0;
    }
    rk_sim_copy_scalars_(&scalars, s->scalars, thread_idx_x());
    /* Its word of band_taken is the one a band `bands` would have. */
    const int warp = thread_idx_x() / 32;
    if (warp == 0) rk_sim_relay_lean_(mb, board, applier ? &sh : 0, seq, bands, applier ? bands + 1 : bands);
    else if (warp == 1 && applier) rk_sim_applier_(mb, board, &sh, &local, s, seq, tick, steps, bands, halo);
    else if (warp == 2 && applier) rk_sim_watcher_(board, &sh, bands);
}
