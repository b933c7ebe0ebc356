#include "cuda_test_util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "cuda/nvrtc.h"

static const char *volatile current_phase = "starting";

static void on_alarm(int sig) {
    (void)sig;
    static const char head[] = "\nTEST STUCK in phase: ";
    const char *p = current_phase;
    size_t n = 0;
    while (p[n]) n++;
    if (write(2, head, sizeof head - 1) < 0 || write(2, p, n) < 0 || write(2, "\n", 1) < 0) _Exit(3);
    _Exit(3);
}

/* A failed CHECK calls exit(1); the driver's exit handler would then wait
 * for persistent kernels that never stop. Registered after the driver's
 * (atexit runs last-in first-out), this ends the process first. */
static volatile int finished_ok;

static void leave_quickly(void) {
    if (finished_ok) return;
    fflush(stdout);
    fflush(stderr);
    _Exit(1);
}

void cuda_test_done(void) { finished_ok = 1; }

void cuda_test_phase(const char *phase) {
    current_phase = phase;
    fprintf(stderr, "[phase] %s\n", phase);
}

rk_runtime *cuda_test_runtime(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    alarm((unsigned)cuda_test_env_u64("RK_TEST_ALARM", 500));
    const rk_backend *cuda = NULL;
    CHECK_OK(rk_backend_find("cuda", &cuda));
    uint32_t count = 0;
    if (rk_backend_device_count(cuda, &count) != RK_OK || count == 0)
        RK_SKIP("no CUDA device: %s", rk_backend_unavailable_reason(cuda));
    rk_runtime *rt = NULL;
    rk_runtime_desc desc = {.backend = "cuda:0"};
    CHECK_OK(rk_runtime_create(&desc, &rt));
    atexit(leave_quickly);
    return rt;
}

uint64_t cuda_test_env_u64(const char *name, uint64_t fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    return strtoull(v, NULL, 0);
}

void cuda_test_require_nvrtc(void) {
    char reason[512];
    if (rk__nvrtc_probe(reason, sizeof reason) != RK_OK) RK_SKIP("%s", reason);
}

/* ---- the checking handler ------------------------------------------------------ */

const char check_handler_source[] =
    "typedef struct Req { unsigned int seq_lo, seq_hi, a, b; unsigned int pad[12]; } Req;\n"
    "typedef struct Resp { unsigned int seq_lo, seq_hi, sum, prod; unsigned int echo[12]; } Resp;\n"
    "typedef struct State { unsigned long long count; } State;\n"
    "RK_HANDLER int check(const Req *req, Resp *resp, State *state) {\n"
    "    resp->seq_lo = req->seq_lo;\n"
    "    resp->seq_hi = req->seq_hi;\n"
    "    resp->sum = req->a + req->b;\n"
    "    resp->prod = req->a * req->b;\n"
    "    for (int i = 0; i < 12; i++) resp->echo[i] = req->pad[i] ^ 0x5a5a5a5au;\n"
    "    atomic_add_u64(&state->count, 1);\n"
    "    return (req->a % 1000u) == 999u ? -3 : 0;\n"
    "}\n";

static uint32_t mix32(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 29;
    return (uint32_t)x;
}

void check_fill(check_req *req, uint64_t seq) {
    req->seq_lo = (uint32_t)seq;
    req->seq_hi = (uint32_t)(seq >> 32);
    req->a = mix32(seq);
    req->b = mix32(seq + 0x9e3779b9u);
    for (int i = 0; i < 12; i++) req->pad[i] = (uint32_t)seq * 31u + (uint32_t)i;
}

bool check_fails(uint64_t seq) { return mix32(seq) % 1000u == 999u; }

bool check_reply(const check_resp *resp, int32_t status, uint64_t seq) {
    check_req req;
    check_fill(&req, seq);
    bool ok = resp->seq_lo == req.seq_lo && resp->seq_hi == req.seq_hi && resp->sum == req.a + req.b &&
              resp->prod == req.a * req.b && status == (check_fails(seq) ? -3 : 0);
    for (int i = 0; i < 12; i++) ok = ok && resp->echo[i] == (req.pad[i] ^ 0x5a5a5a5au);
    if (!ok)
        fprintf(stderr, "wrong reply for seq %llu: seq %u:%u sum %u prod %u status %d\n", (unsigned long long)seq,
                resp->seq_hi, resp->seq_lo, resp->sum, resp->prod, status);
    return ok;
}

#include <time.h>

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *sender(void *arg) {
    check_run *run = arg;
    uint32_t batch = run->batch ? run->batch : 256;
    check_req *reqs = calloc(batch, sizeof *reqs);
    uint64_t seq = 0;
    run->send_status = RK_OK;
    while (seq < run->messages) {
        size_t n = run->messages - seq < batch ? (size_t)(run->messages - seq) : batch;
        for (size_t i = 0; i < n; i++) check_fill(&reqs[i], seq + i);
        size_t sent = 0;
        rk_status s = rk_kernel_send_batch(run->k, reqs, sizeof *reqs, n, RK_WAIT_FOREVER, &sent, NULL);
        seq += sent;
        if (s != RK_OK) {
            run->send_status = s;
            break;
        }
    }
    run->sent = seq;
    free(reqs);
    return NULL;
}

static void *receiver(void *arg) {
    check_run *run = arg;
    enum { MAX = 512 };
    check_resp *resps = calloc(MAX, sizeof *resps);
    rk_reply_info *infos = calloc(MAX, sizeof *infos);
    uint64_t seq = 0;
    run->receive_status = RK_OK;
    for (;;) {
        if (!run->stop_on_refusal && seq >= run->messages) break;
        size_t got = 0;
        rk_status s = rk_kernel_receive_batch(run->k, resps, sizeof *resps, infos, MAX, 30ull * 1000000000u, &got);
        for (size_t i = 0; i < got; i++, seq++) {
            /* Ids come back in order, one per request: nothing lost or duplicated. */
            if (infos[i].id != run->first_id + seq) {
                if (run->wrong++ < 5)
                    fprintf(stderr, "reply %llu has id %llu, expected %llu\n", (unsigned long long)seq,
                            (unsigned long long)infos[i].id, (unsigned long long)(run->first_id + seq));
            }
            if (!check_reply(&resps[i], infos[i].status, seq)) run->wrong++;
            if (infos[i].status < 0) run->handler_errors++;
        }
        if (s != RK_OK) {
            run->receive_status = s;
            break;
        }
    }
    run->received = seq;
    free(resps);
    free(infos);
    return NULL;
}

void check_run_start(check_run *run) {
    run->sent = run->received = run->wrong = run->handler_errors = 0;
    run->first_id = 0;
    run->seconds = seconds_now();
    /* The first id is known before the receiver needs it: read it now. */
    rk_kernel_stats st;
    if (rk_kernel_stats_get(run->k, &st) == RK_OK) run->first_id = st.messages_sent + 1;
    pthread_create(&run->threads[0], NULL, sender, run);
    pthread_create(&run->threads[1], NULL, receiver, run);
}

void check_run_join(check_run *run) {
    pthread_join(run->threads[0], NULL);
    pthread_join(run->threads[1], NULL);
    run->seconds = seconds_now() - run->seconds;
}
