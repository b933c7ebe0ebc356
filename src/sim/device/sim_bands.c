/* The bands: every block of a persistent simulation but the relay's owns
 * a band of rows, reads every command from the log (or, without a relay,
 * the host's ring) and applies its share; and the kernel bodies of both
 * patterns. Compiled after sim_device.c and sim_relay.c, in the DSL. */

/* A band's read of the log: up to RK_SIM_BATCH commands from seq on (their
 * words, as the relay copied them), and how far the bands near it were
 * then. A band applies them one after the other from shared memory: a step
 * with the query right behind it, or an impulse, a step and a query sent
 * together, cost the band one read of the log, not one each. */
#ifndef RK_SIM_BATCH
#define RK_SIM_BATCH 4
#endif
/* Batches a band keeps, taken by turns: with two, warp 0 reads the next one
 * while the block may still work on the last (as the wave's former kernel
 * did), rather than after a barrier that waits for every warp, the one
 * saying the band finished among them (a release). H200, session 26: the
 * wave's mixed workload with queries waited 359 against 369 us with one
 * (a measuring aid), heat3d 64^3's 613-619 against 628-634 us. */
#ifndef RK_SIM_READ_BUFFERS
#define RK_SIM_READ_BUFFERS 2
#endif
#if RK_SIM_READ_BUFFERS != 1 && RK_SIM_READ_BUFFERS != 2
#error "RK_SIM_READ_BUFFERS must be 1 or 2"
#endif
/* 1: thread 0 counts a band in for a step's answer, not warp 2 (a measuring
 * aid: rk_sim_band_loop_, gatherer). */
#ifndef RK_SIM_GATHER_WARP0
#define RK_SIM_GATHER_WARP0 0
#endif
typedef struct rk_sim_batch {
    uint64_t buffer[RK_SIM_BATCH][RK_SIM_CMD_WORDS / 2]; /* 8-byte aligned: a payload is a user's struct */
    uint64_t near; /* a lower bound of the bands near this one's band_done, seen with the read (rk_sim_read_batch_); 0: not watched */
    int n;         /* commands read, 1 .. RK_SIM_BATCH */
    int early;     /* the place + 1 of a step whose query behind warp 0 answered at the read (rk_sim_answer_early_); 0: none */
    uint64_t polled; /* RK_SIM_TRACE: the low 32 bits of when warp 0 began to poll the log for it (high half),
                      * 8 ns units since the batch before was found, looks, n (sim_protocol.h, DECIDING) */
    uint64_t found;  /* RK_SIM_TRACE: when it found it */
} rk_sim_batch;

/* Warp 0 reads commands seq, seq + 1, ... from the log (lanes 0-15 the words
 * of seq and seq + 2, 16-31 of seq + 1 and seq + 3) until seq is whole, and
 * with the same loads in flight the progress of the bands lo .. hi (a lane
 * each, at most 32 of them) into b; after a block barrier (the caller's)
 * the whole block has the batch. The band says it has read them (its
 * words are in shared memory now). */
RK_DEVICE void rk_sim_read_batch_(rk_sim_board *board, uint32_t seq, rk_sim_batch *b, int band, int lo, int hi,
                                  uint64_t need, uint64_t shared_tick, uint64_t prev_found) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const int part = tid / RK_SIM_WORDS, word = tid % RK_SIM_WORDS;
        const int copy = band % RK_SIM_LOG_COPIES;
        const uint64_t *first = &board->log[copy][(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
        const uint64_t *second = &board->log[copy][(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word];
        const int watching = hi - lo < 32, b_near = lo + tid;
        const uint64_t polled = RK_SIM_TRACE ? rk_sim_now_() : 0u;
        uint32_t looks = 0;
        for (;; looks++) {
            const uint64_t w0 = load_relaxed_u64(first), w1 = RK_SIM_SECOND ? load_relaxed_u64(second) : 0u;
            /* Not the band's own word: it is past its own commands, and may not have said so yet. */
            const uint64_t d = watching && b_near <= hi && b_near != band ? load_acquire_gpu_u64(&RK_SIM_DONE(board, b_near))
                                                                          : ~(uint64_t)0;
            /* One ballot a load, as the relay counts its reads: a vote a
             * command was a chain of them on the way of every read (H200,
             * session 23: single step 4.37 -> 4.31 us, heat3d 64^3's 7.12 ->
             * 7.07 us). */
            int n = rk_sim_whole_commands_(w0, w1, part, seq);
            if (n > RK_SIM_BATCH) n = RK_SIM_BATCH;
            if (n) {
                if (part < n) ((uint32_t *)b->buffer[part])[word] = (uint32_t)w0;
                if (RK_SIM_SECOND && RK_SIM_PARTS + part < n) ((uint32_t *)b->buffer[RK_SIM_PARTS + part])[word] = (uint32_t)w1;
                /* Not the least of them (five rounds of shuffles, on the way of
                 * every command) but the larger of the two ticks the band
                 * compares it with that they are all past (need >=
                 * shared_tick; 0: neither): a lower bound, which can only
                 * make the band wait or look where it need not have. */
                const uint64_t least = warp_all(d >= need) ? need : warp_all(d >= shared_tick) ? shared_tick : 0u;
                if (tid == 0) {
                    b->n = n;
                    b->near = watching ? least : 0u;
                    b->early = 0;
                    if (RK_SIM_TRACE) {
                        const uint64_t now = rk_sim_now_(), gap = (polled - prev_found) / 8u;
                        b->found = now;
                        b->polled = (polled & 0xffffffffu) << 32 | (gap < 0xffffu ? gap : 0xffffu) << 16 |
                                    (looks < 0xffu ? looks : 0xffu) << 8 | (uint32_t)n << 4;
                    }
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
    const uint64_t near = *(volatile const uint64_t *)&b->near;
    if (!RK_SIM_TRACE && near < need) return; /* traced, it returns below, after the stamp of what it knew */
    for (int i = 0; i + 1 < b->n; i++) {
        const uint32_t *h = (const uint32_t *)b->buffer[i];
        const uint32_t op = h[RK_SIM_W_OP];
        int qb = 0, qe = 0;
        if (op == RK_SIM_OP_STEP) {
            const uint32_t *q = (const uint32_t *)b->buffer[i + 1];
            if (h[RK_SIM_W_ARG] != 1u || !rk_sim_query_behind_(q, rb, re, &qb, &qe) || !(q[RK_SIM_W_ARG] & RK_SIM_ARG_NEXT))
                return;
            /* Traced: what the band knew of its neighbours (their least tick above, the one it needs below). */
            if (RK_SIM_TRACE && lane_id() == 0)
                rk_sim_stamp_(board, seq + (uint32_t)i + 1u, RK_SIM_T_DECIDING,
                              b->polled | (near >= need ? 1u : 0u));
            if (near < need) return;
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
 * before it next waits or reads the log: each saying is
 * a release by warp 1, which the block's next barrier waits for, so saying
 * it at once put a release on the way of the command behind (the step
 * after an impulse far away, in the wave's mixed workload). Any band that
 * waits has said everything it finished, so no two wait for each other. */
RK_DEVICE void rk_sim_band_loop_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                 uint64_t tick, uint64_t steps, int bands, int relay, int halo) {
    RK_SHARED rk_sim_batch batches[RK_SIM_READ_BUFFERS];
    RK_SHARED rk_sim_scalars scalars;
    rk_sim_state local = *s; /* what steps and region commands see: the scalars in shared memory */
    local.scalars = &scalars;
    rk_sim_copy_scalars_(&scalars, s->scalars, thread_idx_x());
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
    /* Warp 2 counts the band in for a step's answer (an atomic, whose
     * return the warp waits for), so that warp 0 reads the next batch at
     * once, as the wave's former kernel did (H200, session 26: heat3d
     * 64^3's mixed workload 591-600 against 617-622 us with thread 0). */
    const int gatherer = !RK_SIM_GATHER_WARP0 && block_dim_x() > 64 ? 64 : 0;
    uint64_t said = 0; /* the finisher: the last tick it said the band finished (the launch's, before the first read) */
    int answered_ahead = 0; /* the command after this one was answered with it */
    int at = 0, n = 0;      /* the next command's place in the batch; the batch's commands */
    uint64_t read_at = 0;   /* RK_SIM_TRACE: when the batch was read */
    int in_use = 0;         /* batches[in_use]: the batch being applied (the other, if any, is the next read's) */
    for (;; seq++) {
        if (at == n) {
            if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
            /* With two buffers, warp 0 fills the other one at once: every
             * warp has passed the barrier after the last read, so is done
             * with the batch before it. With one, everyone must be done
             * with the last batch's words first. */
            if (RK_SIM_READ_BUFFERS == 1) sync_threads();
#ifdef RK_SIM_TEST_LAG
            /* A test aid: band 1 lags, pausing RK_SIM_TEST_LAG times (a
             * yield of its thread on the CPU) before each read of the log,
             * so that the relay's reuse of log slots is put to the test
             * (tests/sim/CMakeLists.txt). */
            if (band == 1 && tid == 0)
                for (int i = 0; i < RK_SIM_TEST_LAG; i++) sleep_ns(100);
#endif
            in_use = RK_SIM_READ_BUFFERS - 1 - in_use; /* the other buffer (the same with one) */
            rk_sim_batch *const next = &batches[in_use];
            if (relay) {
                rk_sim_read_batch_(board, seq, next, band, near_lo, near_hi, need, shared_tick,
                                   RK_SIM_TRACE ? batches[RK_SIM_READ_BUFFERS - 1 - in_use].found : 0u);
                if (RK_SIM_QUERY_AHEAD >= 3 && tid < 32) rk_sim_answer_early_(&local, mb, board, next, seq, rb, re, halo, need, steps);
                sync_threads();
                n = next->n;
                near = next->near;
                if (RK_SIM_TRACE) read_at = rk_sim_now_();
            } else {
                if (tid == 0) next->early = 0;
                rk_sim_read_(mb, seq, (uint32_t *)next->buffer[0], 1);
                if (tid == 0) rk_sim_taken_(mb, board, seq, bands);
                n = 1;
                near = 0;
            }
            at = 0;
        }
        const rk_sim_batch *const batch = &batches[in_use];
        const uint32_t *words = (const uint32_t *)batch->buffer[at];
        const uint32_t *after = at + 1 < n ? (const uint32_t *)batch->buffer[at + 1] : 0;
        at++;
        uint32_t op = words[RK_SIM_W_OP];
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
             * write next) waits for its mark, released after the block's
             * writes; the others go on at once. */
            int b = (int)words[RK_SIM_W_BEGIN], e = (int)words[RK_SIM_W_END];
            if (!(words[RK_SIM_W_ARG] & RK_SIM_ARG_QUERY)) rk_sim_reach_rows_(b, e, halo, s->rows, &b, &e);
            if (b < re && e > rb) {
                /* The relay block's applier may be waiting for this band
                 * to say it finished what came before (any band that
                 * waits has said everything it finished). */
                sync_threads();
                if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
                /* The mark says seq or a later command: the host may have
                 * sent a ring's length more once seq was answered, and the
                 * relay applied one in the same slot while this band lagged
                 * (its writes are released after seq's, by the same thread). */
                if (tid == 0) {
                    const uint64_t *mark = &board->released[seq & (RK_SIM_SLOTS - 1u)];
                    while ((int32_t)((uint32_t)load_relaxed_u64(mark) - seq) < 0) rk_sim_pause_();
                    rk_sim_fence_();
                }
                sync_threads();
            }
            tick++; /* applied by the relay's block: nothing more to do here */
        } else if (answered_ahead) {
            answered_ahead = 0; /* a query, answered with the step before it */
            tick++;
        } else if (op == RK_SIM_OP_STEP) {
            const uint32_t count = words[RK_SIM_W_ARG];
            int qb = 0, qe = 0, next = 0;
            if (RK_SIM_QUERY_AHEAD && count == 1u && rk_sim_query_behind_(after, rb, re, &qb, &qe)) {
                answered_ahead = 1;
                next = RK_SIM_QUERY_AHEAD >= 2 && (after[RK_SIM_W_ARG] & RK_SIM_ARG_NEXT) != 0u;
            }
            if (RK_SIM_TRACE && band == RK_SIM_TRACE_BAND && tid == 0) rk_sim_stamp_(board, seq, RK_SIM_T_B_READ, read_at);
            for (uint32_t k = 0; k < count; k++) {
                const uint64_t want = k == 0 ? need : tick;
                if (k > 0 || near < want) {
                    if (tid == finisher) rk_sim_say_done_(board, band, tick, &said); /* before it waits */
                    rk_sim_await_bands_(board, near_lo, near_hi, want, bands, 0, band);
                }
                if (k + 1u == count) RK_SIM_BAND_STAMP(board, band, 0, seq, RK_SIM_T_B_READY);
                if (next) {
                    /* An RK_SIM_QUERY_NEXT: answered now, one step ahead of
                     * the rows (the bands near have finished the step
                     * before, and none writes what it reads before this
                     * band's step), then the step, once its reads are done
                     * -- unless warp 0 answered it at the read. */
                    if (batch->early != at) {
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
                if (k + 1u == count) RK_SIM_BAND_STAMP(board, band, 0, seq, RK_SIM_T_B_STEPPED);
                if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
                if (k + 1u == count) RK_SIM_BAND_STAMP(board, band, finisher, seq, RK_SIM_T_B_SAID);
            }
            if (count == 0) {
                tick++;
                if (tid == finisher) rk_sim_say_done_(board, band, tick, &said);
            }
            shared_tick = tick;
            need = tick;
            if (tid == gatherer) rk_sim_gather_(mb, board, seq, bands, 0);
            RK_SIM_BAND_STAMP(board, band, gatherer, seq, RK_SIM_T_B_GATHERED);
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
            if (op != RK_SIM_OP_STOP) rk_sim_copy_scalars_(&scalars, s->scalars, thread_idx_x());
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
                const int seen = rb_reach >= near_rb && re_reach <= near_re && near >= shared_tick;
                if (acquired < shared_tick && !query && !seen) {
                    int lo = 0, hi = 0;
                    rk_sim_reach_(begin, end, halo, bands, s->rows, &lo, &hi);
                    if (tid == finisher) rk_sim_say_done_(board, band, tick - 1u, &said); /* before it waits */
                    if (rk_sim_await_bands_(board, lo, hi, shared_tick, bands, 1, band)) acquired = shared_tick;
                }
                rk_sim_region_command_(&local, mb, board, words, seq, bands, rb, re, steps);
            }
            if (mine && !query && tid == finisher) rk_sim_say_done_(board, band, tick, &said);
        }
    }
}

/* The persistent kernel: `relay` says whether the last block relays (1)
 * and its second warp applies (2: sim_applier.c). */
RK_DEVICE void rk_sim_persistent_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                       uint64_t tick, uint64_t steps, int relay, int halo) {
    const int bands = grid_dim_x() - (relay ? 1 : 0);
    if (block_idx_x() < bands) {
        rk_sim_band_loop_(s, mb, board, seq, tick, steps, bands, relay, halo);
    } else {
        rk_sim_applier_block_(s, mb, board, seq, tick, steps, bands, halo, relay == 2);
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
