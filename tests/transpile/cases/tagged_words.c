/* Golden case: whole 8-byte tagged words, written and read with relaxed
 * system-scope accesses (the format of the ring kernels' queues and of the
 * wave showcase's commands). Each thread writes its word as
 * (tag << 32) | payload; after a block barrier it reads its neighbour's
 * word in the block and keeps the payload only if the tag is current.
 * Thread 0 then publishes the block's flag with a GPU-scope release (a
 * band's progress in the wave showcase), which every thread reads back
 * with an acquire after the next barrier. */
#include <ringkernel/dsl.h>

RK_KERNEL void tagged_words(uint64_t *words, uint32_t *out, uint64_t *flags, uint32_t tag, int n) {
    int base = block_idx_x() * block_dim_x();
    int i = base + thread_idx_x();
    int j = base + (thread_idx_x() + 1) % block_dim_x();
    if (i < n) store_relaxed_u64(&words[i], (uint64_t)tag << 32 | (uint64_t)(uint32_t)(i * 3));
    sync_threads();
    if (i < n) {
        uint32_t payload = 0xffffffffu;
        if (j < n) {
            uint64_t w = load_relaxed_u64(&words[j]);
            if ((uint32_t)(w >> 32) == tag) payload = (uint32_t)w;
        }
        out[i] = payload;
    }
    if (thread_idx_x() == 0) store_release_gpu_u64(&flags[block_idx_x()], tag);
    sync_threads();
    if (i < n && load_acquire_gpu_u64(&flags[block_idx_x()]) != tag) out[i] = 0xfffffffeu;
}
