/* Helpers shared by the CUDA tests: opening a CUDA runtime or skipping. */
#ifndef RK_CUDA_TEST_UTIL_H
#define RK_CUDA_TEST_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ringkernel/ringkernel.h"

/* A runtime on cuda:0, or exit 77 with the reason when there is no GPU. */
rk_runtime *cuda_test_runtime(void);

/* Names what the test is doing now. If the test is still running after
 * $RK_TEST_ALARM seconds (default 500), it prints the phase and exits 3
 * without running exit handlers (a persistent kernel may still be running). */
void cuda_test_phase(const char *phase);

/* Marks a clean finish: exit handlers then run normally. Until then a
 * failing CHECK ends the process without waiting for the GPU. */
void cuda_test_done(void);

/* An environment variable as a number, or fallback when unset. */
uint64_t cuda_test_env_u64(const char *name, uint64_t fallback);

/* Skips (exit 77) unless NVRTC can be loaded. */
void cuda_test_require_nvrtc(void);

#endif

/* ---- the checking handler shared by the ring tests ------------------------
 * 64-byte request and reply. The reply is a function of the request, so a
 * receiver can verify every reply it gets; requests whose a % 1000 == 999
 * make the handler return -3 (a handler error). */
typedef struct check_req {
    uint32_t seq_lo, seq_hi, a, b;
    uint32_t pad[12];
} check_req;

typedef struct check_resp {
    uint32_t seq_lo, seq_hi, sum, prod;
    uint32_t echo[12];
} check_resp;

extern const char check_handler_source[]; /* handler "check", state: one uint64 counter */

/* Fills the request for sequence number seq (0, 1, 2, ...). */
void check_fill(check_req *req, uint64_t seq);
/* True when the reply and its status are right for seq; prints why not. */
bool check_reply(const check_resp *resp, int32_t status, uint64_t seq);
/* Whether request seq makes the handler fail. */
bool check_fails(uint64_t seq);

/* Drives one kernel with a sender and a receiver thread: sends `messages`
 * requests in batches, receives and verifies every reply (in order, none
 * lost or duplicated). Returns the number of wrong replies; *handler_errors
 * counts replies with a negative status (expected ones included). When stop
 * is set, the sender stops at the first refused send and the receiver takes
 * replies until RK_TERMINATED; *sent then says how many were accepted. */
typedef struct check_run {
    rk_kernel *k;
    uint64_t messages;
    uint32_t batch;
    uint64_t first_id; /* id of sequence number 0 */
    volatile int stop_on_refusal;
    /* results */
    uint64_t sent, received, wrong, handler_errors;
    rk_status send_status, receive_status;
    double seconds;
    pthread_t threads[2];
} check_run;

void check_run_start(check_run *run);
void check_run_join(check_run *run);
