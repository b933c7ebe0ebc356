/* Regression (issue 21): atomics on a member of a struct in a buffer. */
#include <ringkernel/dsl.h>

typedef struct Cell {
    int count;
    int sum;
} Cell;

RK_KERNEL void struct_atomic(const int *v, Cell *cells, int ncells, int n) {
    int i = block_idx_x() * block_dim_x() + thread_idx_x();
    if (i >= n) return;
    int c = (v[i] < 0 ? -v[i] : v[i]) % ncells;
    atomic_add_i32(&cells[c].count, 1);
    atomic_add_i32(&cells[c].sum, v[i]);
}
