/* Sampled latency of a ring kernel: one request in RK__LATENCY_EVERY has its
 * send time kept; when its reply is taken (by receive or by a call's reaper)
 * the time from send to take goes into a histogram, from which statistics
 * read p50, p99 and the maximum. Sampling keeps the hot path to one mask
 * test per message; a sampled message costs two clock reads. */
#ifndef RK_KERNEL_LATENCY_H
#define RK_KERNEL_LATENCY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

enum {
    RK__LATENCY_EVERY = 16,   /* ids 1, 17, 33, ... are sampled */
    RK__LATENCY_SLOTS = 4096, /* send times kept: covers 65536 messages in flight */
    /* Values below 32 ns exactly, then 16 steps per power of two (about 6 %). */
    RK__LATENCY_BUCKETS = 32 + 59 * 16,
};

typedef struct rk__latency {
    _Atomic uint64_t slot_id[RK__LATENCY_SLOTS];
    _Atomic uint64_t slot_ns[RK__LATENCY_SLOTS];
    _Atomic uint64_t buckets[RK__LATENCY_BUCKETS];
    _Atomic uint64_t samples, max_ns;
} rk__latency;

static inline bool rk__latency_sampled(uint64_t id) { return id % RK__LATENCY_EVERY == 1; }

/* Sender: requests first_id .. first_id + count - 1 were accepted now. */
void rk__latency_record_sends(rk__latency *l, uint64_t first_id, size_t count);
/* Receiver: these replies were taken now. */
void rk__latency_record_takes(rk__latency *l, const rk_reply_info *infos, size_t count);

static inline void rk__latency_on_send(rk__latency *l, uint64_t first_id, size_t count) {
    if (count > 1 || rk__latency_sampled(first_id)) rk__latency_record_sends(l, first_id, count);
}

static inline void rk__latency_on_take(rk__latency *l, const rk_reply_info *infos, size_t count) {
    for (size_t i = 0; i < count; i++) {
        if (rk__latency_sampled(infos[i].id)) {
            rk__latency_record_takes(l, infos + i, count - i);
            return;
        }
    }
}

/* Fills the latency fields of a statistics snapshot. */
void rk__latency_fill(rk__latency *l, rk_kernel_stats *out);

#endif
