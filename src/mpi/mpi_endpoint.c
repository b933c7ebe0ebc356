/* The MPI endpoint: creating and closing it, the progress thread, sending
 * (non-blocking, buffers kept until MPI is done with them) and liveness
 * (heartbeats, and a deadline per peer). See mpi_internal.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

enum { IDLE_SLEEP_NS = 50000 };

static uint64_t timeout_from_env(void) {
    const char *v = getenv("RK_MPI_TIMEOUT_MS");
    if (v && *v) {
        char *end = NULL;
        unsigned long long ms = strtoull(v, &end, 10);
        if (end && *end == '\0' && ms > 0 && ms < 86400000ull) return (uint64_t)ms * 1000000u;
        rk__log(RK_LOG_WARN, "RK_MPI_TIMEOUT_MS='%s' is not a positive number of milliseconds; using 10000", v);
    }
    return 10000000000ull;
}

/* ---- sending ---------------------------------------------------------------------- */

rk_status rk__mpi_send(rk_mpi *m, int peer, const wire_header *h, const void *payload, size_t bytes) {
    if (m->send_count == m->send_capacity) {
        size_t cap = m->send_capacity ? m->send_capacity * 2 : 64;
        pending_send *p = realloc(m->sends, cap * sizeof *p);
        if (!p) return RK_OUT_OF_MEMORY;
        m->sends = p;
        m->send_capacity = cap;
    }
    size_t total = sizeof *h + bytes;
    unsigned char *buf = malloc(total);
    if (!buf) return RK_OUT_OF_MEMORY;
    memcpy(buf, h, sizeof *h);
    if (bytes) memcpy(buf + sizeof *h, payload, bytes);
    pending_send *ps = &m->sends[m->send_count];
    if (MPI_Isend(buf, (int)total, MPI_BYTE, peer, RK__MPI_TAG, m->comm, &ps->req) != MPI_SUCCESS) {
        free(buf);
        return RK_IO_ERROR;
    }
    ps->buf = buf;
    m->send_count++;
    return RK_OK;
}

/* Frees the buffers of sends MPI has finished. */
static void reap_sends(rk_mpi *m) {
    size_t kept = 0;
    for (size_t i = 0; i < m->send_count; i++) {
        int done = 0;
        MPI_Test(&m->sends[i].req, &done, MPI_STATUS_IGNORE);
        if (done) {
            free(m->sends[i].buf);
        } else {
            m->sends[kept++] = m->sends[i];
        }
    }
    m->send_count = kept;
}

/* Sends that a dead peer will never take: freed without completing. */
static void abandon_sends(rk_mpi *m) {
    for (size_t i = 0; i < m->send_count; i++) {
        MPI_Cancel(&m->sends[i].req);
        MPI_Request_free(&m->sends[i].req);
        free(m->sends[i].buf);
    }
    m->send_count = 0;
}

void rk__mpi_note_failure(rk_mpi *m, rk_status s, const char *why) {
    rk__log(RK_LOG_ERROR, "mpi: %s", why);
    if (m->failure != RK_OK) return;
    m->failure = s;
    snprintf(m->failure_why, sizeof m->failure_why, "%s", why);
}

/* ---- the progress thread ----------------------------------------------------------- */

static bool receive_all(rk_mpi *m) {
    bool any = false;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, RK__MPI_TAG, m->comm, &flag, &st) != MPI_SUCCESS || !flag) return any;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((size_t)count > m->rx_capacity) {
            unsigned char *p = realloc(m->rx, (size_t)count);
            if (!p) return any; /* try again next round */
            m->rx = p;
            m->rx_capacity = (size_t)count;
        }
        MPI_Recv(m->rx, count, MPI_BYTE, st.MPI_SOURCE, RK__MPI_TAG, m->comm, MPI_STATUS_IGNORE);
        any = true;
        m->last_heard[st.MPI_SOURCE] = rk__now_ns();
        if ((size_t)count < sizeof(wire_header)) continue;
        wire_header h;
        memcpy(&h, m->rx, sizeof h);
        h.name[RK__MPI_NAME - 1] = '\0';
        if (h.kind == WIRE_BYE) {
            m->bye[st.MPI_SOURCE] = true;
            rk__mpi_peer_lost(m, st.MPI_SOURCE, RK_TERMINATED, "closed its endpoint");
            continue;
        }
        rk__mpi_on_message(m, st.MPI_SOURCE, &h, m->rx + sizeof h, (size_t)count - sizeof h);
    }
}

static void check_liveness(rk_mpi *m, uint64_t now) {
    bool beat = now - m->last_beat_ns >= m->heartbeat_ns;
    if (beat) m->last_beat_ns = now;
    for (int p = 0; p < m->size; p++) {
        if (p == m->rank || m->bye[p] || !rk__mpi_peer_linked(m, p)) continue;
        if (beat) {
            wire_header h = {.kind = WIRE_HEARTBEAT};
            rk__mpi_send(m, p, &h, NULL, 0);
        }
        if (m->last_heard[p] == 0) m->last_heard[p] = now;
        /* last_heard may be later than now (a message taken this round). */
        if (now > m->last_heard[p] && now - m->last_heard[p] > m->timeout_ns) {
            char what[96];
            snprintf(what, sizeof what, "sent nothing for %llu ms (dead or hung)",
                     (unsigned long long)((now - m->last_heard[p]) / 1000000u));
            rk__mpi_peer_lost(m, p, RK_TIMEOUT, what);
        }
    }
}

static void *progress_main(void *arg) {
    rk_mpi *m = arg;
    unsigned idle = 0;
    pthread_mutex_lock(&m->lock);
    while (!m->stopped) {
        uint64_t now = rk__now_ns();
        bool moved = receive_all(m);
        moved |= rk__mpi_pump_links(m, now);
        check_liveness(m, now);
        reap_sends(m);
        if (m->stopping && !rk__mpi_links_finished(m) && now > m->stop_deadline_ns) {
            /* A peer that is alive but takes nothing: give up on it. */
            for (int p = 0; p < m->size; p++)
                if (p != m->rank && rk__mpi_peer_linked(m, p))
                    rk__mpi_peer_lost(m, p, RK_TIMEOUT, "took no messages while this endpoint closed");
        }
        if (m->stopping && rk__mpi_links_finished(m)) m->stopped = true;
        pthread_cond_broadcast(&m->changed);
        pthread_mutex_unlock(&m->lock);
        if (moved) {
            idle = 0;
        } else {
            /* Poll gently when nothing moves: the machine may have few cores. */
            struct timespec ts = {0, idle < 100 ? 0 : IDLE_SLEEP_NS};
            idle++;
            if (ts.tv_nsec) nanosleep(&ts, NULL);
            else sched_yield();
        }
        pthread_mutex_lock(&m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* ---- the public calls ---------------------------------------------------------------- */

static rk_status init_mpi(rk_mpi *m) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) return rk__fail(RK_BAD_STATE, "rk_mpi_create: MPI has been finalized already");
    int provided = 0;
    if (!initialized) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return rk__fail(RK_IO_ERROR, "rk_mpi_create: MPI_Init_thread failed");
        m->owns_mpi = true;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        if (m->owns_mpi) MPI_Finalize();
        m->owns_mpi = false;
        return rk__fail(RK_UNSUPPORTED,
                        "rk_mpi_create: MPI gives thread level %d; the progress thread needs MPI_THREAD_SERIALIZED or "
                        "more (initialize MPI with MPI_Init_thread)",
                        provided);
    }
    return RK_OK;
}

static rk_status mpi_create(const rk_mpi_desc *desc, rk_mpi **out) {
    static const char fn[] = "rk_mpi_create";
    if (!out) return rk__fail(RK_NULL_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    rk_mpi_desc d = desc ? *desc : (rk_mpi_desc){0};
    if (d.transport == RK_MPI_TRANSPORT_DEVICE)
        return rk__fail(RK_UNSUPPORTED, "%s: RK_MPI_TRANSPORT_DEVICE (CUDA-aware MPI) is not in this version; use "
                        "RK_MPI_TRANSPORT_HOST", fn);
    if (d.transport != RK_MPI_TRANSPORT_DEFAULT && d.transport != RK_MPI_TRANSPORT_HOST)
        return rk__fail(RK_INVALID_ARGUMENT, "%s: transport %d is not an rk_mpi_transport", fn, (int)d.transport);
    rk_mpi *m = calloc(1, sizeof *m);
    if (!m) return rk__fail(RK_OUT_OF_MEMORY, "%s: out of memory", fn);
    rk_status s = init_mpi(m);
    if (s != RK_OK) {
        free(m);
        return s;
    }
    MPI_Comm base = d.comm ? *(const MPI_Comm *)d.comm : MPI_COMM_WORLD;
    if (MPI_Comm_dup(base, &m->comm) != MPI_SUCCESS) {
        if (m->owns_mpi) MPI_Finalize();
        free(m);
        return rk__fail(RK_IO_ERROR, "%s: MPI_Comm_dup failed", fn);
    }
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    m->timeout_ns = d.peer_timeout_ns ? d.peer_timeout_ns : timeout_from_env();
    m->heartbeat_ns = m->timeout_ns / 8 > 200000000u ? 200000000u : m->timeout_ns / 8;
    m->last_heard = calloc((size_t)m->size, sizeof *m->last_heard);
    m->bye = calloc((size_t)m->size, sizeof *m->bye);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->changed, NULL);
    if (!m->last_heard || !m->bye || pthread_create(&m->thread, NULL, progress_main, m) != 0) {
        s = rk__fail(RK_OUT_OF_MEMORY, "%s: cannot start the progress thread", fn);
        MPI_Comm_free(&m->comm);
        if (m->owns_mpi) MPI_Finalize();
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->changed);
        free(m->last_heard);
        free(m->bye);
        free(m);
        return s;
    }
    *out = m;
    return RK_OK;
}

static rk_status mpi_destroy(rk_mpi *m) {
    if (!m) return rk__fail(RK_NULL_ARGUMENT, "rk_mpi_destroy: m is NULL");
    /* The thread finishes the out links (close, send, FIN) within the
     * peers' liveness deadline, then stops. */
    pthread_mutex_lock(&m->lock);
    m->stopping = true;
    m->stop_deadline_ns = rk__now_ns() + m->timeout_ns;
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    for (int p = 0; p < m->size; p++) {
        if (p == m->rank) continue;
        wire_header h = {.kind = WIRE_BYE};
        rk__mpi_send(m, p, &h, NULL, 0);
    }
    /* Goodbyes and the last data leave before the communicator goes; a peer
     * that died never takes them. */
    uint64_t deadline = rk__now_ns() + m->timeout_ns;
    while (m->send_count && rk__now_ns() < deadline) {
        reap_sends(m);
        struct timespec ts = {0, IDLE_SLEEP_NS};
        nanosleep(&ts, NULL);
    }
    abandon_sends(m);
    rk__mpi_links_release(m);
    MPI_Comm_free(&m->comm);
    if (m->owns_mpi) MPI_Finalize();
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m->sends);
    free(m->rx);
    free(m->tx);
    free(m->last_heard);
    free(m->bye);
    free(m);
    return RK_OK;
}

static rk_status mpi_rank(rk_mpi *m, int *rank, int *size) {
    if (!m) return rk__fail(RK_NULL_ARGUMENT, "rk_mpi_rank: m is NULL");
    if (rank) *rank = m->rank;
    if (size) *size = m->size;
    return RK_OK;
}

static rk_status mpi_check(rk_mpi *m) {
    if (!m) return rk__fail(RK_NULL_ARGUMENT, "rk_mpi_check: m is NULL");
    pthread_mutex_lock(&m->lock);
    rk_status s = m->failure;
    char why[sizeof m->failure_why];
    memcpy(why, m->failure_why, sizeof why);
    pthread_mutex_unlock(&m->lock);
    return s == RK_OK ? RK_OK : rk__fail(s, "rk_mpi_check: %s", why);
}

/* What libringkernel's rk_mpi_* calls find (mpi_loader.c). */
const rk__mpi_plugin rk__mpi_plugin_v1 = {
    .abi = RK__MPI_PLUGIN_ABI,
    .create = mpi_create,
    .destroy = mpi_destroy,
    .rank = mpi_rank,
    .export_kernel = rk__mpi_export,
    .connect = rk__mpi_connect,
    .check = mpi_check,
};
