/* The relay: the last block of a persistent simulation on a GPU. Its
 * first warp reads the host's ring over the bus and copies the commands to
 * the log in device memory, where the bands read them (sim_bands.c). This
 * file holds the reads of the ring and the log's stores, which both relay
 * designs use, and the design of sessions 18-20 (RK_SIM_APPLIER=0): the
 * warp decides for each command whether the whole block applies it and
 * answers it. The default design is sim_applier.c's. When it reads is the
 * delicate part: docs/simulations.md says what each knob below measured.
 * Compiled after sim_device.c (the helpers both share) and before
 * sim_applier.c and sim_bands.c, in the DSL. */

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
/* The relay's look at the bands (rk_sim_await_answer_): whether every
 * band was past `busy` in the loads v[] (warp-wide). */
RK_DEVICE int rk_sim_look_done_(const uint64_t *v, uint64_t busy) {
    int all = 1;
    for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) all &= v[k] >= busy;
    return warp_all(all);
}
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
                if (rk_sim_look_done_(v, busy)) {
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

/* RK_SIM_TAKE_LONE (0: off): a command found alone in a read that the
 * block could apply but for busy bands -- a row-wise one or a query -- is
 * the block's all the same: it first waits for the bands it reaches to
 * finish what came before (returns 2, with *wait_lo .. *wait_hi), as the
 * showcase's applier warp does, rather than handing it to the bands. The
 * block remembers the last tick it saw every band past
 * (rk_sim_relay_cmd.seen_tick) and waits for nothing below it: the
 * relay's warp, which decides, learns nothing back from the block.
 * Measured worse on the H100 (session 20: the wave's inject 3.3-3.4
 * against 3.0 us; taking a row-wise command that others came with in the
 * read as well, mixed with queries waited 505-633 against 422 us). */
#ifndef RK_SIM_TAKE_LONE
#define RK_SIM_TAKE_LONE 0
#endif
/* The relay block's shared memory: the command its threads apply together
 * (rk_sim_relay_apply_), set by warp 0 before the barrier that starts them,
 * and what warp 0 decided for each command of its read (indexed by
 * `which`: in shared memory rather than arrays of warp 0's, which a loop
 * kept rolled would put in local memory, whose loads wait behind the
 * warp's read of the host's ring in flight). */
typedef struct rk_sim_relay_cmd {
    uint64_t buffer[RK_SIM_CMD_WORDS / 2]; /* the words; 8-byte aligned: the payload is a user's struct */
    uint64_t steps_of[4];                  /* steps before each command of the read */
    uint32_t seq;
    int which;   /* the command's place in its read */
    uint64_t answered_at; /* when the block answered its last command (the global timer; RK_SIM_SELF_FROM_ANSWER) */
    int go;      /* 1: apply it; 0: the relay has stopped */
    int refresh; /* a global command came since the block's copy of the scalars */
#if RK_SIM_TAKE_LONE
    uint64_t wait_tick_of[4]; /* first wait until bands wait_lo .. wait_hi have finished this tick; 0: no wait */
    uint64_t seen_tick;       /* every band was seen past this tick (by the waiting warp only; 0 at the start) */
    int wait_lo_of[4], wait_hi_of[4];
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

/* RK_SIM_SPARE_READER (1; 0: off): in the relay block's apply the user's
 * handler sees warp 0 as the block's last warp and thread 32 answers. A
 * warp's loads complete in order (session 19, scripts/device-host-reads.sh),
 * and warp 0 often has a read of the host's ring in flight when the block
 * applies (the newer staggered read, the follow-up read): every load it
 * made for the handler -- the wave's inject: cells 0-31 of its bump,
 * heat3d's add: its one cell -- waited for that read, about a bus round
 * trip. The last warp's share of a small command is none.
 * RK_SIM_LONE_ANSWER (0: off; needs RK_SIM_SPARE_READER and more than
 * two warps): r.tid 0 is the only thread of warp 1 with a low r.tid
 * (threads 64, 65, ... are 1, 2, ...): a lane answers only once its warp
 * has done its share, so the answer waited for the memory work of 31
 * other cells (the wave's inject, traced on the H100, session 20: the
 * block's start to its answer 0.70 -> 0.38 us). */
#ifndef RK_SIM_SPARE_READER
#define RK_SIM_SPARE_READER 1
#endif
#ifndef RK_SIM_LONE_ANSWER
#define RK_SIM_LONE_ANSWER 0 /* off until the CUDA tests have run with it (docs/simulations.md, session 20) */
#endif
/* RK_SIM_SELF_FROM_ANSWER (0: off): the relay's read after a command
 * its block answered goes out RK_SIM_SELF_ANSWER_PAUSE_NS after the answer
 * rather than after the block's work: the rest of that work (the other
 * cells of a command, the barrier, the mark) takes as long as the handler
 * makes it, and a read that reaches the host before its next command
 * costs a bus round trip (H100, session 20: with the pause after the
 * work, the wave's inject wanted 50 ns and heat3d's add 300; after the
 * answer, 400 ns suits both, and below about 320 ns whole runs fell into
 * that round trip). */
#ifndef RK_SIM_SELF_ANSWER_PAUSE_NS
#define RK_SIM_SELF_ANSWER_PAUSE_NS 400u
#endif
#ifndef RK_SIM_SELF_FROM_ANSWER
#define RK_SIM_SELF_FROM_ANSWER 0 /* off until the CUDA tests have run with it (docs/simulations.md, session 20) */
#endif
/* The relay block's thread whose r.tid is 0 (it answers): 32 with
 * RK_SIM_SPARE_READER and more than one warp, else 0. */
RK_DEVICE int rk_sim_apply_first_(void) {
    return RK_SIM_SPARE_READER && block_dim_x() > 32 ? 32 : 0;
}
/* This thread's r.tid in the relay block's apply: thread_idx_x() in the
 * order [32, 64 .. T-1, 33 .. 63, 0 .. 31] (RK_SIM_LONE_ANSWER), [32 ..
 * T-1, 0 .. 31] (RK_SIM_SPARE_READER) or as it is. */
RK_DEVICE int rk_sim_apply_tid_(void) {
    const int t = thread_idx_x(), threads = block_dim_x();
    if (RK_SIM_LONE_ANSWER && RK_SIM_SPARE_READER && threads > 64) {
        if (t == 32) return 0;
        if (t >= 64) return t - 63;
        return t > 32 ? threads - 64 + (t - 32) : threads - 32 + t;
    }
    const int first = rk_sim_apply_first_();
    return t >= first ? t - first : t + threads - first; /* no division on the answer's way */
}

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
    const int which = c->which;
    const uint64_t steps = c->steps_of[which];
    const int first = rk_sim_apply_first_(), tid = rk_sim_apply_tid_();
#if RK_SIM_TAKE_LONE
    const uint64_t wait_tick = c->wait_tick_of[which];
    const int wait_lo = c->wait_lo_of[which], wait_hi = c->wait_hi_of[which];
    if (wait_tick != 0u) {
        /* RK_SIM_TAKE_LONE: the bands it reaches finish what came before
         * it first (they need nothing from this block for that: every
         * earlier command is in the log, and earlier ones of this block's
         * are answered); an acquire after (rk_sim_bands_past_). */
        if (thread_idx_x() >= first && thread_idx_x() < first + 32 && wait_tick > c->seen_tick) {
            int past;
            while (!((past = rk_sim_bands_past_(board, bands, wait_lo, wait_hi, wait_tick)) & 2)) rk_sim_pause_();
            if ((past & 1) && thread_idx_x() == first) c->seen_tick = wait_tick;
        }
        sync_threads();
    }
#endif
    if (thread_idx_x() == first) RK_SIM_STAMP(board, seq, RK_SIM_T_BAND, rk_sim_now_()); /* the block has it */
    if (c->refresh) rk_sim_copy_scalars_(local->scalars, s->scalars, tid);
    const uint32_t *words = (const uint32_t *)c->buffer;
    const int begin = (int)words[RK_SIM_W_BEGIN], end = (int)words[RK_SIM_W_END];
    const int whole = (words[RK_SIM_W_ARG] & RK_SIM_ARG_ROWWISE) != 0u;
    const int b0 = whole ? 0 : rk_sim_band_of_row_(begin, bands, s->rows);
    const int b1 = whole ? 0 : rk_sim_band_of_row_(end - 1, bands, s->rows);
    uint64_t sum = 0;
    for (int band = b0; band <= b1; band++) {
        rk_sim_region r = rk_sim_clip_(begin, end, whole ? begin : rk_sim_band_first_(band, bands, s->rows),
                                       whole ? end : rk_sim_band_first_(band + 1, bands, s->rows), steps);
        r.tid = tid;
        sum += rk_sim_dispatch_(local, &r, words[RK_SIM_W_OP], &words[RK_SIM_W_PAYLOAD]);
        if (band == b1 && thread_idx_x() == first) {
            RK_SIM_STAMP(board, seq, RK_SIM_T_ANSWER, rk_sim_now_());
            rk_sim_answer_host_(mb, seq, sum, 0);
            if (RK_SIM_SELF_FROM_ANSWER) c->answered_at = rk_sim_now_();
        }
        sync_threads();
    }
    /* The host's answer first (the first thread's sum is complete after its
     * last call; nothing written needs ordering before it, rk_sim_gather_);
     * then, after a release of the block's writes (ordered before it by the
     * barrier), the mark the bands near the command wait for: by the warp
     * after the answer's, so that neither the relay's warp (it reads the
     * host's ring again) nor the answer's stores wait for the fence. */
    const int marker = block_dim_x() > first + 32 ? first + 32 : block_dim_x() > 32 ? 32 : 0;
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
/* A command short enough that it cannot meet more bands than the limit,
 * whatever its first row, needs no divisions to say so: with every band
 * at least `least` rows high (the partition's floor(rows / bands)), L rows
 * meet at most 1 + ceil((L - 1) / least) bands. An inject of the wave (7
 * rows, bands of 3-4) and any one-row query pass so; longer ones are
 * worked out exactly. */
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
    if (end - begin > (limit - 1) * least + 1) {
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

/* The relay's warp: one read of the host's ring, commands seq + part and
 * (16 words a command) seq + 2 + part, lane l word l % W (both loads in
 * flight at once). */
RK_DEVICE void rk_sim_ring_read_(const rk_sim_mailbox *mb, uint32_t seq, int part, int word, uint64_t *w0, uint64_t *w1) {
    *w0 = load_relaxed_u64(&mb->cmd[(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]);
    *w1 = RK_SIM_SECOND ? load_relaxed_u64(&mb->cmd[(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word]) : 0u;
}

/* The relay's warp: how many of the n commands read (w0, w1 as for
 * rk_sim_whole_commands_) go up to a stop, nothing following one: a ballot
 * a load rather than a shuffle a command, on the way of the log's store. */
RK_DEVICE int rk_sim_upto_stop_(uint64_t w0, uint64_t w1, int word, int n) {
    const unsigned stop0 = warp_ballot(word == RK_SIM_W_OP && (uint32_t)w0 == RK_SIM_OP_STOP);
    const unsigned stop1 = RK_SIM_SECOND ? warp_ballot(word == RK_SIM_W_OP && (uint32_t)w1 == RK_SIM_OP_STOP) : 0u;
    int upto = n;
    for (int i = n - 1; i >= 0; i--)
        if ((((RK_SIM_LOAD_OF(i) ? stop1 : stop0) >> (RK_SIM_PART_OF(i) * RK_SIM_WORDS + RK_SIM_W_OP)) & 1u) != 0u)
            upto = i + 1;
    return upto;
}

/* The relay's warp, with lane l holding word l % W of command seq + l / W
 * in w0 and, for W = 16, of seq + 2 + l / 16 in w1 (W = RK_SIM_WORDS,
 * sim_protocol.h): how many commands from seq on are whole (every word
 * tagged with its number). One ballot a load and the count from its bits,
 * as the showcase's relay; a vote per command, as before, was a chain of
 * dependent warp-wide instructions on the way of every command (with the
 * one-store log copy below: the wave's inject applied 2.94 -> 2.82 us,
 * mixed with queries waited 448 -> 422 us, H100, session 19). A band still
 * counts its read of the log with a vote per command: with the ballot
 * there heat3d 64^3's step was 10.4 -> 13.5-14.8 us in three calls (not
 * understood). */
RK_DEVICE int rk_sim_whole_commands_(uint64_t w0, uint64_t w1, int part, uint32_t seq) {
    const unsigned full = (1u << RK_SIM_WORDS) - 1u; /* RK_SIM_WORDS is 8 or 16 */
    const unsigned b0 = warp_ballot((uint32_t)(w0 >> 32) == seq + (uint32_t)part);
    const unsigned b1 = RK_SIM_SECOND ? warp_ballot((uint32_t)(w1 >> 32) == seq + RK_SIM_PARTS + (uint32_t)part) : 0u;
    int n = 0;
    while (n < 4 && (((RK_SIM_LOAD_OF(n) ? b1 : b0) >> (RK_SIM_PART_OF(n) * RK_SIM_WORDS)) & full) == full) n++;
    return n;
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
/* The relay's warp: the block applies the commands of `take` (bit i:
 * command seq + i, i < m), one after the other, each after a barrier. */
RK_DEVICE void rk_sim_relay_hand_over_(rk_sim_relay_cmd *c, const rk_sim_state *local, const rk_sim_state *s,
                                       rk_sim_mailbox *mb, rk_sim_board *board, uint32_t seq, int m, uint32_t take,
                                       uint32_t fresh, int part, int word, uint64_t w0, uint64_t w1, int bands) {
    for (int i = 0; i < m; i++) {
        if (!((take >> i) & 1u)) continue;
        if (part == RK_SIM_PART_OF(i)) ((uint32_t *)c->buffer)[word] = (uint32_t)(RK_SIM_LOAD_OF(i) ? w1 : w0);
        if (lane_id() == 0) {
            c->which = i;
            c->seq = seq + (uint32_t)i;
            c->go = 1;
            c->refresh = (fresh >> i) & 1u;
        }
        sync_threads(); /* the block applies it */
        rk_sim_relay_apply_(local, s, mb, board, c, bands);
    }
}
#ifndef RK_SIM_FOLLOW_UP_READ
#define RK_SIM_FOLLOW_UP_READ 2 /* 0: only a staggered read leaves a newer read for the next; 1: every read that found commands; 2 and 3: below (rk_sim_relay_) */
#endif
#ifndef RK_SIM_STEP_READ_ONCE
#define RK_SIM_STEP_READ_ONCE 1 /* 0: after a step, one more read of the host's ring besides the one in flight */
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
         * gets there first comes back empty). */
        uint64_t look[RK_SIM_LOADS_AHEAD]; /* RK_SIM_LOOK_LATE: the look's loads, compared after the next read is out */
        int looked = 0, idle_due = 0;
        if (n == 0 && awaited != 0u && !read_again && !last_taken)
            looked = rk_sim_await_answer_(board, awaited, last_step, bands, busy, &idle, look);
        else if (n == 0 && awaited != 0u && last_taken && RK_SIM_SELF_PAUSE_NS > 0u) {
            if (RK_SIM_SELF_FROM_ANSWER) {
                const uint64_t due = c->answered_at + RK_SIM_SELF_ANSWER_PAUSE_NS, now = rk_sim_now_();
                if (now < due) rk_sim_nap_((unsigned)(due - now));
            } else {
                rk_sim_nap_(RK_SIM_SELF_PAUSE_NS);
            }
        }
        while (n == 0) {
            /* Commands seq + part and (16 words a command) seq + 2 + part. */
            if (RK_SIM_TRACE) issued = rk_sim_now_();
            rk_sim_ring_read_(mb, seq, part, word, &w0, &w1);
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
         * and the bookkeeping below follows, on no band's way: it took
         * 0.15 us a command (traced on the H100: found -> in the log 0.42 us
         * for one command, 0.74 for three), where the showcase's relay
         * stores what it read first. */
        const int early = RK_SIM_RELAY_INLINE <= 0 || (RK_SIM_RELAY_LOOK == 0 && idle < busy && !(RK_SIM_TAKE_LONE && n == 1));
        if (early) {
            rk_sim_log_store_(board, seq, rk_sim_upto_stop_(w0, w1, word, n), 0u, part, word, w0, w1);
        }
        uint64_t logged = RK_SIM_TRACE && early ? rk_sim_now_() : 0u; /* the stores, not the decisions after */
        if (RK_SIM_TRACE && lane == 0) {
            const uint64_t deciding = rk_sim_now_();
            for (int i = 0; i < n; i++) rk_sim_stamp_(board, seq + (uint32_t)i, RK_SIM_T_DECIDING, deciding);
        }
        uint32_t take = 0, fresh = 0; /* bit i: the block applies command i; and copies the scalars first */
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
            int wait_lo = 0, wait_hi = 0; /* RK_SIM_TAKE_LONE: the bands the block waits for first */
            const int applied = rk_sim_relay_takes_(board, s, op, arg, begin, end, bands, halo, least, busy, &idle,
                                                    n == 1, &wait_lo, &wait_hi);
            if (applied) {
                take |= 1u << i;
                if (refresh) fresh |= 1u << i;
                refresh = 0;
                if (lane == 0) {
                    c->steps_of[i] = steps;
#if RK_SIM_TAKE_LONE
                    c->wait_tick_of[i] = applied == 2 ? busy : 0u;
                    c->wait_lo_of[i] = wait_lo;
                    c->wait_hi_of[i] = wait_hi;
#endif
                }
            } else {
                busy = tick + ticks;
                if (op > RK_SIM_OP_STEP || (op < RK_SIM_OP_STEP && end == 0)) refresh = 1;
            }
            tick += ticks;
            if (op == RK_SIM_OP_STEP) steps += arg;
            if (op == RK_SIM_OP_STOP) stop = 1; /* nothing follows a stop */
            read_again = op == RK_SIM_OP_STEP; /* a step's answer is more than a bus round trip off */
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
         * a step (its read at once, RK_SIM_STEP_READ_ONCE). (As 2 but not
         * after a query the bands answer: within the noise of 2, H100,
         * session 20.) The follow-up
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
            rk_sim_ring_read_(mb, seq, part, word, &newer0, &newer1);
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
        rk_sim_relay_hand_over_(c, local, s, mb, board, seq, m, take, fresh, part, word, w0, w1, bands);
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
#if RK_SIM_TAKE_LONE
    if (thread_idx_x() == 0) c.seen_tick = 0; /* before the copy's barrier */
#endif
    rk_sim_copy_scalars_(&scalars, s->scalars, thread_idx_x());
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
