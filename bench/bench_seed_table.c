/* rk bench seed-table: being written (examples/wave drives it). */
typedef int rk_bench_seed_table_pending_;
