/* The wave showcase's commands (examples/wave), reached from `rk demo wave`
 * (cmd_demo.c) and `rk bench seed-table` (cmd_bench.c). Each takes the words
 * after the command name, its own name first, and returns an rk exit code. */
#ifndef RK_TOOL_SHOWCASE_CLI_H
#define RK_TOOL_SHOWCASE_CLI_H

int rk_demo_wave(int argc, char **argv);            /* demo_wave.c */
int rk_bench_seed_table_cmd(int argc, char **argv); /* bench_seed_table_cmd.c */

#endif
