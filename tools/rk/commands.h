/* The rk command-line tool's commands, one file each (cmd_NAME.c).
 * Each returns the process exit code: 0 success, 1 failure, 2 usage error,
 * 77 skipped (e.g. the requested backend is unavailable for a benchmark). */
#ifndef RK_TOOL_COMMANDS_H
#define RK_TOOL_COMMANDS_H

int rk_cmd_info(int argc, char **argv);
int rk_cmd_demo(int argc, char **argv);
int rk_cmd_bench(int argc, char **argv);
int rk_cmd_transpile(int argc, char **argv);
int rk_bench_soak_cmd(int argc, char **argv); /* rk bench soak */
int rk_cmd_conformance(int argc, char **argv);
int rk_cmd_check(int argc, char **argv);
int rk_cmd_header(int argc, char **argv);

#endif
