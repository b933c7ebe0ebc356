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

/* A polling warp's pause between two rounds of loads, by lane 0 only: the
 * warp's next vote waits for it anyway, and on the CPU, where a lane is a
 * thread of its own, 32 lanes stepping aside would yield the core 32 times
 * a round (tests on a loaded machine slowed tenfold). */
RK_DEVICE void rk_sim_nap_(unsigned ns) {
#if defined(__CUDACC_RTC__)
    /* __nanosleep may end microseconds after a short request (a traced relay
     * waited 1.5-2 us per 32 ns nap; spinning made an inject 5.1 -> 3.2 us on
     * an H200), so the GPU spins on the global timer instead. */
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
RK_DEVICE int rk_sim_count_in_(int *count) {
#if defined(__CUDACC_RTC__)
    int old;
    asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(count) : "memory");
    return old;
#else
    return __atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
#endif
}

/* Answers command seq (thread 0 of the block that completes it): tagged
 * words, no release (sim_protocol.h says why), and a mark on the board for
 * the relay. `strong`: a release at system scope first, for the commands
 * after which the host copies memory (a fence, a stop, a global command). */
RK_DEVICE void rk_sim_answer_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, uint64_t value, int strong) {
    const uint32_t slot = seq & (RK_SIM_SLOTS - 1u);
    const uint64_t tag = (uint64_t)seq << 32;
    store_relaxed_u64(&mb->answer[slot][0], tag | (value & 0xffffffffu));
    store_relaxed_u64(&mb->answer[slot][1], tag | (value >> 32));
    if (strong) store_release_u64(&mb->done[slot], (uint64_t)seq);
    else store_relaxed_u64(&mb->done[slot], (uint64_t)seq);
    store_relaxed_u64(&board->answered[slot], (uint64_t)seq);
}

/* Thread 0 of one of `parts` bands that applied command seq adds its answer;
 * the last to arrive answers. Nothing the bands wrote needs ordering before
 * the answer (later commands reach those rows through the bands' finished
 * marks, the host through a fence command), only the sum before the count:
 * the count's release and acquire order it. */
RK_DEVICE void rk_sim_gather_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, int parts, uint64_t value) {
    if (parts == 1) {
        rk_sim_answer_(mb, board, seq, value, 0);
        return;
    }
    const uint32_t slot = seq & (RK_SIM_SLOTS - 1u);
    if (value != 0u) atomic_add_u64(&board->acc[slot], value);
    if (rk_sim_count_in_(&board->arrived[slot]) == parts - 1) {
        const uint64_t total = atomic_add_u64(&board->acc[slot], 0);
        atomic_add_u64(&board->acc[slot], (uint64_t)0 - total);
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
            const uint64_t w = tid < RK_SIM_CMD_WORDS ? load_relaxed_u64(&slot[tid]) : (uint64_t)seq << 32;
            if (warp_all((uint32_t)(w >> 32) == seq) || !wait) {
                if (tid < RK_SIM_CMD_WORDS) words[tid] = (uint32_t)w;
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

/* The band's share of a region command's rows [begin, end): runs the
 * handler and adds thread 0's answer. */
RK_DEVICE void rk_sim_region_command_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board,
                                      const uint32_t *words, uint32_t seq, int band, int bands, uint64_t steps) {
    const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
    const int b0 = RK_SIM_BAND_OF_ROW(begin, bands, s->rows), b1 = RK_SIM_BAND_OF_ROW(end - 1, bands, s->rows);
    if (band < b0 || band > b1) return;
    const int rb = RK_SIM_BAND_FIRST(band, bands, s->rows), re = RK_SIM_BAND_FIRST(band + 1, bands, s->rows);
    rk_sim_region r;
    r.row_begin = begin > rb ? begin : rb;
    r.row_end = end < re ? end : re;
    r.tid = thread_idx_x();
    r.threads = block_dim_x();
    r.step = steps;
    const uint64_t a = rk_sim_dispatch_(s, &r, words[RK_SIM_W_OP], &words[RK_SIM_W_PAYLOAD]);
    sync_threads();
    if (r.tid == 0) rk_sim_gather_(mb, board, seq, b1 - b0 + 1, a);
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
        rk_sim_region r;
        r.row_begin = 0;
        r.row_end = s->rows;
        r.tid = thread_idx_x();
        r.threads = block_dim_x();
        r.step = steps;
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

/* The bands [lo, hi] whose rows are within halo rows of [begin, end). */
RK_DEVICE void rk_sim_reach_(int begin, int end, int halo, int bands, int rows, int *lo, int *hi) {
    if (halo <= 0) {
        *lo = 0;
        *hi = bands - 1;
        return;
    }
    const int b = begin - halo < 0 ? 0 : begin - halo, e = end + halo > rows ? rows : end + halo;
    *lo = RK_SIM_BAND_OF_ROW(b, bands, rows);
    *hi = RK_SIM_BAND_OF_ROW(e - 1, bands, rows);
}

/* The whole block: returns once bands lo .. hi have finished tick `tick`
 * (warp 0 polls, a lane per band; the fence makes their writes visible).
 * With `all`, also says whether every band had (block-uniform), so that a
 * band can skip the wait for the commands that follow until the next step. */
RK_DEVICE int rk_sim_await_bands_(const rk_sim_board *board, int lo, int hi, uint64_t tick, int bands, int all) {
    RK_SHARED int every_band_done;
    if (thread_idx_x() < 32) {
        const int first = all ? 0 : lo, last = all ? bands - 1 : hi;
        int every = 1;
        for (;;) {
            int done = 1;
            every = 1;
            for (int b = first + lane_id(); b <= last; b += 32) {
                const int d = load_relaxed_u64(&board->band_done[b]) >= tick;
                every &= d;
                if (b >= lo && b <= hi) done &= d;
            }
            if (warp_all(done)) break;
            rk_sim_pause_();
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
    store_release_gpu_u64(&board->band_done[band], tick); /* cumulative: the block's writes, ordered by the barrier */
}

/* The relay's warp: once every band has read command `oldest`, the last
 * command all of them have read (the slowest band's). */
RK_DEVICE uint32_t rk_sim_slowest_band_(const rk_sim_board *board, int bands, uint32_t oldest) {
    for (;;) {
        int ahead = 0x7fffffff; /* how far past oldest the slowest band is */
        for (int b = lane_id(); b < bands; b += 32) {
            const int d = (int)((uint32_t)load_relaxed_u64(&board->band_taken[b]) - oldest);
            ahead = d < ahead ? d : ahead;
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
 * answered, and a little longer, or RK_SIM_ANSWER_POLLS looks at most. */
RK_DEVICE void rk_sim_await_answer_(const rk_sim_board *board, uint32_t seq) {
    const uint64_t *mark = &board->answered[seq & (RK_SIM_SLOTS - 1u)];
    for (int i = 0; i < RK_SIM_ANSWER_POLLS; i++) {
        if ((uint32_t)load_relaxed_u64(mark) == seq) {
            rk_sim_nap_(RK_SIM_ANSWER_PAUSE_NS);
            return;
        }
        rk_sim_pause_();
    }
}

/* The relay's warp: copies commands seq, seq + 1, ... from the host's ring
 * to the log until the STOP command, two commands per read of the bus (lanes
 * 0-15 the words of one, 16-31 of the next). A log slot is written again
 * only once every band has read the command it held; the host's slot once
 * the command is done (it was copied before: no taken word with a relay).
 *
 * When it reads: a host that waits for an answer writes its next command
 * only once the answer has crossed the bus, and a read that gets there
 * first finds nothing and holds the next one back a whole bus round trip (a
 * warp has one read of host memory in flight; more slow the whole GPU). So
 * before reading again it waits, from the L2, for the last command it copied
 * to be answered (rk_sim_await_answer_) -- except after a step, whose answer
 * is far off: then it reads once at once, for a command sent right behind. */
RK_DEVICE void rk_sim_relay_(rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, int bands) {
    const int lane = lane_id(), part = lane / RK_SIM_CMD_WORDS, word = lane % RK_SIM_CMD_WORDS;
    uint32_t known = seq - 1u; /* every band has read the commands before seq; asked again only when needed */
    uint32_t awaited = 0;      /* the last command copied; 0: none yet */
    int after_step = 1;
    for (;;) {
        if (awaited != 0u && !after_step) rk_sim_await_answer_(board, awaited);
        uint64_t w;
        int n = 0;
        for (;;) {
            w = load_relaxed_u64(&mb->cmd[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]);
            const int tagged = (uint32_t)(w >> 32) == seq + (uint32_t)part;
            if (warp_all(part != 0 || tagged)) n = warp_all(part != 1 || tagged) ? 2 : 1;
            if (n) {
                break;
            }
            if (after_step && awaited != 0u) {
                rk_sim_await_answer_(board, awaited); /* the one read at once found nothing */
                after_step = 0;
            } else {
                rk_sim_pause_();
            }
        }
        const uint32_t op0 = (uint32_t)shfl_i32((int)(uint32_t)w, RK_SIM_W_OP);
        if (op0 == RK_SIM_OP_STOP) n = 1; /* nothing follows a stop */
        const uint32_t last = seq + (uint32_t)n - 1u;
        if ((int32_t)(known - (last - RK_SIM_SLOTS)) < 0) known = rk_sim_slowest_band_(board, bands, last - RK_SIM_SLOTS);
        if (part < n) store_relaxed_u64(&board->log[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word], w);
        if (op0 == RK_SIM_OP_STOP) return;
        const uint32_t op_last = (uint32_t)shfl_i32((int)(uint32_t)w, (n - 1) * RK_SIM_CMD_WORDS + RK_SIM_W_OP);
        if (op_last == RK_SIM_OP_STOP) return;
        after_step = op_last == RK_SIM_OP_STEP;
        awaited = last;
        seq = last + 1u;
    }
}

/* Warp 0 reads the words of command seq from the log (lane w word w) once
 * every tag says seq; then the whole block has them in words[]. */
RK_DEVICE void rk_sim_read_log_(const rk_sim_board *board, uint32_t seq, uint32_t *words) {
    const int tid = thread_idx_x();
    if (tid < 32) {
        const uint64_t *slot = board->log[seq & (RK_SIM_SLOTS - 1u)];
        for (;;) {
            const uint64_t w = tid < RK_SIM_CMD_WORDS ? load_relaxed_u64(&slot[tid]) : (uint64_t)seq << 32;
            if (warp_all((uint32_t)(w >> 32) == seq)) {
                if (tid < RK_SIM_CMD_WORDS) words[tid] = (uint32_t)w;
                break;
            }
            rk_sim_pause_();
        }
    }
    sync_threads();
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

/* The bands' loop: every band reads every command, in order, from seq on;
 * tick: the ticks before seq; steps: the steps before seq. */
RK_DEVICE void rk_sim_band_loop_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                 uint64_t tick, uint64_t steps, int bands, int relay, int halo) {
    RK_SHARED uint64_t buffer[RK_SIM_CMD_WORDS / 2]; /* 8-byte aligned: the payload is a user's struct */
    RK_SHARED rk_sim_scalars scalars;
    uint32_t *words = (uint32_t *)buffer;
    rk_sim_state local = *s; /* what steps and region commands see: the scalars in shared memory */
    local.scalars = &scalars;
    rk_sim_copy_scalars_(&scalars, s->scalars);
    const int band = block_idx_x(), tid = thread_idx_x();
    const int rb = RK_SIM_BAND_FIRST(band, bands, s->rows), re = RK_SIM_BAND_FIRST(band + 1, bands, s->rows);
    int near_lo = 0, near_hi = 0;
    rk_sim_reach_(rb, re, halo, bands, s->rows, &near_lo, &near_hi);
    uint64_t shared_tick = tick; /* the last step or global command: what region commands wait for */
    uint64_t acquired = 0;       /* every band has been seen past this tick (a fence after) */
    for (;; seq++) {
        sync_threads(); /* everyone is done with the last command's words */
        if (relay) {
            rk_sim_read_log_(board, seq, words);
            if (tid == 0) store_relaxed_u64(&board->band_taken[band], (uint64_t)seq); /* words used: in shared memory */
        } else {
            rk_sim_read_(mb, seq, words, 1);
            if (tid == 0) rk_sim_taken_(mb, board, seq, bands);
        }
        const uint32_t op = words[RK_SIM_W_OP];
        if (op == RK_SIM_OP_STEP) {
            const uint32_t count = words[RK_SIM_W_ARG];
            for (uint32_t k = 0; k < count; k++) {
                rk_sim_await_bands_(board, near_lo, near_hi, tick, bands, 0);
                rk_sim_region r;
                r.row_begin = rb;
                r.row_end = re;
                r.tid = tid;
                r.threads = block_dim_x();
                r.step = steps;
                rk_sim_step_(&local, &r);
                steps++;
                tick++;
                sync_threads();
                if (tid == 0) rk_sim_finished_(board, band, tick);
            }
            if (count == 0) {
                tick++;
                if (tid == 0) rk_sim_finished_(board, band, tick);
            }
            shared_tick = tick;
            if (tid == 0) rk_sim_gather_(mb, board, seq, bands, 0);
        } else if (rk_sim_is_global_(words)) {
            tick++;
            if (band == 0) {
                rk_sim_await_bands_(board, 0, bands - 1, tick - 1, bands, 0);
                const uint64_t a = rk_sim_global_command_(s, words, steps); /* on the scalars in device memory */
                if (tid == 0) {
                    rk_sim_finished_(board, 0, tick);
                    rk_sim_answer_(mb, board, seq, a, 1);
                }
            } else {
                rk_sim_await_bands_(board, 0, 0, tick, bands, 0);
                if (tid == 0) rk_sim_finished_(board, band, tick);
            }
            if (op != RK_SIM_OP_STOP) rk_sim_copy_scalars_(&scalars, s->scalars);
            shared_tick = tick;
            if (op == RK_SIM_OP_STOP) return;
        } else {
            tick++;
            const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
            if (begin < re && end > rb) {
                if (acquired < shared_tick) {
                    int lo = 0, hi = 0;
                    rk_sim_reach_(begin, end, halo, bands, s->rows, &lo, &hi);
                    if (rk_sim_await_bands_(board, lo, hi, shared_tick, bands, 1)) acquired = shared_tick;
                }
                rk_sim_region_command_(&local, mb, board, words, seq, band, bands, steps);
            }
            if (tid == 0) rk_sim_finished_(board, band, tick);
        }
    }
}

/* The persistent kernel: `relay` says whether the last block relays. */
RK_DEVICE void rk_sim_persistent_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                       uint64_t tick, uint64_t steps, int relay, int halo) {
    const int bands = grid_dim_x() - (relay ? 1 : 0);
    if (block_idx_x() < bands) {
        rk_sim_band_loop_(s, mb, board, seq, tick, steps, bands, relay, halo);
    } else if (thread_idx_x() < 32) {
        rk_sim_relay_(mb, board, seq, bands);
    }
}

/* Traditional: one step over the band of this block (of `bands`); the launch
 * for the last step of command seq (seq != 0) answers it. */
RK_DEVICE void rk_sim_step_body_(const rk_sim_state *s, rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq,
                                 uint64_t step) {
    const int bands = grid_dim_x(), band = block_idx_x();
    rk_sim_region r;
    r.row_begin = RK_SIM_BAND_FIRST(band, bands, s->rows);
    r.row_end = RK_SIM_BAND_FIRST(band + 1, bands, s->rows);
    r.tid = thread_idx_x();
    r.threads = block_dim_x();
    r.step = step;
    rk_sim_step_(s, &r);
    sync_threads();
    if (seq != 0u && r.tid == 0) rk_sim_gather_(mb, board, seq, bands, 0);
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
    rk_sim_region_command_(s, mb, board, words, seq, first_band + block_idx_x(), bands, steps);
}
