/* K2K, the lean loop of a stage with one worker warp (issue 14's hop
 * latency). Compiled by NVRTC after ring.cu (src/cuda/cuda_ring_source.c),
 * so it uses both channel.cu's link table and ring.cu's helpers; rk_worker
 * calls rk_lean_run (declared in ring.cu) while the kernel waits for
 * channel messages only.
 *
 * What the generic pass does per message and this loop does not:
 *  - the channel poll goes through shared staging, warp reductions and a
 *    lane-0 section; here each lane loads its whole slot (one L2 round
 *    trip, every load in flight at once), checks its own tags and runs the
 *    handler from the registers it loaded into;
 *  - the control words (active, terminate, pause, link generation, the
 *    host's published count, the ports' CLOSED) are looked at once per 32
 *    polls with a control-word round trip in between; here one lane each
 *    loads them beside every poll (the same L2 round trip), and any change
 *    hands the warp back to rk_worker, which handles it as before;
 *  - a pass's begin (turns, positions, room) is the plan rk_solo_plan made
 *    ahead; replies to channel messages are placed from registers at
 *    positions known before the handlers.
 * A pass larger than the planned room is cut as the general begin cuts it
 * (HOLD outputs, the reply queue), or waits here for room. Anything this
 * loop does not cover it leaves to rk_worker's generic pass: several
 * inputs, a REPORT input, a pass short of room with a REPORT output open
 * (the general begin refuses its emits), messages larger than 64 bytes.
 * Every rule of docs/channels.md is kept because the state
 * this loop moves (port heads, TAKEN, DELIVERED, the input's turns, the
 * reply queue's place) is the generic pass's own, moved the same way. */

/* The messages a lean poll keeps in registers: up to 64 bytes (16 tagged
 * words, 8 16-byte loads per lane); larger ones take the generic pass. */
#if RK_REGISTER_STAGING && RK_IN_LL <= 16
#define RK_LEAN_BUILT 1
#else
#define RK_LEAN_BUILT 0
#endif
#define RK_LEAN_MAX_POLLS 4096 /* empty polls before rk_worker's loop runs once (~1 ms) */
/* 1: after each plan the next pass's begin is armed (rk_lean_arm), so a
 * pass that fits it runs its handlers with no store or __syncwarp first
 * (session 14: a 4-stage chain end to end 0.02-0.07 us less than main). */
#ifndef RK_LEAN_ARMED
#define RK_LEAN_ARMED 1
#endif

/* The lean loop's emit (RK_SOLO_LEAN_EMIT): after each plan the warp finds
 * where each lane's message would go on the plan's first port (position
 * base + lane, its tag), off any message's path; a pass with no SKIP slot
 * (lane = position) turns it on for its handlers, so rk__emit's common
 * case is a few independent shared loads, not a chain of them. Anything
 * else (another port, another size, a second emit, a pass with SKIP
 * slots) takes rk__emit's general path, which the pass also set up. */
struct rk_lean_emit_rec {
    rk_u32 on, port, bytes, spare;
    rk_u64 *slot[32];
    rk_u64 hi[32];
};
__shared__ rk_lean_emit_rec rk_le;
static_assert(sizeof(rk_links) + sizeof(rk_lean_emit_rec) <= RK_CH_SHARED_BOUND,
              "the channel code's shared memory must fit RK_CUDA_CHANNEL_SHARED (cuda_ring_layout.h)");

/* Measurement only (RK_CUDA_RING_DEFINES=RK_LEAN_TRACE): each kernel's
 * last RK_LT_N lean passes stamped (%globaltimer, comparable across SMs;
 * clock64 within the SM) and printed as "rk-lt" lines when it sees
 * terminate, with its SM and its rings, so a hop can be followed from one
 * stage's emit to the next stage's poll. A stamp takes an operand that
 * the step before it produced, so it cannot move above it. */
#ifdef RK_LEAN_TRACE
#define RK_LT_N 64
#define RK_LT_KERNELS 16
#define RK_LT_W 11
__device__ rk_u64 rk_lt_buf[RK_LT_KERNELS][RK_LT_N][RK_LT_W];
__device__ rk_u32 rk_lt_kernels;
__shared__ rk_u32 rk_lt_id, rk_lt_passes, rk_lt_done;
/* A planned host pass (a pipeline's source): found (globaltimer, clock),
 * its lean emit stored (the same), the emitted message's first word. */
__shared__ rk_u64 rk_lt_h[4];
__shared__ rk_u32 rk_lt_hseq;
__device__ __forceinline__ rk_u64 rk_lt_gt(rk_u64 after) {
    rk_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : "l"(after));
    return t;
}
__device__ __forceinline__ rk_u64 rk_lt_ck(rk_u64 after) {
    rk_u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : "l"(after));
    return t;
}
__device__ void rk_lean_trace_report(const rk_u64 *in_ring) {
    rk_u32 smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const rk_u64 *out_ring = rk_ch.out[0].ring;
    const rk_u32 n = rk_lt_passes < RK_LT_N ? rk_lt_passes : RK_LT_N;
    printf("rk-lt kernel %u sm %u in %llx out %llx passes %u\n", rk_lt_id, smid, (unsigned long long)in_ring,
           (unsigned long long)out_ring, rk_lt_passes);
    /* One line a pass: in ring, SM, seq, messages, armed, the finding
     * poll's issue (globaltimer ns mod 2^44), then found and finish after it
     * (ns); found, handled, finish and the next plan after the issue (clock
     * cycles); empty polls before it, the window, the poll period (cycles). */
    for (rk_u32 i = 0; i < n; i++) {
        const rk_u64 *r = rk_lt_buf[rk_lt_id][(rk_lt_passes - n + i) % RK_LT_N];
        printf("rk-lt %llx %u %u %u %u %llu %llu %llu %llu %llu %llu %llu %u %u %llu\n", (unsigned long long)in_ring,
               smid, (rk_u32)r[0], (rk_u32)(r[0] >> 32) & 0xffffu, (rk_u32)(r[0] >> 48), r[1] & ((1ull << 44) - 1),
               r[2] - r[1], r[3] - r[1], r[5] - r[4], r[6] - r[4], r[7] - r[4], r[8] - r[4], (rk_u32)r[9],
               (rk_u32)(r[9] >> 32), r[10] ? r[4] - r[10] : 0ull);
    }
}

/* Every kernel as it leaves: its SM and rings (a chain's order: the source
 * has no input ring; each next stage's input is the one before's output);
 * a source's planned host passes (in ring 0) if it had any. */
__device__ void rk_lean_trace_exit() {
    rk_u32 smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (!rk_lt_done && rk_lt_passes) {
        rk_lt_done = 1;
        rk_lean_trace_report(0);
    }
    printf("rk-lt exit sm %u in %llx out %llx\n", smid, (unsigned long long)rk_ch.in[0].ring,
           (unsigned long long)rk_ch.out[0].ring);
}
#endif

__device__ void rk_lean_init() {
    rk_le.on = 0;
#ifdef RK_LEAN_TRACE
    rk_lt_id = atomicAdd(&rk_lt_kernels, 1u) % RK_LT_KERNELS;
    rk_lt_passes = rk_lt_done = 0;
#endif
}

/* The stores of a lean emit: every
 * 16-byte unit of the slot from one asm statement, so ptxas gives each
 * store its own registers. Written one store at a time, ptxas built each
 * unit in the same four registers and every store after the first waited
 * for the one before to read them (the SASS's read barriers: 7 waits in 8
 * stores, on the hop's path; session 16). n: payload words (1 to 16); the
 * unit after the last word is a zero payload with the tag, as before. */
__device__ __forceinline__ void rk_lean_emit_store(rk_u64 *slot, rk_u32 t, const rk_u32 *src, rk_u32 n) {
    rk_u32 v[16];
#pragma unroll
    for (int i = 0; i < 16; i++) v[i] = i < (int)n ? src[i] : 0u;
#define RK_LE_OPS                                                                                                \
    "l"(slot), "r"(t), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(v[4]), "r"(v[5]), "r"(v[6]), "r"(v[7]),     \
        "r"(v[8]), "r"(v[9]), "r"(v[10]), "r"(v[11]), "r"(v[12]), "r"(v[13]), "r"(v[14]), "r"(v[15])
#define RK_LE_U0 "st.relaxed.gpu.global.v4.u32 [%0], {%2, %1, %3, %1};\n\t"
#define RK_LE_U1 "st.relaxed.gpu.global.v4.u32 [%0+16], {%4, %1, %5, %1};\n\t"
#define RK_LE_U2 "st.relaxed.gpu.global.v4.u32 [%0+32], {%6, %1, %7, %1};\n\t"
#define RK_LE_U3 "st.relaxed.gpu.global.v4.u32 [%0+48], {%8, %1, %9, %1};\n\t"
#define RK_LE_U4 "st.relaxed.gpu.global.v4.u32 [%0+64], {%10, %1, %11, %1};\n\t"
#define RK_LE_U5 "st.relaxed.gpu.global.v4.u32 [%0+80], {%12, %1, %13, %1};\n\t"
#define RK_LE_U6 "st.relaxed.gpu.global.v4.u32 [%0+96], {%14, %1, %15, %1};\n\t"
#define RK_LE_U7 "st.relaxed.gpu.global.v4.u32 [%0+112], {%16, %1, %17, %1};\n\t"
    switch ((n + 1) / 2) {
    case 8: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 RK_LE_U3 RK_LE_U4 RK_LE_U5 RK_LE_U6 RK_LE_U7 "}" ::RK_LE_OPS : "memory"); break;
    case 7: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 RK_LE_U3 RK_LE_U4 RK_LE_U5 RK_LE_U6 "}" ::RK_LE_OPS : "memory"); break;
    case 6: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 RK_LE_U3 RK_LE_U4 RK_LE_U5 "}" ::RK_LE_OPS : "memory"); break;
    case 5: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 RK_LE_U3 RK_LE_U4 "}" ::RK_LE_OPS : "memory"); break;
    case 4: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 RK_LE_U3 "}" ::RK_LE_OPS : "memory"); break;
    case 3: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 RK_LE_U2 "}" ::RK_LE_OPS : "memory"); break;
    case 2: asm volatile("{\n\t" RK_LE_U0 RK_LE_U1 "}" ::RK_LE_OPS : "memory"); break;
    default: asm volatile("{\n\t" RK_LE_U0 "}" ::RK_LE_OPS : "memory"); break;
    }
#undef RK_LE_OPS
}

__device__ __forceinline__ bool rk_lean_emit(unsigned port, const void *msg, unsigned size, int &rc) {
#if RK_LEAN_BUILT
    /* Every word it needs in one round of shared loads (volatile: none is
     * moved after the branch, which made three rounds), then one branch. */
    const rk_u32 lane = threadIdx.x & 31;
    const volatile rk_lean_emit_rec &le = rk_le;
    const rk_u32 on = le.on, lport = le.port, bytes = le.bytes;
    rk_u64 *slot = le.slot[lane];
    const rk_u64 hi = le.hi[lane];
    volatile unsigned char &emitted = rk_ch.w[threadIdx.x >> 5].emitted[port & 7u][lane];
    const unsigned char again = emitted;
    if (!on || port != lport || size != bytes || again || (((unsigned)(unsigned long long)msg) & 3u) || (size & 3u) ||
        !size)
        return false;
    emitted = 1;
    rk_lean_emit_store(slot, (rk_u32)(hi >> 32), (const rk_u32 *)msg, size / 4);
#ifdef RK_LEAN_TRACE
    rk_lt_h[2] = rk_lt_gt((rk_u64)slot);
    rk_lt_h[3] = rk_lt_ck(rk_lt_h[2]);
    rk_lt_hseq = ((const rk_u32 *)msg)[0];
#endif
    rc = RK_EMIT_OK;
    return true;
#else
    (void)port, (void)msg, (void)size, (void)rc;
    return false;
#endif
}

/* The whole warp, right after a plan (rk_solo_plan) in the lean loop:
 * each lane's slot on the plan's first port, for rk_lean_emit. */
__device__ __forceinline__ void rk_lean_emit_prepare(rk_u32 lane, rk_u32 wi) {
    const rk_u32 ports = rk_ch.plan_ports;
    if (!(rk_ch.solo & RK_SOLO_LEAN_EMIT) || !ports) return;
    const rk_u32 p = __ffs(ports) - 1;
    const rk_out_port &o = rk_ch.out[p];
    const rk_u64 pos = rk_ch.w[wi].base[p] + lane;
    rk_u64 hi;
    rk_le.slot[lane] = rk_port_slot(o, pos, hi);
    rk_le.hi[lane] = hi;
    if (lane == 0) {
        rk_le.port = p;
        rk_le.bytes = o.msg_bytes;
    }
    __syncwarp();
}

/* The whole warp, after rk_lean_emit_prepare (RK_LEAN_ARMED): the next
 * pass's begin set up before it comes. Every planned port allows every
 * lane (lane = place) and the lean emit is on, so a pass whose lanes are
 * its positions (no SKIP slot) and that fits the plan's room runs its
 * handlers at once; its true lanes are set after them, for rk_emit_finish.
 * Returns that room (0: not armed). Any other pass sets its begin itself;
 * rk_lean_disarm clears it all before the warp leaves the loop. */
__device__ __forceinline__ rk_u32 rk_lean_arm(rk_u32 lane, rk_u32 wi) {
    const rk_u32 ports = rk_ch.plan_ports;
    if (!(rk_ch.solo & RK_SOLO_LEAN_EMIT) || !ports || !rk_ch.plan_ok || !rk_ch.plan_room) {
        __syncwarp(); /* the lanes' reads of the plan before lane 0 plans again */
        return 0;
    }
    rk_warp_pass &wp = rk_ch.w[wi];
    if (lane < 8) wp.allow[lane] = ((ports >> lane) & 1u) ? 0xffffffffu : 0u;
    if (lane == 0) {
        wp.ports = ports;
        rk_le.on = 1;
    }
    const rk_u32 room = rk_ch.plan_room;
    __syncwarp();
    return room;
}

__device__ __forceinline__ void rk_lean_disarm(rk_u32 lane, rk_u32 wi) {
    __syncwarp();
    if (lane < 8) rk_ch.w[wi].allow[lane] = 0;
    if (lane == 0) {
        rk_ch.w[wi].ports = 0;
        rk_le.on = 0;
    }
    __syncwarp();
}

/* *p's 16 bytes as two words when `on`, else both 0; a predicated load,
 * not a branch around it. */
__device__ __forceinline__ void rk_lean_load2(const rk_u64 *p, bool on, rk_u64 &a, rk_u64 &b) {
    a = b = 0;
    asm volatile("{\n\t.reg .pred on;\n\tsetp.ne.u32 on, %3, 0;\n\t"
                 "@on ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];\n\t}"
                 : "+l"(a), "+l"(b)
                 : "l"(p), "r"((rk_u32)on));
}

__device__ __forceinline__ rk_u64 rk_lean_load1(const rk_u64 *p, bool on) {
    rk_u64 v = 0;
    asm volatile("{\n\t.reg .pred on;\n\tsetp.ne.u32 on, %2, 0;\n\t"
                 "@on ld.relaxed.gpu.global.u64 %0, [%1];\n\t}"
                 : "+l"(v)
                 : "l"(p), "r"((rk_u32)on));
    return v;
}

/* Whether the lean loop can serve this kernel now (every lane alike: the
 * link table changes only in lane 0 between two __syncwarp). */
__device__ __forceinline__ bool rk_lean_ready() {
    return RK_LEAN_BUILT && rk_ch.warps == 1 && (rk_ch.solo & RK_SOLO_LEAN) && rk_ch.enabled &&
           rk_ch.in_count == 1 && rk_ch.in[0].ring && !rk_ch.in[0].report && !rk_ch.inputs_closed;
}

/* The whole warp of the only worker (wi), when rk_worker has nothing from
 * the host and is active and not terminating: polls the one input channel
 * and handles its messages until a control word changes (or a pass the
 * plan cannot take comes), then returns the slots it took; changed: back
 * to the top of rk_worker's loop (a control word changed, or a long idle
 * spell ended), else rk_worker's generic passes run next (to cut a pass
 * the plan has no room for). seen_active: the
 * ACTIVE value rk_worker goes by; host_next: the host position it would
 * poll next (a published count above it means a host message waits). */
__device__ rk_u32 rk_lean_run(const rk_ring_args &a, rk_u32 lane, rk_u32 wi, rk_ch_poll &cp, rk_u64 &handled,
                              rk_u64 &errors, rk_u64 seen_active, rk_u64 host_next, rk_u64 *saved, rk_u32 &idle,
                              bool &changed) {
    changed = false;
#if RK_LEAN_BUILT
    rk_in_port &c = rk_ch.in[0];
    rk_warp_pass &wp = rk_ch.w[wi];
    const rk_u64 cap = a.capacity_mask + 1;
    const rk_u64 *cr_word = a.dctl + RK_DCTL_CR_RECEIVED;
    const rk_u64 mask = (1ull << c.log2cap) - 1;
    const rk_u32 log2cap = c.log2cap;
    const rk_u64 *ring = c.ring;
    const rk_u32 wmax = a.chunk < 32 ? a.chunk : 32; /* a kernel with state: one message a pass */

    /* One control word per lane, loaded beside every poll; [lo, hi] is the
     * range in which nothing changed for this loop. */
    const rk_u64 *cw = 0;
    rk_u64 lo = 0, hi = 0;
    if (lane == 0) {
        cw = a.dctl + RK_DCTL_ACTIVE;
        lo = hi = seen_active;
    } else if (lane == 1) {
        cw = a.dctl + RK_DCTL_TERMINATE;
    } else if (lane == 2) {
        cw = a.dctl + RK_DCTL_PAUSE;
    } else if (lane == 3) {
        cw = a.dctl + RK_DCTL_LINK_GEN;
        hi = rk_ch.gen;
    } else if (lane == 4) {
        cw = a.dctl + RK_DCTL_HOST_PUBLISHED;
        hi = host_next;
    } else if (lane >= 8 && lane < 16) {
        const rk_out_port &o = rk_ch.out[lane - 8];
        if (o.ring && !o.status) cw = o.ctl + RK_CH_CLOSED;
    }

    /* An open REPORT output: a pass short of room goes to the general begin. */
    const rk_out_port &my_port = rk_ch.out[lane & 7u];
    const bool report_out =
        __any_sync(0xffffffffu, lane < 8 && my_port.ring && !my_port.status && my_port.flow == RK_FLOW_REPORT);
    if (!rk_ch.plan_ok) rk_solo_replan(lane, wi, cap, cr_word);
    rk_lean_emit_prepare(lane, wi);
    rk_u32 armed_room = RK_LEAN_ARMED ? rk_lean_arm(lane, wi) : 0u;
    /* The plan's ports when armed, in a register (the armed pass's begin
     * then reads no shared word; the plan changes only where it is rearmed). */
    rk_u32 armed_ports = rk_ch.plan_ports;
    const bool lean_emit = (rk_ch.solo & RK_SOLO_LEAN_EMIT) != 0;
    rk_u32 got = 0, empty = 0;
    rk_u64 tail = rk_vload(&c.tail); /* this warp's own: moved only by this loop's passes below */
#ifdef RK_LEAN_TRACE
    rk_u64 lt_clast = 0; /* the clock at the last poll's issue */
#endif
    for (;;) {
        if (a.idle_nap_ns && ++idle > 64) __nanosleep(a.idle_nap_ns);
        const rk_u32 window = cp.window < wmax ? cp.window : wmax;
        const rk_u64 pos = tail + lane;
        const bool mine = lane < window;
        rk_u64 x[RK_CH_UNITS], y[RK_CH_UNITS];
        const rk_u64 *slot = ring + (pos & mask) * RK_IN_LL;
#ifdef RK_LEAN_TRACE
        const rk_u64 lt_gi = rk_lt_gt(pos), lt_ci = rk_lt_ck(lt_gi);
        const rk_u64 lt_cprev = lt_clast;
        lt_clast = lt_ci;
#endif
#pragma unroll
        for (int u = 0; u < RK_CH_UNITS; u++) rk_lean_load2(slot + 2 * u, mine, x[u], y[u]);
        const rk_u64 cv = rk_lean_load1(cw, cw != 0);
        const rk_u32 tag = (rk_u32)(pos >> log2cap) + 1u;
        rk_u32 stale = 0; /* no branches: a lone warp pays for every one in series */
#pragma unroll
        for (int u = 0; u < RK_CH_UNITS; u++) stale |= ((rk_u32)(x[u] >> 32) ^ tag) | ((rk_u32)(y[u] >> 32) ^ tag);
        const bool full = mine && !stale;
        const bool skip = mine && (rk_u32)(x[0] >> 32) == (tag | RK_CH_SKIP);
        const rk_u32 ok = __ballot_sync(0xffffffffu, full || skip);
        if (__any_sync(0xffffffffu, cw && (cv < lo || cv > hi))) {
            changed = true; /* rk_worker handles it at the top of its loop */
            break;
        }
        const rk_u32 lanes = ok == 0xffffffffu ? ok : ((1u << (__ffs(~ok) - 1)) - 1u);
#ifdef RK_LEAN_TRACE
        const rk_u64 lt_cf = rk_lt_ck(lanes), lt_gf = rk_lt_gt(lt_cf);
        const rk_u64 lt_empty = empty | ((rk_u64)window << 32);
#endif
        if (!lanes) {
            if (++cp.empty >= 16) cp.window = RK_CH_MIN_WINDOW;
            if (++empty >= RK_LEAN_MAX_POLLS) {
                changed = true; /* to the top of rk_worker's loop, not through its generic polls */
                break;
            }
            continue;
        }
        rk_u32 lanes_kept = lanes;
        rk_u32 skips = __ballot_sync(0xffffffffu, skip) & lanes;
        rk_u32 run = lanes & ~skips; /* SKIP slots: taken, no handler */
        rk_u32 want = __popc(run);
        /* Armed (RK_LEAN_ARMED): lane = place and room for all, no begin to set. */
        const bool armed = RK_LEAN_ARMED && want && !skips && want <= armed_room;
        if (!armed && want > rk_ch.plan_room) {
            /* Short of room by the plan: plan again (TAKEN and the host's
             * place reloaded). Still short: with a REPORT output the
             * general begin decides (it refuses emits, never waits);
             * else the pass is cut before its first message without room
             * (as the general begin cuts), or waits for room. */
            rk_solo_replan(lane, wi, cap, cr_word);
            rk_lean_emit_prepare(lane, wi);
            if (RK_LEAN_ARMED) armed_room = rk_lean_arm(lane, wi);
            armed_ports = rk_ch.plan_ports;
            const rk_u32 room = rk_ch.plan_room;
            if (want > room) {
                if (report_out) break;
                if (!room) continue;
                const rk_u32 kept_real = rk_first_bits(run, room);
                lanes_kept = lanes & ((1u << (__ffs(run & ~kept_real) - 1)) - 1u);
                skips &= lanes_kept;
                run = kept_real;
                want = room;
            }
        }
        const rk_u32 n = __popc(lanes_kept);
        if (n == window) {
            cp.window = min(32u, 2 * cp.window);
            cp.empty = 0;
        }
        empty = 0;
        idle = 0;
        /* The begin, from the plan: each planned port gives the pass's
         * messages its next positions (lane order), as rk_channel_pass's
         * solo branch does; read by rk__emit after the __syncwarp. */
        const rk_u32 ports = !want ? 0u : armed ? armed_ports : rk_ch.plan_ports;
        if (!armed) {
            /* The lean emit only with a planned port (ports): its slots are
             * then the plan's (rk_lean_emit_prepare). With none (every
             * output closed) they are an older plan's, and an emit there
             * must take rk__emit's general path, which refuses it. */
            if (RK_LEAN_ARMED) {
                /* Every port's lanes and the lean emit set, over what was armed. */
                if (lane < 8) wp.allow[lane] = ((ports >> lane) & 1u) ? run : 0u;
                if (lane == 0) rk_le.on = lean_emit && ports && !skips ? 1u : 0u;
            } else {
                if (lane < 8 && ((ports >> lane) & 1u)) wp.allow[lane] = run;
                if (lane == 0 && lean_emit && ports && !skips) rk_le.on = 1; /* lane = position: the slots found after the plan */
            }
            if (lane == 0) wp.ports = ports;
            __syncwarp();
        }
        const rk_u64 seq0 = c.delivered, cr0 = rk_ch.cr_head;

        /* The handler, from the words this lane loaded (payload halves). */
        int status = 0;
        uint4 r[RK_OUT_STAGE / 16];
        if ((run >> lane) & 1u) {
            uint4 q[RK_IN_STAGE / 16];
            rk_u32 *qw = (rk_u32 *)q;
#pragma unroll
            for (int i = 0; i < RK_IN_STAGE / 4; i++) qw[i] = 0;
#pragma unroll
            for (int u = 0; u < RK_CH_UNITS; u++) {
                qw[2 * u] = (rk_u32)x[u];
                qw[2 * u + 1] = (rk_u32)y[u];
            }
#pragma unroll
            for (int i = 0; i < RK_OUT_STAGE / 16; i++) r[i] = make_uint4(0, 0, 0, 0);
            status = rk_call_handler((const unsigned char *)q, (unsigned char *)r, a.state);
            ((int *)r)[(RK_REPLY_BYTES + 3) / 4] = status;
        }
#ifdef RK_LEAN_TRACE
        const rk_u64 lt_ch = rk_lt_ck(__ballot_sync(0xffffffffu, status != 0));
#endif
        /* Replies to the host (a failed handler, or every message of a
         * REPLY_ALL channel) first: the sink's reply is its hop. The plan
         * promised the reply queue room for every message. */
        const rk_u32 failed = __ballot_sync(0xffffffffu, status != 0) & run;
        const rk_u32 reply = c.reply_all ? run : failed;
        const rk_u32 below = (1u << lane) - 1u;
        if ((reply >> lane) & 1u) {
            const rk_u64 rpos = cr0 + __popc(reply & below);
            const rk_u64 rtag = (rk_u64)rk_tag(rpos, a.log2_capacity) << 32;
            rk_u64 *rslot = a.crq + (rpos & a.capacity_mask) * RK_CRQ_LL;
            const rk_u32 *src = (const rk_u32 *)r;
#pragma unroll
            for (int w = 0; w < RK_OUT_LL; w += 2) rk_store2(rslot + w, rtag | src[w], rtag | src[w + 1]);
            const rk_u64 seq = (seq0 + __popc(run & below)) & ((1ull << 40) - 1);
            const rk_u64 id = (1ull << 63) | ((rk_u64)c.id << 40) | seq;
            rk_store2(rslot + RK_OUT_LL, rtag | (rk_u32)id, rtag | (rk_u32)(id >> 32));
        }
        /* Armed: the pass's true lanes (every lane was allowed) before rk_emit_finish's __syncwarp. */
        if (armed && lane < 8 && ((ports >> lane) & 1u)) wp.allow[lane] = run;
        rk_emit_finish(lane, wi); /* SKIP words for slots given and not emitted into, HEAD */
#ifdef RK_LEAN_TRACE
        const rk_u64 lt_cn = rk_lt_ck(lt_ch), lt_gn = rk_lt_gt(lt_cn);
#endif
        handled += want;
        errors += __popc(__ballot_sync(0xffffffffu, status < 0) & run);
        got += n;
        if (lane == 0) {
            rk_le.on = 0;
            /* What the general begin and publish do, in one place: heads,
             * the reply queue's place, TAKEN, DELIVERED and both turns. */
            RK_FOR_BITS(p, ports) rk_ch.out[p].head += want;
            const rk_u32 nrep = __popc(reply);
            rk_ch.cr_head += nrep;
            rk_ch.cr_promised += nrep;
            rk_channel_taken(0, tail, n, want); /* c.tail = tail + n */
            c.pub = tail + n;
            rk_ch.plan_ok = 0;
            rk_solo_plan(wi, cap, cr_word); /* the next pass's begin, off its path */
            rk_store(saved + 1, errors);
            rk_store(saved + 5, handled);
        }
        __syncwarp();
        rk_lean_emit_prepare(lane, wi);
        if (RK_LEAN_ARMED) armed_room = rk_lean_arm(lane, wi);
        armed_ports = rk_ch.plan_ports;
#ifdef RK_LEAN_TRACE
        if (lane == 0) {
            rk_u64 *rec = rk_lt_buf[rk_lt_id][rk_lt_passes % RK_LT_N];
            rec[0] = (rk_u32)x[0] | ((rk_u64)n << 32) | ((rk_u64)armed << 48);
            rec[1] = lt_gi, rec[2] = lt_gf, rec[3] = lt_gn;
            rec[4] = lt_ci, rec[5] = lt_cf, rec[6] = lt_ch, rec[7] = lt_cn, rec[8] = rk_lt_ck(armed_room);
            rec[9] = lt_empty, rec[10] = lt_cprev;
            rk_lt_passes++;
        }
#endif
        tail += n;
    }
#ifdef RK_LEAN_TRACE
    if (lane == 0 && !rk_lt_done && rk_load(a.dctl + RK_DCTL_TERMINATE)) {
        rk_lt_done = 1;
        rk_lean_trace_report(ring);
    }
#endif
    if (RK_LEAN_ARMED) rk_lean_disarm(lane, wi); /* the generic passes set their own begin */
    __syncwarp();
    return got;
#else
    (void)a, (void)lane, (void)wi, (void)cp, (void)handled, (void)errors, (void)seen_active, (void)host_next;
    (void)saved, (void)idle;
    changed = false;
    return 0;
#endif
}

/* Host messages of a kernel with one worker warp and output ports (a
 * pipeline's source): the same plan serves their begin, so a pass that
 * fits runs its handlers without the turn, rk_emit_begin's lane-0 section
 * or the shuffles after it. The whole warp; true when the plan took the
 * pass (`ready`, lane = order; every lane decides alike). Host messages
 * need no room in the reply queue (their replies go to the host queue):
 * the plan's room counts it anyway, which only sends a pass to the
 * general begin sooner. */
__device__ __forceinline__ bool rk_lean_host_plan(rk_u32 ready, rk_u64 hfirst, rk_u32 wi, rk_u32 lane) {
    if (!ready || !RK_LEAN_BUILT || !(rk_ch.solo & RK_SOLO_LEAN) || !rk_ch.enabled) return false;
#ifdef RK_LEAN_TRACE
    if (lane == 0) {
        rk_lt_h[0] = rk_lt_gt(ready);
        rk_lt_h[1] = rk_lt_ck(rk_lt_h[0]);
    }
#endif
    if (!rk_ch.plan_ok || (rk_u32)__popc(ready) > rk_ch.plan_room || rk_vload(&rk_ch.host_tail) != hfirst) {
        __syncwarp(); /* every lane has read the plan before lane 0's general begin drops it */
        return false;
    }
    const rk_u32 ports = rk_ch.plan_ports;
    if (lane < 8 && ((ports >> lane) & 1u)) rk_ch.w[wi].allow[lane] = ready;
    if (lane == 0) rk_ch.w[wi].ports = ports;
    if ((rk_ch.solo & RK_SOLO_LEAN_EMIT) && ports) {
        /* rk_lean_emit's slots for this pass: `ready` is one run of
         * positions from its first lane, so a lane's place is lane - first. */
        const rk_u32 p = __ffs(ports) - 1, first = __ffs(ready) - 1;
        const rk_out_port &o = rk_ch.out[p];
        if ((ready >> lane) & 1u) {
            rk_u64 hi;
            rk_le.slot[lane] = rk_port_slot(o, rk_ch.w[wi].base[p] + (lane - first), hi);
            rk_le.hi[lane] = hi;
        }
        if (lane == 0) {
            rk_le.port = p;
            rk_le.bytes = o.msg_bytes;
            rk_le.on = 1;
        }
    }
    __syncwarp();
    return true;
}

/* After a planned host pass's handlers and replies: what the begin would
 * have moved (the ports' heads, the host queue's turn), then the next plan. */
__device__ __forceinline__ void rk_lean_host_done(rk_u64 hfirst, rk_u32 n, rk_u32 wi, rk_u32 lane,
                                                  const rk_ring_args &a) {
#ifdef RK_LEAN_TRACE
    if (lane == 0) {
        /* The record of a lean pass, read as: found at the host poll, the
         * emit stored as its finish (ns), the replies done (cycles). */
        rk_u64 *rec = rk_lt_buf[rk_lt_id][rk_lt_passes % RK_LT_N];
        const rk_u64 done = rk_lt_ck(n);
        rec[0] = rk_lt_hseq | ((rk_u64)n << 32);
        rec[1] = rec[2] = rk_lt_h[0], rec[3] = rk_lt_h[2];
        rec[4] = rec[5] = rk_lt_h[1], rec[6] = rk_lt_h[3], rec[7] = rec[8] = done;
        rec[9] = rec[10] = 0;
        rk_lt_passes++;
    }
#endif
    if (lane == 0) {
        rk_le.on = 0;
        RK_FOR_BITS(p, rk_ch.plan_ports) rk_ch.out[p].head += n;
        rk_vstore(&rk_ch.host_tail, hfirst + n);
        rk_ch.plan_ok = 0;
        rk_solo_plan(wi, a.capacity_mask + 1, a.dctl + RK_DCTL_CR_RECEIVED);
    }
    __syncwarp();
}

/* A host poll that found nothing: the plan made now if there is none (a
 * begin, a link change or a closed port dropped it). */
__device__ __forceinline__ void rk_lean_host_idle(rk_u32 wi, rk_u32 lane, const rk_ring_args &a) {
    if (!RK_LEAN_BUILT || !(rk_ch.solo & RK_SOLO_LEAN) || !rk_ch.enabled || rk_ch.plan_ok) return;
    rk_solo_replan(lane, wi, a.capacity_mask + 1, a.dctl + RK_DCTL_CR_RECEIVED);
}
