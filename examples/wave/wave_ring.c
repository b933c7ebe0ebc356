/* The persistent pattern's host side (wave_sim_internal.h): commands as
 * tagged words in the ring in host-mapped memory, completion read from the
 * kernel's tagged reply words (wave_protocol.h). */
#include "wave_sim_internal.h"

#include <sched.h>
#include <string.h>

/* The reply word of command t: its tag (upper half) says which command last
 * completed in that slot. */
uint64_t wave__ring_reply(const wave_sim *sim, wave_ticket t) {
    return __atomic_load_n(&sim->mb->reply[t & (WAVE_RING_SLOTS - 1)], __ATOMIC_RELAXED);
}

/* Command t has completed: its slot's reply carries t or a later command (a
 * slot is reused only after its command completed), compared in the 32-bit
 * sequence space the kernel counts in. */
static bool completed(const wave_sim *sim, wave_ticket t) {
    return (int32_t)((uint32_t)(wave__ring_reply(sim, t) >> 32) - (uint32_t)t) >= 0;
}

/* The kernel reads commands in order: once one has completed, every slot
 * up to it may be written again after a lap of the ring. */
static bool saw_completed(wave_sim *sim, wave_ticket t) {
    if (!completed(sim, t)) return false;
    if (t > sim->seen_done) sim->seen_done = t;
    return true;
}

rk_status wave__ring_wait(wave_sim *sim, wave_ticket t) {
    if (saw_completed(sim, t)) return RK_OK;
    uint64_t since = wave__now_ns();
    for (unsigned i = 0;; i++) {
        if (saw_completed(sim, t)) return RK_OK;
        if (i < SPIN_BEFORE_YIELD) {
            wave__cpu_relax();
            continue;
        }
        sched_yield(); /* the kernel's workers may share this core (CPU backend) */
        if ((i & 255) == 0) {
            /* Progress: the earliest command not known complete completes. */
            bool moved = false;
            while (sim->known_done + 1 < t && completed(sim, sim->known_done + 1)) {
                sim->known_done++;
                moved = true;
            }
            uint64_t now = wave__now_ns();
            if (moved) {
                since = now;
            } else if (now - since > HUNG_AFTER_NS) {
                return wave__fail(RK_HUNG, "wave: the persistent kernel completed nothing for 60 s (waiting for command %llu, "
                                     "command %llu not done)",
                            (unsigned long long)t, (unsigned long long)(sim->known_done + 1));
            }
        }
    }
}

rk_status wave__ring_send(wave_sim *sim, uint32_t op, int x, int y, float value, uint32_t count,
                          wave_ticket *ticket) {
    wave_ticket t = sim->sent + 1;
    /* The slot last held command t - WAVE_RING_SLOTS: the kernel must have
     * taken it (known without reading its reply, a line the device writes,
     * when a later command was seen complete). */
    if (t > WAVE_RING_SLOTS && t - WAVE_RING_SLOTS > sim->seen_done) {
        rk_status s = wave__ring_wait(sim, t - WAVE_RING_SLOTS);
        if (s != RK_OK) return s;
    }
    uint32_t value_bits;
    memcpy(&value_bits, &value, sizeof value_bits);
    uint32_t fields[WAVE_CMD_WORDS] = {0};
    fields[WAVE_W_OP] = op;
    fields[WAVE_W_X] = (uint32_t)x;
    fields[WAVE_W_Y] = (uint32_t)y;
    fields[WAVE_W_VALUE] = value_bits;
    fields[WAVE_W_COUNT] = count;
    /* Whole tagged words in any order: the kernel checks every tag. */
    uint64_t *slot = sim->mb->cmd[t & (WAVE_RING_SLOTS - 1)];
    for (int w = 0; w < WAVE_CMD_WORDS; w++)
        __atomic_store_n(&slot[w], (uint64_t)(uint32_t)t << 32 | fields[w], __ATOMIC_RELAXED);
    sim->slot_op[t & (WAVE_RING_SLOTS - 1)] = (uint8_t)op;
    sim->sent = t;
    if (ticket) *ticket = t;
    return RK_OK;
}

rk_status wave__ring_call(wave_sim *sim, uint32_t op) {
    wave_ticket t = 0;
    rk_status s = wave__ring_send(sim, op, 0, 0, 0.0f, 0, &t);
    return s == RK_OK ? wave__ring_wait(sim, t) : s;
}
