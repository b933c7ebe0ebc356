/* The actor layer's private view of a kernel: struct rk_kernel (what
 * backends see) plus what only the core uses. Shared by kernel.c (launch,
 * lifecycle, stats) and kernel_io.c (send, receive). */
#ifndef RK_KERNEL_INTERNAL_H
#define RK_KERNEL_INTERNAL_H

#include <pthread.h>

#include "backend_impl.h"
#include "kernel_latency.h"
#include "kernel_wait.h"

typedef struct rk__kernel_core {
    struct rk_kernel k; /* first: a backend's rk_kernel * is our pointer */

    /* Activate, deactivate and the start of terminate change the state and
     * tell the backend as one step. */
    pthread_mutex_t lifecycle_lock;
    /* One taker of replies at a time: receive, or terminate moving replies
     * into the held buffer. */
    pthread_mutex_t receive_lock;
    /* poll calls are serialized; the failure fields are written under it. */
    pthread_mutex_t poll_lock;

    /* Senders inside try_send. Terminate sets TERMINATING, then waits for
     * this to reach 0, so no message slips in after the backend was told to
     * drain (both sides use seq_cst: each sees the other's write). */
    _Atomic unsigned senders_in_flight;
    _Atomic bool terminate_requested;
    _Atomic bool backend_terminated; /* poll reported has_terminated */

    _Atomic int failure;             /* rk_status; set before state becomes FAILED */
    char failure_reason[256];

    unsigned char *pad;              /* sender only: a short message padded to message_size */

    /* Many clients (kernel_client.c) and latency (kernel_latency.c). */
    _Atomic bool sender_busy;        /* a raw send is running: a second at once is refused */
    _Atomic bool relay_fed;          /* a host relay sends too: other senders wait their turn */
    _Atomic(struct rk__clients *) clients; /* set by the first call; raw receive is then refused */
    rk__latency latency;
    _Atomic bool cores_warned;       /* kernel_cores.c warned once */
} rk__kernel_core;

static inline rk__kernel_core *rk__core_of(rk_kernel *k) { return (rk__kernel_core *)k; }

/* Polls the backend under poll_lock and applies what it says: a failure
 * moves the kernel to FAILED, has_terminated is remembered. out may be NULL. */
void rk__kernel_refresh(rk__kernel_core *c, rk__control *out);

/* Records "<fn>: kernel '<name>' failed: <reason>" and returns the failure. */
rk_status rk__kernel_fail_failed(rk__kernel_core *c, const char *fn);

/* Moves every reply the backend has into the held buffer (terminate). */
rk_status rk__kernel_hold_replies(rk__kernel_core *c);

/* One step of a blocking call's wait: the backend's wait (capped at a
 * millisecond, so the caller polls again) where it has one, else b's
 * backoff. False once b's deadline has passed. */
bool rk__kernel_wait(rk__kernel_core *c, rk__backoff *b);

/* Replies waiting in the held buffer. */
size_t rk__kernel_held_pending(rk__kernel_core *c);

/* Counts the runtime's live kernels (launch +1, destroy -1), so
 * rk_runtime_destroy can refuse while any is alive. */
void rk__runtime_kernels_add(rk_runtime *rt, int delta);
/* Takes up to max replies without waiting (held ones first), counting them
 * and sampling latency. The one way replies leave the kernel. */
rk_status rk__kernel_take_replies(rk__kernel_core *c, unsigned char *replies, size_t stride, rk_reply_info *infos,
                                  size_t max, size_t *taken);

/* The host relay's send (channel_relay.c): one non-blocking attempt to
 * queue count messages with ids first_id, first_id+1, ..., taking turns
 * with the host's own sends. RK_TERMINATED, or the kernel's failure, once
 * it takes no more. */
rk_status rk__kernel_relay_send(rk_kernel *k, const void *messages, size_t stride, size_t count, uint64_t first_id,
                                size_t *accepted);

/* kernel_client.c: frees the call machinery (kernel destroy); fills the
 * statistics it keeps. */
void rk__clients_free(rk__kernel_core *c);
void rk__clients_fill_stats(rk__kernel_core *c, rk_kernel_stats *out);
/* kernel_cores.c: warns once per kernel when its persistent CPU workers and
 * `callers` threads using it outnumber the cores. */
void rk__kernel_check_cores(rk__kernel_core *c, unsigned callers);
/* Refuses what a kernel desc asks of calls and ordering (launch). */
rk_status rk__clients_validate_desc(const rk_kernel_desc *d);

#endif
