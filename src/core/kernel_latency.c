/* Sampled send-to-take latency: see kernel_latency.h. */
#include "kernel_latency.h"

#include "backend_impl.h"

static size_t slot_of(uint64_t id) { return (size_t)(id / RK__LATENCY_EVERY) % RK__LATENCY_SLOTS; }

static size_t bucket_of(uint64_t ns) {
    if (ns < 32) return (size_t)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= 5 */
    size_t sub = (size_t)(ns >> (e - 4u)) & 15u;
    return 32u + (size_t)(e - 5u) * 16u + sub;
}

/* The middle of a bucket's range, in ns. */
static uint64_t bucket_value(size_t b) {
    if (b < 32) return b;
    unsigned e = (unsigned)((b - 32u) / 16u) + 5u;
    uint64_t sub = (b - 32u) % 16u;
    uint64_t low = (16u + sub) << (e - 4u), width = (uint64_t)1 << (e - 4u);
    return low + width / 2u;
}

void rk__latency_record_sends(rk__latency *l, uint64_t first_id, size_t count) {
    uint64_t id = first_id, end = first_id + count;
    while (id < end && !rk__latency_sampled(id)) id++;
    if (id >= end) return;
    uint64_t now = rk__now_ns();
    for (; id < end; id += RK__LATENCY_EVERY) {
        size_t s = slot_of(id);
        /* The time first, then the id that makes it valid (release). */
        atomic_store_explicit(&l->slot_ns[s], now, memory_order_relaxed);
        atomic_store_explicit(&l->slot_id[s], id, memory_order_release);
    }
}

void rk__latency_record_takes(rk__latency *l, const rk_reply_info *infos, size_t count) {
    uint64_t now = rk__now_ns();
    for (size_t i = 0; i < count; i++) {
        uint64_t id = infos[i].id;
        if (!rk__latency_sampled(id)) continue;
        size_t s = slot_of(id);
        if (atomic_load_explicit(&l->slot_id[s], memory_order_acquire) != id) continue; /* overwritten */
        uint64_t sent = atomic_load_explicit(&l->slot_ns[s], memory_order_relaxed);
        /* A slot reused meanwhile by a later id would have changed the id:
         * check again after reading the time. */
        if (atomic_load_explicit(&l->slot_id[s], memory_order_acquire) != id || sent > now) continue;
        uint64_t ns = now - sent;
        atomic_fetch_add_explicit(&l->buckets[bucket_of(ns)], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->samples, 1, memory_order_relaxed);
        uint64_t max = atomic_load_explicit(&l->max_ns, memory_order_relaxed);
        while (ns > max && !atomic_compare_exchange_weak_explicit(&l->max_ns, &max, ns, memory_order_relaxed,
                                                                  memory_order_relaxed)) {
        }
    }
}

void rk__latency_fill(rk__latency *l, rk_kernel_stats *out) {
    uint64_t total = 0;
    uint64_t local[RK__LATENCY_BUCKETS];
    for (size_t b = 0; b < RK__LATENCY_BUCKETS; b++) {
        local[b] = atomic_load_explicit(&l->buckets[b], memory_order_relaxed);
        total += local[b];
    }
    out->latency_samples = total;
    out->latency_max_ns = atomic_load_explicit(&l->max_ns, memory_order_relaxed);
    if (total == 0) return;
    uint64_t p50_rank = (total + 1) / 2, p99_rank = total - total / 100, seen = 0;
    for (size_t b = 0; b < RK__LATENCY_BUCKETS; b++) {
        if (!local[b]) continue;
        uint64_t before = seen;
        seen += local[b];
        if (before < p50_rank && seen >= p50_rank) out->latency_p50_ns = bucket_value(b);
        if (before < p99_rank && seen >= p99_rank) {
            out->latency_p99_ns = bucket_value(b);
            break;
        }
    }
    if (out->latency_p99_ns > out->latency_max_ns) out->latency_p99_ns = out->latency_max_ns;
    if (out->latency_p50_ns > out->latency_max_ns) out->latency_p50_ns = out->latency_max_ns;
}
