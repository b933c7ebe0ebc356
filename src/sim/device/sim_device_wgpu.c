/* The library's side of a simulation on WebGPU, in the DSL, transpiled to
 * WGSL with the user's source (src/sim/sim_source_wgpu.c puts the generated
 * declarations, rk_sim_payloads and rk_sim_dispatch_ / rk_sim_scalar_get_ /
 * _set_ in front).
 * No host-mapped memory, no 64-bit atomics, no running kernel that can see
 * host writes: the host writes a command's words to s->rk_cmd (and its
 * payload to its type's buffer) before the dispatch that runs it, and
 * every band writes its share of the answer to its own pair of words in
 * s->rk_answer, which the host adds up after reading them back
 * (src/sim/sim_webgpu.c). The arithmetic per band is the CPU's and CUDA's:
 * the same region, tid and threads for every call. */

/* Thread 0 of band `band` (of `bands`): its share of command seq's answer. */
RK_DEVICE void rk_sim_part_(const rk_sim_state *s, uint32_t seq, int band, int bands, uint64_t value) {
    const uint32_t at = ((seq & (RK_SIM_SLOTS - 1u)) * (uint32_t)bands + (uint32_t)band) * 2u;
    s->rk_answer[at] = (uint32_t)value;
    s->rk_answer[at + 1u] = (uint32_t)(value >> 32);
}

RK_DEVICE uint32_t rk_sim_word_(const rk_sim_state *s, uint32_t seq, int w) {
    return s->rk_cmd[(seq & (RK_SIM_SLOTS - 1u)) * (uint32_t)RK_SIM_CMD_WORDS + (uint32_t)w];
}

RK_DEVICE int rk_sim_wg_is_global_(uint32_t op, uint32_t end) {
    return op > RK_SIM_OP_STEP || (op < RK_SIM_OP_STEP && end == 0u);
}

/* One step of band `band`. */
RK_DEVICE void rk_sim_wg_step_band_(const rk_sim_state *s, int band, int bands, uint64_t step) {
    rk_sim_region r;
    r.row_begin = RK_SIM_BAND_FIRST(band, bands, s->rows);
    r.row_end = RK_SIM_BAND_FIRST(band + 1, bands, s->rows);
    r.tid = thread_idx_x();
    r.threads = block_dim_x();
    r.ahead = 0;
    r.step = step;
    rk_sim_step_(s, &r);
}

/* Band `band`'s share of region command seq (it reaches the band). */
RK_DEVICE void rk_sim_wg_region_(const rk_sim_state *s, const rk_sim_payloads *q, uint32_t seq, int band, int bands, uint64_t steps) {
    const int begin = (int)rk_sim_word_(s, seq, RK_SIM_W_BEGIN), end = (int)rk_sim_word_(s, seq, RK_SIM_W_END);
    const int rb = RK_SIM_BAND_FIRST(band, bands, s->rows), re = RK_SIM_BAND_FIRST(band + 1, bands, s->rows);
    rk_sim_region r;
    r.row_begin = begin > rb ? begin : rb;
    r.row_end = end < re ? end : re;
    r.tid = thread_idx_x();
    r.threads = block_dim_x();
    r.ahead = 0;
    r.step = steps;
    const uint64_t a = rk_sim_dispatch_(s, q, &r, rk_sim_word_(s, seq, RK_SIM_W_OP), seq & (RK_SIM_SLOTS - 1u));
    sync_threads();
    if (r.tid == 0) rk_sim_part_(s, seq, band, bands, a);
}

/* A global command over every row; its answer is band 0's part. */
RK_DEVICE void rk_sim_wg_global_(const rk_sim_state *s, const rk_sim_payloads *q, uint32_t seq, int bands, uint64_t steps) {
    const uint32_t op = rk_sim_word_(s, seq, RK_SIM_W_OP), arg = rk_sim_word_(s, seq, RK_SIM_W_ARG);
    uint64_t a = 0;
    if (op == RK_SIM_OP_GET_SCALAR) {
        a = (uint64_t)rk_sim_scalar_get_(s, arg);
    } else if (op == RK_SIM_OP_SET_SCALAR) {
        if (thread_idx_x() == 0) rk_sim_scalar_set_(s, arg, rk_sim_word_(s, seq, RK_SIM_W_PAYLOAD));
    } else if (op < RK_SIM_OP_STEP) {
        rk_sim_region r;
        r.row_begin = 0;
        r.row_end = s->rows;
        r.tid = thread_idx_x();
        r.threads = block_dim_x();
        r.ahead = 0;
        r.step = steps;
        a = rk_sim_dispatch_(s, q, &r, op, seq & (RK_SIM_SLOTS - 1u));
    }
    sync_threads();
    if (thread_idx_x() == 0) rk_sim_part_(s, seq, 0, bands, a);
}

/* Traditional: one step, a block per band. */
RK_KERNEL void rk_sim_wg_step(const rk_sim_state *s, const rk_sim_payloads *q, uint64_t step) {
    (void)q;
    rk_sim_wg_step_band_(s, block_idx_x(), grid_dim_x(), step);
}

/* Traditional: command seq; block i is band first_band + i of `bands` (a
 * region command's bands), or the one block of a global command. */
RK_KERNEL void rk_sim_wg_command(const rk_sim_state *s, const rk_sim_payloads *q, uint32_t seq, uint64_t steps, int first_band, int bands) {
    const uint32_t op = rk_sim_word_(s, seq, RK_SIM_W_OP), end = rk_sim_word_(s, seq, RK_SIM_W_END);
    if (rk_sim_wg_is_global_(op, end) != 0)
        rk_sim_wg_global_(s, q, seq, bands, steps);
    else
        rk_sim_wg_region_(s, q, seq, first_band + block_idx_x(), bands, steps);
}

/* Persistent ("relaunch per command batch"): one block runs commands seq ..
 * seq + count - 1 in order, each band in turn, as `bands` blocks would; the
 * block barrier between two (sync_threads, with its storage barrier) is
 * what the grid's bands wait for elsewhere. */
RK_KERNEL void rk_sim_wg_batch(const rk_sim_state *s, const rk_sim_payloads *q, uint32_t seq, uint32_t count, uint64_t steps, int bands) {
    for (uint32_t k = 0; k < count; k++) {
        const uint32_t at = seq + k;
        const uint32_t op = rk_sim_word_(s, at, RK_SIM_W_OP), arg = rk_sim_word_(s, at, RK_SIM_W_ARG);
        const uint32_t begin = rk_sim_word_(s, at, RK_SIM_W_BEGIN), end = rk_sim_word_(s, at, RK_SIM_W_END);
        if (op == RK_SIM_OP_STEP) {
            for (uint32_t j = 0; j < arg; j++) {
                for (int b = 0; b < bands; b++) {
                    rk_sim_wg_step_band_(s, b, bands, steps);
                    sync_threads();
                }
                steps++;
            }
        } else if (rk_sim_wg_is_global_(op, end) != 0) {
            rk_sim_wg_global_(s, q, at, bands, steps);
        } else {
            const int b0 = RK_SIM_BAND_OF_ROW(begin, bands, s->rows), b1 = RK_SIM_BAND_OF_ROW(end - 1u, bands, s->rows);
            for (int b = b0; b <= b1; b++) {
                rk_sim_wg_region_(s, q, at, b, bands, steps);
                sync_threads();
            }
        }
        sync_threads();
    }
}
