/* A lock-free hash set of positive ints: open addressing with linear
 * probing, slots claimed with atomic_cas. A second kernel looks keys up. */
#include <ringkernel/dsl.h>

#define EMPTY 0

RK_DEVICE unsigned hash_key(int key) { return ((unsigned)key * 2654435761u) >> 8; }

RK_KERNEL void hashset_insert(int *table, int capacity, const int *keys, int *inserted, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int key = keys[i];
    unsigned slot = hash_key(key) % (unsigned)capacity;
    for (int probe = 0; probe < capacity; probe++) {
        int prev = atomic_cas_i32(&table[slot], EMPTY, key);
        if (prev == EMPTY) {
            atomic_add_i32(inserted, 1);
            return;
        }
        if (prev == key) return; /* already present */
        slot = (slot + 1u) % (unsigned)capacity;
    }
}

RK_KERNEL void hashset_lookup(const int *table, int capacity, const int *queries, int *found, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int key = queries[i];
    unsigned slot = hash_key(key) % (unsigned)capacity;
    found[i] = 0;
    for (int probe = 0; probe < capacity; probe++) {
        int v = table[slot];
        if (v == key) {
            found[i] = 1;
            break;
        }
        if (v == EMPTY) break;
        slot = (slot + 1u) % (unsigned)capacity;
    }
}
