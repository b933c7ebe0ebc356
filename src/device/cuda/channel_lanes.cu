/* K2K lanes: several worker warps of a chain stage without a begin turn.
 * Assembled after ring.cu (src/cuda/cuda_ring_source.c); the turn path
 * and the channel protocol are in channel.cu, the design in
 * docs/channels.md ("Lanes").
 *
 * A stage whose only input is one HOLD channel that does not ask for every
 * reply, whose ports are all HOLD and open, and whose host queue is empty,
 * keeps order by positions instead of a begin turn: the message at input
 * position p goes to position p + d on each port (d fixed when lanes
 * begin; a SKIP word where the handler emits nothing), so a warp's pass
 * knows its output positions from its input positions, and each port's
 * order is the input's by construction. Each warp takes its own chunks
 * (warp w: chunks w, w + W, ... as on the turn path) at its own pace: no
 * lock, no shared head. Credit: a pass waits (polls again later) until
 * every port has room for its last position; the ports' TAKEN is reloaded
 * only when the cached copy is short. What stays in input order is the
 * publish turn, a few shared words after the handlers: the input's TAKEN
 * and DELIVERED, the messages' sequence numbers and the reply queue (a
 * handler's failure is answered in input order, as on the turn path).
 * In a block of more than 8 warps the pass's emits wait in an emit buffer
 * (rk_lanes_ebuf, channel.cu) and the warp writes them after the handlers,
 * a few slots a store instead of one slot a lane (rk_lanes_gather). There
 * too, before its publish turn a warp starts copying its next slots into a
 * raw buffer at the end of its staging (cp.async, rk_lanes_prefetch), so
 * that its next pass finds them in shared memory (rk_lanes_poll_raw). In
 * every lanes pass a warp holds its own room in the reply queue
 * (rk_warp_pass.resv), so that a pass without failures touches no shared
 * counter of it.
 *
 * Lanes begin at the begin turn of a pass (every earlier position was
 * given its ports' positions by the turn path) and end at a quiet point:
 * a warp that sees host messages, a link change, a closed port, a pause,
 * a terminate or a deactivate asks to leave (RK_LANES_LEAVING); every warp
 * acknowledges, after which no pass goes past the highest position taken
 * (rk_lanes_hi); once the publish turn reaches it, the ports' heads and the
 * input's begin turn are set there and the turn path goes on. */

#if RK_LANES_BUILT

/* rk_links.lanes_bits (RK__CUDA_LANES_* in cuda_ring_layout.h; 0 for one warp): */
#define RK_LANES_USE 1u /* a chain stage of several warps runs in lanes */

/* RK_LANES_PROFILE (measurement only, RK_CUDA_RING_DEFINES=RK_LANES_PROFILE):
 * lane 0 of each warp counts where its passes' cycles go; the block's sums
 * are printed as the kernel ends ("lanes-prof", rk_lanes_prof_report). */
#ifdef RK_LANES_PROFILE
#define RK_LP_ADD(wi, k, v) (rk_lanes_prof[wi][k] += (rk_u64)(v))
#define RK_LP_STAMP(t) const rk_u64 t = (rk_u64)clock64()
#else
#define RK_LP_ADD(wi, k, v) ((void)0)
#define RK_LP_STAMP(t) ((void)0)
#endif

__device__ __forceinline__ rk_u32 rk_lanes_state() { return *(volatile rk_u32 *)&rk_ch.lanes; }

/* A warp's next position after a pass that ended at pos: the rest of its
 * chunk, or its next chunk (warp w owns chunks w, w + W, ...) when pos
 * ends one. */
__device__ __forceinline__ rk_u64 rk_lanes_next(rk_u64 pos) {
    return (pos & 31u) == 0 ? pos + ((rk_u64)(rk_ch.warps - 1) << 5) : pos;
}

/* A warp's own word that a leaving or entering warp also writes (under the
 * lock, with no pass under way): volatile on every side. */
__device__ __forceinline__ void rk_vstore32(rk_u32 *p, rk_u32 v) { *(volatile rk_u32 *)p = v; }

/* Lane 0 of warp wi, holding the begin turn of input `input` at `first`
 * (every earlier position has begun on the turn path): enters lanes when
 * the kernel is a chain stage (see the top) and no host message waits
 * (host_pub: positions the host has published; all ones while the kernel
 * terminates) and no warp has left rk_worker's loop. True: the pass is not
 * begun; the warp polls again, in lanes. */
__device__ bool rk_lanes_enter(rk_u32 input, rk_u64 first, rk_u64 host_pub) {
    if (!(rk_ch.lanes_bits & RK_LANES_USE) || rk_ch.in_count != 1 || input != 0) return false;
    const rk_in_port &c = rk_ch.in[0];
    if (!c.ring || c.report || c.reply_all) return false;
    rk_ch_lock();
    /* Ports change only under the lock (a connect, a close): checked here. */
    bool ok = rk_lanes_state() == RK_LANES_OFF && !atomicOr(&rk_ch.lanes_out, 0u) && host_pub <= rk_vload(&rk_ch.host_tail) &&
              rk_vload(&c.tail) == first;
    RK_FOR_BITS(p, ok ? rk_ch.ports : 0u) {
        const rk_out_port &o = rk_ch.out[p];
        if (o.status || o.flow != RK_FLOW_HOLD) ok = false;
    }
    if (ok) {
        const rk_u32 W = rk_ch.warps;
        RK_FOR_BITS(p, rk_ch.ports) rk_ch.lanes_d[p] = rk_ch.out[p].head - first;
        /* Each warp starts at its first chunk from first's on (the owner of
         * first's chunk at first): chunk k belongs to warp k % W. */
        const rk_u64 c0 = first >> 5;
        const rk_u32 r32 = (0xffffffffu % W + 1u) % W;
        const rk_u32 c0_mod = ((rk_u32)(c0 >> 32) % W * r32 + (rk_u32)c0 % W) % W;
        for (rk_u32 w = 0; w < W; w++) {
            const rk_u32 dw = (w + W - c0_mod) % W;
            rk_ch.w[w].lnext = dw ? (c0 + dw) << 5 : first;
            rk_ch.w[w].lend = first;
            rk_ch.w[w].lacked = 0;
            rk_vstore32(&rk_ch.w[w].resv, 0u);
#if RK_LANES_RAW_BYTES
            rk_vstore32(&rk_ch.w[w].pf_pos, ~0u);
#endif
        }
        rk_ch.lanes_acks = 0;
        rk_ch.plan_ok = 0;
        __threadfence_block();
        *(volatile rk_u32 *)&rk_ch.lanes = RK_LANES_ON;
    }
    rk_ch_unlock();
    return ok;
}

/* The whole warp, about to leave rk_worker's loop (a pause, or for good):
 * true while the kernel's input runs in lanes (it is asked to leave them,
 * and the warp takes its part until they have: every warp's acknowledgement
 * is needed). Otherwise the warp is counted out, under the lock, so that
 * lanes never begin without it (rk_lanes_enter). */
__device__ bool rk_lanes_hold_exit(rk_u32 lane) {
    rk_u32 hold = 0;
    if (lane == 0 && rk_ch.lanes_bits) {
        rk_ch_lock();
        if (rk_lanes_state() != RK_LANES_OFF) {
            rk_lanes_leave_request();
            hold = 1;
        } else {
            /* An atomic, though under the lock: compute-sanitizer's racecheck
             * does not see the lock order the warps' exits (main, 15 warps). */
            atomicAdd(&rk_ch.lanes_out, 1u);
        }
        rk_ch_unlock();
    }
    return __shfl_sync(0xffffffffu, hold, 0) != 0;
}

/* Lane 0, leaving: the end of the highest pass any warp took (once every
 * warp has acknowledged the request, it moves no more). */
__device__ __forceinline__ rk_u64 rk_lanes_hi() {
    rk_u64 hi = 0;
    for (rk_u32 w = 0; w < rk_ch.warps; w++) {
        const rk_u64 e = rk_vload(&rk_ch.w[w].lend);
        if (e > hi) hi = e;
    }
    return hi;
}

/* Lane 0, leaving: once every warp has acknowledged (no pass goes past
 * rk_lanes_hi any more) and every position below it is published, the
 * turn path takes over there. */
__device__ void rk_lanes_try_leave() {
    if (*(volatile rk_u32 *)&rk_ch.lanes_acks < rk_ch.warps) return;
    __threadfence_block();
    const rk_u64 hi = rk_lanes_hi();
    rk_in_port &c = rk_ch.in[0];
    if (rk_vload(&c.pub) != hi) return;
    rk_ch_lock();
    if (rk_lanes_state() == RK_LANES_LEAVING) {
        RK_FOR_BITS(p, rk_ch.ports) rk_ch.out[p].head = hi + rk_ch.lanes_d[p];
        /* No pass is under way (every one below hi is published): the
         * warps' reply room goes back for the turn path. */
        rk_u64 held = 0;
        for (rk_u32 w = 0; w < rk_ch.warps; w++) {
            held += *(volatile rk_u32 *)&rk_ch.w[w].resv;
            rk_vstore32(&rk_ch.w[w].resv, 0u);
        }
        if (held) rk_ch_add(&rk_ch.cr_promised, (rk_u64)0 - held);
        rk_ch.plan_ok = 0;
        rk_vstore(&c.tail, hi);
        __threadfence_block();
        *(volatile rk_u32 *)&rk_ch.lanes = RK_LANES_OFF;
    }
    rk_ch_unlock();
}

/* Lane 0, a pass of n slots from first (kept: their lanes, a prefix; skip:
 * those of them with no message): cuts it to the room of every port (in
 * positions: a SKIP slot keeps its position) and of the reply queue (in
 * messages: each may fail and be answered), reloading TAKEN and the host's
 * place only when the cached room is short. Returns the lanes kept. */
__device__ rk_u32 rk_lanes_credit(rk_u32 kept, rk_u32 skip, rk_u64 first, rk_u64 cr_cap, const rk_u64 *cr_word) {
    rk_u32 n = __popc(kept);
    RK_FOR_BITS(p, rk_ch.ports) {
        rk_out_port &o = rk_ch.out[p];
        const rk_u64 cap = 1ull << o.log2cap, at = first + rk_vload(&rk_ch.lanes_d[p]);
        rk_u64 taken = rk_vload(&o.taken);
        if (at + n - taken > cap) {
            RK_LP_ADD(threadIdx.x >> 5, RK_LP_RELOADS, 1);
            const rk_u64 t = rk_ch_load(o.ctl + RK_CH_TAKEN);
            if (t > taken) {
                atomicMax((unsigned long long *)&o.taken, (unsigned long long)t);
                taken = t;
            }
        }
        const rk_u64 used = at - taken; /* positions given below this pass, not yet taken */
        const rk_u64 room = used >= cap ? 0 : cap - used;
        if (room < n) n = (rk_u32)room;
    }
    kept &= n >= 32 ? 0xffffffffu : (1u << n) - 1u;
    const rk_u32 real = kept & ~skip;
    rk_u32 want = __popc(real);
    if (!want) return kept;
    /* The reply queue: room for every message (a failure is answered),
     * from the warp's own reservation; only a short one is topped up. */
    rk_warp_pass &wp = rk_ch.w[threadIdx.x >> 5];
    rk_u32 have = *(volatile rk_u32 *)&wp.resv;
    if (have >= want) return kept;
    const rk_u32 need = want - have;
    rk_u64 after = atomicAdd((unsigned long long *)&rk_ch.cr_promised, (unsigned long long)need) + need;
    rk_u64 received = rk_vload(&rk_ch.cr_received);
    rk_u32 got = need;
    if (after - received > cr_cap) {
        const rk_u64 r = *(const volatile rk_u64 *)cr_word;
        if (r > received) {
            atomicMax((unsigned long long *)&rk_ch.cr_received, (unsigned long long)r);
            received = r;
        }
        if (after - received > cr_cap) {
            const rk_u64 over = after - received - cr_cap;
            const rk_u32 back = over >= need ? need : (rk_u32)over;
            atomicAdd((unsigned long long *)&rk_ch.cr_promised, (unsigned long long)0 - back);
            got = need - back;
        }
    }
    have += got;
    rk_vstore32(&wp.resv, have);
    if (have < want) {
        const rk_u32 kept_real = rk_first_bits(real, have);
        kept &= (1u << (__ffs(real & ~kept_real) - 1)) - 1u;
    }
    return kept;
}

#if RK_REGISTER_STAGING
/* rk_run_handler for a lanes pass, whose input never asks for every reply
 * (rk_lanes_enter): the reply is staged only when the handler failed (the
 * only reply a lanes pass sends), not 5 shared stores a lane every pass. */
__device__ __forceinline__ int rk_lanes_run_handler(const rk_ring_args &a, const unsigned char *req,
                                                    unsigned char *resp) {
    uint4 q[RK_IN_STAGE / 16], r[RK_OUT_STAGE / 16];
#pragma unroll
    for (int i = 0; i < RK_IN_STAGE / 16; i++) q[i] = ((const uint4 *)req)[i];
#pragma unroll
    for (int i = 0; i < RK_OUT_STAGE / 16; i++) r[i] = make_uint4(0, 0, 0, 0);
    const int status = rk_call_handler((const unsigned char *)q, (unsigned char *)r, a.state);
    if (status != 0) {
        ((int *)r)[(RK_REPLY_BYTES + 3) / 4] = status;
#pragma unroll
        for (int i = 0; i < RK_OUT_STAGE / 16; i++) ((uint4 *)resp)[i] = r[i];
    }
    return status;
}
#else
#define rk_lanes_run_handler rk_run_handler
#endif

#if RK_LANES_RAW_BYTES
/* The whole warp: starts copying the m slots of input c from position pos
 * into raw (RK_LANES_RAW_BYTES, the slots' 16-byte units in order), by
 * cp.async through L2 (.cg): no registers held while the pass goes on.
 * Lane l copies units l, l + 32, ... and rk_lanes_poll_raw has each lane
 * check the same units, so a lane waits for its own copies only. */
__device__ __forceinline__ void rk_lanes_prefetch(const rk_in_port &c, rk_u64 pos, rk_u32 m, rk_u32 lane,
                                                  unsigned char *raw) {
    const rk_u64 mask = (1ull << c.log2cap) - 1;
    const rk_u64 *const ring = c.ring; /* in a register: each copy below is a memory clobber */
    for (rk_u32 u = lane; u < m * RK_CH_UNITS; u += 32) {
        const rk_u64 *src = ring + ((pos + u / RK_CH_UNITS) & mask) * RK_IN_LL + 2 * (u % RK_CH_UNITS);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(raw + 16 * u);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* The whole warp: rk_channel_poll over the copies in raw (made for start,
 * at least m_max slots) instead of the ring. */
__device__ __forceinline__ rk_u32 rk_lanes_poll_raw(const rk_in_port &c, rk_u64 start, rk_u32 m_max, rk_u32 lane,
                                                   const unsigned char *raw, unsigned char *stage, rk_u32 &skips) {
    const rk_u32 want = m_max >= 32 ? 0xffffffffu : (1u << m_max) - 1u;
    rk_u32 bad = 0;
    skips = 0;
    const rk_u32 log2cap = c.log2cap; /* in a register: the stores below may alias it */
    for (rk_u32 u = lane; u < m_max * RK_CH_UNITS; u += 32) {
        const ulonglong2 v = *(const ulonglong2 *)(raw + 16 * u);
        /* rk_ch_check, the two payload words in one 8-byte store */
        const rk_u32 m = u / RK_CH_UNITS, w = u % RK_CH_UNITS;
        const rk_u32 tag = (rk_u32)((start + m) >> log2cap) + 1u;
        if ((rk_u32)(v.x >> 32) != tag || (rk_u32)(v.y >> 32) != tag) {
            bad |= 1u << m;
            if (w == 0 && (rk_u32)(v.x >> 32) == (tag | RK_CH_SKIP)) skips |= 1u << m;
        } else {
            *(uint2 *)(stage + m * RK_IN_STAGE + 8 * w) = make_uint2((rk_u32)v.x, (rk_u32)v.y);
        }
    }
    bad = rk_ch_warp_or(bad);
    skips = rk_ch_warp_or(skips);
    const rk_u32 ok = want & (~bad | skips);
    return ok == 0xffffffffu ? ok : ((1u << (__ffs(~ok) - 1)) - 1u);
}
#endif

/* The whole warp of worker wi, while the kernel's input runs in lanes: one
 * pass over this warp's next slots (at most max). Returns the slots taken. */
__device__ rk_u32 rk_lanes_pass(const rk_ring_args &a, rk_u32 lane, rk_u32 wi, unsigned char *stage_in,
                                unsigned char *stage_out, rk_u32 max, rk_ch_poll &cp, rk_u64 &handled,
                                rk_u64 &errors) {
    rk_warp_pass &wp = rk_ch.w[wi];
    rk_in_port &c = rk_ch.in[0];
    const rk_u64 cap = a.capacity_mask + 1;
    RK_LP_STAMP(t0);
#ifdef RK_LANES_PROFILE
    if (lane == 0) {
#if !RK_LANES_RAW_BYTES
        if (rk_lanes_prof[wi][RK_LP_LAST]) RK_LP_ADD(wi, RK_LP_BETWEEN, t0 - rk_lanes_prof[wi][RK_LP_LAST]);
#endif

        RK_LP_ADD(wi, RK_LP_CALLS, 1);
    }
#endif
    if (max > cp.window) max = cp.window;
    /* Lane 0 decides where this pass may poll; leaving, up to the highest
     * pass taken. Acquire: the lanes were seen on (rk_channel_pass), and
     * what rk_lanes_enter wrote before turning them on (this warp's next
     * position, the ports' d) is read after that. */
    if (lane == 0) __threadfence_block();
    rk_u64 first = rk_vload(&wp.lnext), end = (first | 31u) + 1u;
    rk_u32 stop = 0;
    if (lane == 0 && rk_lanes_state() == RK_LANES_LEAVING) {
        if (!wp.lacked) {
            wp.lacked = 1;
            __threadfence_block(); /* this warp's lend before its acknowledgement */
            atomicAdd(&rk_ch.lanes_acks, 1u);
        }
        const rk_u64 hi = rk_lanes_hi();
        if (first >= hi) {
            rk_lanes_try_leave();
            stop = 1;
        } else if (hi < end) {
            end = hi;
        }
    }
    stop = __shfl_sync(0xffffffffu, stop, 0);
    first = __shfl_sync(0xffffffffu, first, 0);
    end = __shfl_sync(0xffffffffu, end, 0);
    if (stop) return 0;
    const rk_u32 m_max = (rk_u32)min((rk_u64)max, end - first);
    rk_u32 skip = 0;
#if RK_LANES_RAW_BYTES
    /* The copies this warp started for this pass (every earlier one is
     * complete too: the buffer is free again). All of its slots there: the
     * pass takes them; else the ring is polled as without them. */
    unsigned char *raw = stage_out + (size_t)a.chunk * RK_OUT_STAGE;
    asm volatile("cp.async.wait_all;" ::: "memory");
    rk_u32 lanes = 0;
    if (wp.pf_pos == (rk_u32)first) { /* copied to the end of first's chunk, where m_max ends at most */
        lanes = rk_lanes_poll_raw(c, first, m_max, lane, raw, stage_in, skip);
        if (lanes != (m_max >= 32 ? 0xffffffffu : (1u << m_max) - 1u)) {
            lanes = 0;
            __syncwarp(); /* every lane has read pf_pos before lane 0 rewrites it (racecheck) */
            if (lane == 0) wp.pf_pos = ~0u; /* copied too early: polled from the ring from now on */
        }
#ifdef RK_LANES_PROFILE
        else if (lane == 0) RK_LP_ADD(wi, RK_LP_PF_HIT, 1);
#endif
    }
    if (!lanes) lanes = rk_channel_poll(c, first, m_max, lane, stage_in, skip);
#else
    const rk_u32 lanes = rk_channel_poll(c, first, m_max, lane, stage_in, skip);
#endif
    skip &= lanes;
    rk_ch_poll_adapt(cp, __popc(lanes), max);
    RK_LP_STAMP(t1);
    if (lane == 0 && lanes) RK_LP_ADD(wi, RK_LP_POLL, t1 - t0); /* polls that found messages */
    if (!lanes) {
#ifdef RK_LANES_PROFILE
        if (lane == 0) {
            RK_LP_ADD(wi, RK_LP_EMPTY, 1);
            rk_lanes_prof[wi][RK_LP_LAST] = t1;
        }
#endif
        return 0;
    }
    __syncwarp(); /* every lane's staged words before any handler reads them */
    rk_u32 kept = 0;
    if (lane == 0) {
        kept = rk_lanes_credit(lanes, skip, first, cap, a.dctl + RK_DCTL_CR_RECEIVED);
        if (kept) {
            /* Every port gives every slot kept its position (HOLD: all of
             * them); rk_emit_finish writes SKIP where no message went. */
            const rk_u32 ports = rk_ch.ports;
            RK_FOR_BITS(p, ports) {
                wp.allow[p] = kept;
                wp.base[p] = first + rk_vload(&rk_ch.lanes_d[p]);
            }
            wp.ports = ports;
#if RK_LANES_EBUF
            wp.ebuf = 1; /* the emits wait in rk_lanes_ebuf (rk__emit) */
#endif
            *(volatile rk_u64 *)&wp.lend = first + __popc(kept);
        }
    }
    kept = __shfl_sync(0xffffffffu, kept, 0);
    __syncwarp();
    RK_LP_STAMP(t2);
#ifdef RK_LANES_PROFILE
    if (lane == 0) {
        RK_LP_ADD(wi, RK_LP_CREDIT, t2 - t1);
        if (kept != lanes) RK_LP_ADD(wi, RK_LP_CUT, 1);
        if (!kept) rk_lanes_prof[wi][RK_LP_LAST] = t2;
    }
#endif
    if (!kept) return 0;
    const rk_u32 n = __popc(kept), run = kept & ~skip;
    int status = 0;
    if ((run >> lane) & 1u)
        status = rk_lanes_run_handler(a, stage_in + lane * RK_IN_STAGE, stage_out + lane * RK_OUT_STAGE);
#if RK_LANES_EBUF
    __syncwarp();
    if (wp.ebuf) rk_lanes_gather(lane, wi);
#endif
    rk_emit_finish(lane, wi);
#if RK_LANES_RAW_BYTES
    /* This warp's next slots (the rest of this chunk, or its next chunk),
     * copied while the publish turn and the next pass's start run (before
     * the handlers measured alike, session 15). */
    {
        const rk_u64 next = rk_lanes_next(first + n);
        const rk_u32 m = (rk_u32)(((next | 31u) + 1u) - next);
        if (lane == 0) wp.pf_pos = a.stage == 0 ? (rk_u32)next : ~0u; /* staging in device memory: none */
        if (a.stage == 0) rk_lanes_prefetch(c, next, m, lane, raw);
    }
#endif
    const rk_u32 failed = __ballot_sync(0xffffffffu, status != 0) & run;
    rk_u64 seq0 = 0;
    RK_LP_STAMP(t3);
    if (lane == 0) {
        RK_LP_ADD(wi, RK_LP_HANDLE, t3 - t2);
        /* The publish turn, as short as it can be (every pass of the input
         * goes through it in order): the messages' sequence numbers and the
         * replies' places. */
        const rk_u32 msgs = __popc(run), replies = __popc(failed);
#ifdef RK_LANES_PROFILE
        if (rk_vload(&c.pub) != first) {
            const rk_u64 w0 = clock64();
            rk_turn_wait(&c.pub, first, false);
            RK_LP_ADD(wi, RK_LP_WAITED, 1);
            RK_LP_ADD(wi, RK_LP_WAIT, clock64() - w0);
        }
#else
        rk_turn_wait(&c.pub, first, false);
#endif
        /* Acquire: what the pass before wrote under the turn (c.delivered)
         * is read after the turn is seen, never before it (a weak load may
         * be moved above the wait's volatile loads: lanes-2's stall). */
        __threadfence_block();
        seq0 = rk_vload(&c.delivered);
        *(volatile rk_u64 *)&c.delivered = seq0 + msgs;
        if (replies) wp.cr_base = rk_ch_add(&rk_ch.cr_head, (rk_u64)replies);
        rk_vstore(&c.pub, first + n);
        /* After it: monotone words (TAKEN and DELIVERED take the largest
         * value stored), and the reply room promised and not used. */
        rk_ch_store_max(c.ctl + RK_CH_TAKEN, first + n);
        if (msgs) rk_ch_store_max(c.ctl + RK_CH_DELIVERED, seq0 + msgs);
        if (replies) rk_vstore32(&wp.resv, *(volatile rk_u32 *)&wp.resv - replies); /* used: the host gives it back */
        wp.lnext = rk_lanes_next(first + n);
    }
    seq0 = __shfl_sync(0xffffffffu, seq0, 0);
    __syncwarp();
    rk_channel_replies(a, lane, wi, stage_out, 0, failed, run, seq0);
    handled += __popc(run);
    errors += __popc(__ballot_sync(0xffffffffu, status < 0) & run);
    __syncwarp();
#ifdef RK_LANES_PROFILE
    if (lane == 0) {
        const rk_u64 t5 = (rk_u64)clock64();
        RK_LP_ADD(wi, RK_LP_PUBLISH, t5 - t3);
        RK_LP_ADD(wi, RK_LP_PASSES, 1);
        RK_LP_ADD(wi, RK_LP_SLOTS, n);
        rk_lanes_prof[wi][RK_LP_LAST] = t5;
        if (!rk_lanes_prof[wi][RK_LP_FIRST]) rk_lanes_prof[wi][RK_LP_FIRST] = t0;
        rk_lanes_prof[wi][RK_LP_BUSY] = t5;
    }
#endif
    return n;
}

#ifdef RK_LANES_PROFILE
/* Lane 0 of each worker warp, leaving rk_worker's loop: the last one out
 * prints its block's sums (cycles per pass, over every warp's passes). */
__device__ void rk_lanes_prof_report(rk_u32 wi) {
    __threadfence_block();
    if (atomicAdd(&rk_lanes_prof_out, 1u) + 1u != rk_ch.warps) return;
    __threadfence_block();
    rk_u64 t[RK_LP_N], t_first = ~0ull, t_last = 0;
    for (int k = 0; k < RK_LP_N; k++) {
        t[k] = 0;
        for (rk_u32 w = 0; w < rk_ch.warps; w++) t[k] += *(volatile rk_u64 *)&rk_lanes_prof[w][k];
    }
    for (rk_u32 w = 0; w < rk_ch.warps; w++) {
        const rk_u64 f = *(volatile rk_u64 *)&rk_lanes_prof[w][RK_LP_FIRST], l = *(volatile rk_u64 *)&rk_lanes_prof[w][RK_LP_BUSY];
        if (f && f < t_first) t_first = f;
        if (l > t_last) t_last = l;
    }
    if (t[RK_LP_SLOTS] < 100000) return;
    const rk_u64 p = t[RK_LP_PASSES] ? t[RK_LP_PASSES] : 1;
    /* Cycles from the first lanes pass of any warp to the last one's end
     * (the messages over them: slots a cycle, x 1.98e3 = M msg/s at 1980 MHz). */
    const double span = t_last > t_first ? (double)(t_last - t_first) : 1.0;
    const rk_u64 calls = t[RK_LP_CALLS] ? t[RK_LP_CALLS] : 1;
#if RK_LANES_RAW_BYTES
    const rk_u64 pf = t[RK_LP_PF_HIT], between = 0;
#else
    const rk_u64 pf = 0, between = t[RK_LP_BETWEEN] / calls;
#endif
    printf("lanes-prof in=%u W=%u bits=%u slots=%llu busy %.0f cycles (%.1f M msg/s at 1980 MHz) passes=%llu "
           "(%.1f a pass) calls=%llu empty=%llu cut=%llu waited=%llu reloads=%llu pf=%llu | cycles a pass: poll %llu "
           "credit %llu handle %llu publish %llu (wait %llu) | a call: between %llu\n",
           rk_ch.in[0].id, rk_ch.warps, rk_ch.lanes_bits, t[RK_LP_SLOTS], span, (double)t[RK_LP_SLOTS] / span * 1980.0,
           t[RK_LP_PASSES], (double)t[RK_LP_SLOTS] / (double)p, t[RK_LP_CALLS], t[RK_LP_EMPTY], t[RK_LP_CUT],
           t[RK_LP_WAITED], t[RK_LP_RELOADS], pf, t[RK_LP_POLL] / p, t[RK_LP_CREDIT] / p, t[RK_LP_HANDLE] / p,
           t[RK_LP_PUBLISH] / p, t[RK_LP_WAIT] / p, between);
}
#endif

#endif /* RK_LANES_BUILT */
