/* Golden case: a cooperative kernel (grid_sync between phases), with a
 * system-scope release/acquire flag and a polling pause. Launch it
 * cooperatively, with every block resident. */
#include <ringkernel/dsl.h>

RK_KERNEL void grid_phases(int *slots, int *out, uint32_t *flag, int rounds) {
    int b = block_idx_x(), blocks = grid_dim_x();
    for (int r = 0; r < rounds; r++) {
        if (thread_idx_x() == 0) slots[b] = b * 10 + r;
        grid_sync();
        if (thread_idx_x() == 0) out[b * rounds + r] = slots[(b + 1) % blocks];
        grid_sync();
    }
    if (b == 0 && thread_idx_x() == 0) {
        store_release_u32(flag, (uint32_t)rounds);
        while (load_acquire_u32(flag) != (uint32_t)rounds) sleep_ns(100);
    }
}
