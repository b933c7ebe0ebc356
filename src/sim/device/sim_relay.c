/* The relay: the last block of a persistent simulation on a GPU. Its
 * first warp reads the host's ring over the bus and copies the commands to
 * the log in device memory, where the bands read them (sim_bands.c). This
 * file holds that warp's reads of the ring, its wait for answers and the
 * log's stores; sim_applier.c puts them together with the warp that
 * applies short commands. When it reads is the delicate part:
 * docs/simulations.md says what each knob below measured. Compiled after
 * sim_device.c and before sim_applier.c and sim_bands.c, in the DSL. */

/* The relay's warp: how far past command `from` the slowest of the readers
 * (the bands' words, then the relay block's applier's) has read, negative
 * if it has not read it: one look at their words. */
RK_DEVICE int rk_sim_readers_past_(const rk_sim_board *board, int readers, uint32_t from) {
    int ahead = 0x7fffffff;
    for (int base = 0; base < readers; base += 32 * RK_SIM_LOADS_AHEAD) {
        uint64_t v[RK_SIM_LOADS_AHEAD];
        rk_sim_band_loads_(board, 1, base, readers - 1, v);
        for (int k = 0; k < RK_SIM_LOADS_AHEAD; k++) {
            if (base + 32 * k + lane_id() >= readers) continue;
            const int d = (int)((uint32_t)v[k] - from);
            ahead = d < ahead ? d : ahead;
        }
    }
    for (int k = 16; k > 0; k /= 2) {
        const int other = shfl_xor_i32(ahead, k);
        ahead = other < ahead ? other : ahead;
    }
    return ahead;
}

/* The relay's warp: once every reader has read command `oldest`, the last
 * command all of them have read (the slowest one's). */
RK_DEVICE uint32_t rk_sim_slowest_reader_(const rk_sim_board *board, int readers, uint32_t oldest) {
    for (;;) {
        const int ahead = rk_sim_readers_past_(board, readers, oldest);
        if (ahead >= 0) return oldest + (uint32_t)ahead;
        rk_sim_pause_();
    }
}

/* The relay's warp: the last command every reader has read, or `known` if
 * that is later -- one look, no wait. */
RK_DEVICE uint32_t rk_sim_least_taken_(const rk_sim_board *board, int readers, uint32_t known) {
    const int ahead = rk_sim_readers_past_(board, readers, known);
    return ahead > 0 ? known + (uint32_t)ahead : known;
}

/* The relay's warp, after a read of the host's ring found nothing: a host
 * that waits for an answer writes its next command only once the answer has
 * crossed the bus, and a read that gets there first finds nothing and holds
 * the next one back a whole bus round trip (a warp has one read of host
 * memory in flight). So it waits, from the L2, until command seq has been
 * answered (or RK_SIM_ANSWER_POLLS looks at most), and then until
 * RK_SIM_READ_AFTER_ANSWER_NS after the answer left, by the clock the
 * answering thread put in the mark (sim_device.c, rk_sim_answer_). Timed
 * from the mark's sight instead (RK_SIM_READ_AFTER_ANSWER_NS=0: a pause of
 * RK_SIM_ANSWER_PAUSE_NS), the read left whenever this warp's loads came
 * back, late behind its follow-up read of the host's ring still in flight:
 * the wave's mixed workload with queries waited 333-343 against 347-354 us
 * (H200, session 27; 350 ns: too early, 433 us; 400-550 ns alike). A
 * step's answer keeps its own pause (RK_SIM_STEP_PAUSE_NS). */
#ifndef RK_SIM_STEP_AWAITS
#define RK_SIM_STEP_AWAITS 4 /* a step's answer: this many times RK_SIM_ANSWER_POLLS looks at most; 0: until it comes */
#endif
#ifndef RK_SIM_STEP_PAUSE_NS
#define RK_SIM_STEP_PAUSE_NS 100u /* after a step's answer, before the relay reads the host's ring again */
#endif
RK_DEVICE void rk_sim_await_answer_(const rk_sim_board *board, uint32_t seq, int step) {
    const uint64_t *mark = &board->answered[seq & (RK_SIM_SLOTS - 1u)];
    /* A step's answer may be a whole step away (heat3d 64^3: 12 us), and
     * its pause is its own (RK_SIM_STEP_PAUSE_NS). */
    const int polls = !step ? RK_SIM_ANSWER_POLLS : RK_SIM_STEP_AWAITS > 0 ? RK_SIM_STEP_AWAITS * RK_SIM_ANSWER_POLLS : 0x7fffffff;
    const unsigned pause = step ? RK_SIM_STEP_PAUSE_NS : RK_SIM_ANSWER_PAUSE_NS;
    for (int i = 0; i < polls; i++) {
        const uint64_t m = load_relaxed_u64(mark);
        if (warp_all((uint32_t)m == seq)) {
            if (RK_SIM_TRACE && lane_id() == 0) rk_sim_stamp_((rk_sim_board *)board, seq, RK_SIM_T_MARK_SEEN, rk_sim_now_());
            if (RK_SIM_READ_AFTER_ANSWER_NS > 0u && !step) {
                const int left = (int)(RK_SIM_READ_AFTER_ANSWER_NS - ((uint32_t)rk_sim_now_() - (uint32_t)(m >> 32)));
                if (left > 0) rk_sim_nap_((unsigned)left);
                return;
            }
            rk_sim_nap_(pause);
            return;
        }
        rk_sim_pause_();
    }
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
 * a load rather than a shuffle a command, on the way of the log's store.
 * Without a stop in the read (a warp-uniform test), n at once: the loop
 * below compiled to about 90 instructions, most of them dependent, and a
 * read took 0.22 us from the ring to the log against the former kernel's
 * 0.03 (traced side by side, H200, session 23; 0.16 with this test, the
 * wave's mixed workload with queries waited 370-372 against 381-388 us). */
RK_DEVICE int rk_sim_upto_stop_(uint64_t w0, uint64_t w1, int word, int n) {
    const unsigned stop0 = warp_ballot(word == RK_SIM_W_OP && (uint32_t)w0 == RK_SIM_OP_STOP);
    const unsigned stop1 = RK_SIM_SECOND ? warp_ballot(word == RK_SIM_W_OP && (uint32_t)w1 == RK_SIM_OP_STOP) : 0u;
    if ((stop0 | stop1) == 0u) return n;
    int upto = n;
    for (int i = n - 1; i >= 0; i--)
        if ((((RK_SIM_LOAD_OF(i) ? stop1 : stop0) >> (RK_SIM_PART_OF(i) * RK_SIM_WORDS + RK_SIM_W_OP)) & 1u) != 0u)
            upto = i + 1;
    return upto;
}

/* The relay's warp (and a band's, reading the log), with lane l holding
 * word l % W of command seq + l / W in w0 and, for W = 16, of seq + 2 + l /
 * 16 in w1 (W = RK_SIM_WORDS, sim_protocol.h): how many commands from seq
 * on are whole (every word tagged with its number). One ballot a load and
 * the count from its bits, as the showcase's relay; a vote per command, as
 * before, was a chain of dependent warp-wide instructions on the way of
 * every command (with the one-store log copy below: the wave's inject
 * applied 2.94 -> 2.82 us, mixed with queries waited 448 -> 422 us, H100,
 * session 19). The bands took it in session 23 (the H100 of session 19
 * had measured heat3d's step worse with it, not understood; the H200 now
 * measures it better). */
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
 * Measured on the H100 (docs/simulations.md, session 11, with the former
 * relay's 300 ns pause after its own work): the wave's inject applied
 * 3.55 -> 2.69 us p50.
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
 * rk_sim_whole_commands_) into the log, as the host wrote them (it marks
 * those the relay's block applies, sim_exec.c). The whole read at once: a
 * band that reads it then finds a query with the step before it, and
 * answers it with the step. One store a load, each lane its own word (a
 * loop over the commands cost tens of instructions each, on the way of
 * every command); with 16-word commands the later two first: a band takes
 * the commands up to the first one not yet whole, so one that polls
 * between the stores finds fewer rather than a step without the query
 * behind it, which it would answer only after its whole step and another
 * read of the log (traced on the H100: half of the mixed workload's
 * queries, when each command had a store of its own in order). */
RK_DEVICE void rk_sim_log_store_(rk_sim_board *board, uint32_t seq, int m, int part, int word, uint64_t w0, uint64_t w1) {
    for (int c = 0; c < RK_SIM_LOG_COPIES; c++) {
        if (RK_SIM_SECOND && RK_SIM_PARTS + part < m)
            store_relaxed_u64(&board->log[c][(seq + RK_SIM_PARTS + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word], w1);
        if (part < m) store_relaxed_u64(&board->log[c][(seq + (uint32_t)part) & (RK_SIM_SLOTS - 1u)][word], w0);
    }
}
/* After a read that found commands, one more read of the host's ring at
 * once (the follow-up read), for a host that sends without waiting:
 *   0: none (only a staggered read leaves a newer read for the next);
 *   1: after every such read;
 *   2: unless warp 1 answers the last command read;
 *   3: only after a step;
 *   4: unless warp 1 answers the last command read or it is a query: a
 *      host waits for a query's answer, so the read would find nothing,
 *      and while in flight it held up this warp's look at the answer's
 *      mark (traced, H200, session 28: the mark seen 0.83 -> 0.42 us after
 *      the answer, the next command found 2.21 -> 1.86 us after it; the
 *      wave's mixed workload with queries waited 337-339 against 348 us,
 *      three calls).
 * A host that sends queries without waiting has its next ones read once
 * the last one is answered. */
#ifndef RK_SIM_FOLLOW_UP_READ
#define RK_SIM_FOLLOW_UP_READ 4
#endif
#ifndef RK_SIM_STEP_READ_ONCE
#define RK_SIM_STEP_READ_ONCE 1 /* 0: after a step, one more read of the host's ring besides the one in flight */
#endif
