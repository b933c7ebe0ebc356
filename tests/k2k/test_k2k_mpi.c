/* K2K channels between two MPI ranks (mpirun -np 2 test_k2k_mpi <backend>):
 *
 *   rank 0: source (stage) --"sink"--> rank 1: sink     COUNT messages, each
 *           back (sink)  <--"back"--  rank 1: pinger   checked once, in order
 *
 * then the failure cases: a name nobody exports (RK_TIMEOUT naming it), a
 * message size that differs (refused, naming both kernels), and a peer that
 * goes silent mid-run: rank 1 stops itself (SIGSTOP, so the test runs on one
 * host) and rank 0 must see RK_TIMEOUT naming rank 1 from rk_mpi_check and
 * from the source's emits, without hanging; then it wakes rank 1 up and both
 * close down.
 *
 * <backend> hosts the sinks ("cpu" in CI; "cuda" on the GPU run: a CUDA
 * sink in each rank). Sources run there too where that backend can emit to
 * another process, else on the CPU (said so). Skips (77) without MPI, with
 * one rank, or without the backend. */
#include <signal.h>
#include <unistd.h>

#include "k2k_test.h"
#include "ringkernel/channel_mpi.h"

#ifdef K2K_SANITIZED
enum { COUNT = 3000 };
#else
enum { COUNT = 50000 };
#endif
enum { ACK = 999999999 };

static const uint64_t PEER_TIMEOUT = 1500000000u;

static rk_kernel *launch(rk_runtime *rt, const char *name, const char *handler) {
    rk_kernel *k = NULL;
    if (k2k_try_launch(rt, name, handler, 64, &k) != RK_OK) return NULL;
    CHECK_OK(rk_kernel_activate(k));
    return k;
}

/* A source on the sinks' backend when it can emit across processes, else CPU. */
static rk_kernel *launch_source(rk_runtime *rt, rk_runtime *cpu, const char *name) {
    rk_kernel *k = launch(rt, name, "stage");
    if (!k) {
        fprintf(stderr, "note: source '%s' runs on the CPU: %s\n", name, rk_last_error());
        k = launch(cpu, name, "stage");
    }
    CHECK(k != NULL);
    CHECK_OK(rk_channel_set_host_replies(k, RK_CHANNEL_REPLY_FAILURES));
    return k;
}

static rk_channel *connect_to(rk_mpi *m, rk_kernel **src, rk_runtime *cpu, const char *name) {
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg), .capacity = 32, .replies = RK_CHANNEL_REPLY_ALL};
    rk_channel *ch = NULL;
    rk_status s = rk_mpi_connect(m, *src, 0, name, &cd, K2K_SECONDS(30), &ch);
    if (s == RK_UNSUPPORTED) {
        fprintf(stderr, "note: source moves to the CPU: %s\n", rk_last_error());
        CHECK_OK(rk_kernel_terminate(*src, K2K_SECONDS(5)));
        CHECK_OK(rk_kernel_destroy(*src));
        *src = launch_source(cpu, cpu, "source");
        s = rk_mpi_connect(m, *src, 0, name, &cd, K2K_SECONDS(30), &ch);
    }
    CHECK_OK(s);
    return ch;
}

static void check_reply(const k2k_msg *r, const rk_reply_info *info, uint64_t seq) {
    CHECK_EQ(info->status, 0);
    CHECK_U64_EQ(r->seq, seq);
    CHECK_EQ(r->hops, 2);
    CHECK_U64_EQ(r->check, k2k_check_after(seq, 2));
    CHECK(info->id & RK_CHANNEL_MESSAGE_BIT);
    CHECK_U64_EQ(RK_CHANNEL_MESSAGE_SEQ(info->id), seq);
}

static void send_one(rk_kernel *k, uint64_t seq) {
    k2k_msg m = k2k_make(0, seq);
    CHECK_OK(rk_kernel_send(k, &m, sizeof m, K2K_SECONDS(30), NULL));
}

static void wait_delivered(rk_channel *ch, uint64_t n) {
    rk_channel_stats cs;
    for (int i = 0; i < 20000; i++) {
        CHECK_OK(rk_channel_stats_get(ch, &cs));
        if (cs.delivered >= n) return;
        usleep(1000);
    }
    CHECK_U64_EQ(cs.delivered, n);
}

static void rank0(rk_mpi *m, rk_runtime *rt, rk_runtime *cpu) {
    rk_kernel *back = launch(rt, "back", "sink");
    CHECK(back != NULL);
    CHECK_OK(rk_mpi_export(m, back, "back"));
    CHECK_STATUS(rk_mpi_export(m, back, "back"), RK_INVALID_ARGUMENT);
    rk_kernel *source = launch_source(rt, cpu, "source");
    rk_channel *ch = connect_to(m, &source, cpu, "sink");

    /* Bad input: nobody exports the name; the sizes differ. */
    rk_channel_desc cd = {.message_size = sizeof(k2k_msg)};
    CHECK_STATUS(rk_mpi_connect(m, source, 1, "nobody", &cd, 300000000u, NULL), RK_TIMEOUT);
    CHECK_STR_CONTAINS(rk_last_error(), "'nobody'");
    cd.message_size = 8;
    CHECK_STATUS(rk_mpi_connect(m, source, 2, "sink", &cd, K2K_SECONDS(30), NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "message_size");
    CHECK_STR_CONTAINS(rk_last_error(), "rank 1");
    /* Port 0 is taken: refused at once, before any message to the peer (whose
     * own refusal, e.g. a CUDA sink's need for RK_CHANNEL_REPLY_ALL, would hide it). */
    cd.message_size = sizeof(k2k_msg);
    CHECK_STATUS(rk_mpi_connect(m, source, 0, "sink", &cd, K2K_SECONDS(30), NULL), RK_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(rk_last_error(), "already connected");

    /* The stream: HOLD backpressure reaches rk_kernel_send. */
    for (uint64_t i = 0; i < COUNT; i++) send_one(source, i);
    wait_delivered(ch, COUNT);
    CHECK_OK(rk_mpi_check(m));

    /* Rank 1's pid comes back over its own channel; then the ack goes out. */
    k2k_msg r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_receive(back, &r, sizeof r, &info, K2K_SECONDS(30)));
    CHECK_EQ(r.hops, 2);
    pid_t peer = (pid_t)r.seq;
    send_one(source, ACK);
    wait_delivered(ch, COUNT + 1);

    /* Rank 1 stops itself: within the peer timeout (and a margin) the
     * channel fails with RK_TIMEOUT naming it. */
    rk_status s = RK_OK;
    for (int i = 0; i < 200 && s == RK_OK; i++) {
        usleep(50000);
        s = rk_mpi_check(m);
    }
    CHECK_STATUS(s, RK_TIMEOUT);
    CHECK_STR_CONTAINS(rk_last_error(), "rank 1");
    CHECK_STR_CONTAINS(rk_last_error(), "'source'");
    rk_channel_stats cs;
    CHECK_OK(rk_channel_stats_get(ch, &cs));
    CHECK_EQ(cs.closed, RK_TIMEOUT);
    /* The source's emit reports it: a failed reply to the host. */
    send_one(source, COUNT + 2);
    CHECK_OK(rk_kernel_receive(source, &r, sizeof r, &info, K2K_SECONDS(10)));
    CHECK_EQ(info.status, RK_TIMEOUT);
    kill(peer, SIGCONT);

    CHECK_OK(rk_kernel_terminate(source, K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(back, K2K_SECONDS(20)));
    CHECK_OK(rk_mpi_destroy(m));
    CHECK_OK(rk_kernel_destroy(source));
    CHECK_OK(rk_kernel_destroy(back));
    printf("rank 0: %d messages sent to rank 1; silent peer reported: ok\n", COUNT);
}

static void rank1(rk_mpi *m, rk_runtime *rt, rk_runtime *cpu) {
    rk_kernel *sink = launch(rt, "sink", "sink");
    CHECK(sink != NULL);
    CHECK_OK(rk_mpi_export(m, sink, "sink"));
    rk_kernel *pinger = launch_source(rt, cpu, "pinger");
    rk_channel *ch = connect_to(m, &pinger, cpu, "back");

    for (uint64_t i = 0; i < COUNT; i++) {
        k2k_msg r;
        rk_reply_info info;
        CHECK_OK(rk_kernel_receive(sink, &r, sizeof r, &info, K2K_SECONDS(60)));
        check_reply(&r, &info, i);
    }
    send_one(pinger, (uint64_t)getpid());
    wait_delivered(ch, 1);
    k2k_msg r;
    rk_reply_info info;
    CHECK_OK(rk_kernel_receive(sink, &r, sizeof r, &info, K2K_SECONDS(30)));
    CHECK_U64_EQ(r.seq, ACK);
    raise(SIGSTOP); /* silent until rank 0 has seen the timeout */

    /* Rank 0 gave up on us: terminate must not wait for it. */
    CHECK_OK(rk_kernel_terminate(pinger, K2K_SECONDS(20)));
    CHECK_OK(rk_kernel_terminate(sink, K2K_SECONDS(20)));
    CHECK_OK(rk_mpi_destroy(m));
    CHECK_OK(rk_kernel_destroy(pinger));
    CHECK_OK(rk_kernel_destroy(sink));
    printf("rank 1: %d messages received in order\n", COUNT);
}

int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "cpu";
    rk_mpi_desc md = {.peer_timeout_ns = PEER_TIMEOUT};
    rk_mpi *m = NULL;
    rk_status s = rk_mpi_create(&md, &m);
    if (s == RK_UNSUPPORTED) RK_SKIP("%s", rk_last_error());
    CHECK_OK(s);
    int rank = 0, size = 0;
    CHECK_OK(rk_mpi_rank(m, &rank, &size));
    if (size != 2) {
        CHECK_OK(rk_mpi_destroy(m));
        RK_SKIP("needs 2 ranks (mpirun -np 2), has %d", size);
    }
    rk_runtime_desc cd = {.backend = "cpu"}, bd = {.backend = backend};
    rk_runtime *cpu = NULL, *rt = NULL;
    CHECK_OK(rk_runtime_create(&cd, &cpu));
    s = rk_runtime_create(&bd, &rt);
    if (s != RK_OK) {
        /* Both ranks see the same machine: both skip. */
        fprintf(stderr, "SKIP: backend %s: %s\n", backend, rk_last_error());
        CHECK_OK(rk_mpi_destroy(m));
        CHECK_OK(rk_runtime_destroy(cpu));
        return 77;
    }
    if (rank == 0) rank0(m, rt, cpu);
    else rank1(m, rt, cpu);
    CHECK_OK(rk_runtime_destroy(rt));
    CHECK_OK(rk_runtime_destroy(cpu));
    return 0;
}
