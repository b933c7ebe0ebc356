/* K2K channels through MPI (include/ringkernel/channel_mpi.h): the endpoint,
 * its links and the wire format, shared by mpi_endpoint.c (lifetime, the
 * progress thread, sending, liveness) and mpi_links.c (export, connect, the
 * protocol of one link).
 *
 * Only the progress thread calls MPI between create and destroy; user calls
 * change the tables under m->lock and wait on m->changed. The thread holds
 * m->lock while it works (its MPI calls never block), so the lifecycle
 * hooks and user calls see a consistent state.
 *
 * One link is one channel: an out link on the sending rank (the source
 * kernel's channel ring, consumed here) and an in link on the receiving
 * rank (a relay sink into the exported kernel). Credit: the sender sends
 * at most capacity messages beyond what the receiver said its kernel took. */
#ifndef RK_MPI_INTERNAL_H
#define RK_MPI_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/channel_relay.h"
#include "mpi_plugin.h"

enum { RK__MPI_MAX_LINKS = 64, RK__MPI_MAX_EXPORTS = 64, RK__MPI_NAME = 64, RK__MPI_TAG = 0x524b };

typedef enum wire_kind {
    WIRE_LOOKUP = 1, /* out link -> every rank: who exports name? (repeated until answered) */
    WIRE_ACCEPT,     /* exporter -> out link: a = in link id, d = capacity */
    WIRE_REFUSE,     /* exporter -> out link: c = rk_status, d = the kernel's message_size, name = its name */
    WIRE_DATA,       /* out -> in link: a = first sequence, c = count, then count messages */
    WIRE_CREDIT,     /* in -> out link: a = messages the kernel has taken */
    WIRE_CLOSE,      /* in -> out link: c = why (RK_TERMINATED, RK_DEVICE_FAULT): stop emitting */
    WIRE_FIN,        /* out -> in link: a = messages sent in all; nothing follows */
    WIRE_HEARTBEAT,  /* to every peer with a live link */
    WIRE_BYE,        /* the endpoint is going away */
} wire_kind;

typedef struct wire_header {
    uint32_t kind, link; /* link: the receiver's link id */
    uint64_t a, b;
    int32_t c;
    uint32_t d;
    char name[RK__MPI_NAME];
} wire_header;

typedef enum link_state { LINK_FREE = 0, LINK_LOOKING, LINK_OPEN, LINK_DONE, LINK_FAILED } link_state;

typedef struct out_link {
    link_state state;
    int peer;               /* rank, once accepted */
    uint32_t remote;        /* the peer's in link id */
    char name[RK__MPI_NAME], src[RK__MPI_NAME]; /* the exported name; the source kernel */
    rk_channel_desc desc;   /* as asked (capacity may be 0 until accepted) */
    rk_channel *up;         /* src emits here; the progress thread consumes it */
    uint64_t sent, credit;  /* credit: the peer's kernel took this many */
    uint64_t next_lookup_ns, deadline_ns;
    bool closing, fin_sent; /* the peer asked to close; FIN went out */
    rk_status result;       /* connect's answer; a failure's status */
    char why[512];          /* why it failed */
} out_link;

typedef struct in_link {
    link_state state;
    int peer;
    uint32_t remote;        /* the peer's out link id */
    int exported;           /* index in m->exports */
    rk__relay_sink *sink;   /* NULL once the kernel is gone */
    uint64_t received, fin_total, credit_sent, credit_ns;
    bool fin, close_sent, drain;
    rk_status failure;
    char why[512];
} in_link;

typedef struct export_entry {
    char name[RK__MPI_NAME];
    rk_kernel *dst;         /* NULL: free or withdrawn */
    bool watched;
} export_entry;

typedef struct pending_send {
    MPI_Request req;
    void *buf;
} pending_send;

struct rk_mpi {
    MPI_Comm comm;
    int rank, size;
    bool owns_mpi;
    uint64_t timeout_ns, heartbeat_ns;

    pthread_mutex_t lock;
    pthread_cond_t changed;   /* links changed state (connect, destroy wait on it) */
    pthread_t thread;
    bool stopping, stopped;   /* destroy asked; the thread has ended */
    uint64_t stop_deadline_ns;

    out_link out[RK__MPI_MAX_LINKS];
    in_link in[RK__MPI_MAX_LINKS];
    export_entry exports[RK__MPI_MAX_EXPORTS];

    uint64_t *last_heard;     /* per rank, rk__now_ns */
    uint64_t last_beat_ns;
    bool *bye;                /* per rank: said goodbye */

    pending_send *sends;
    size_t send_count, send_capacity;
    unsigned char *rx, *tx;   /* a received message; a DATA payload being packed */
    size_t rx_capacity, tx_capacity;

    rk_status failure;        /* the first link failure (rk_mpi_check) */
    char failure_why[256];
};

/* mpi_endpoint.c (progress thread, m->lock held) */
/* Queues a message of header + payload bytes to rank peer (MPI_Isend of a copy). */
rk_status rk__mpi_send(rk_mpi *m, int peer, const wire_header *h, const void *payload, size_t bytes);
/* Records a link failure for rk_mpi_check (the first one wins). */
void rk__mpi_note_failure(rk_mpi *m, rk_status s, const char *why);

/* mpi_links.c: the plugin's export and connect (user threads). */
rk_status rk__mpi_export(rk_mpi *m, rk_kernel *dst, const char *name);
rk_status rk__mpi_connect(rk_mpi *m, rk_kernel *src, uint32_t port, const char *name, const rk_channel_desc *desc,
                          uint64_t timeout_ns, rk_channel **out);

/* mpi_links.c (progress thread, m->lock held) */
void rk__mpi_on_message(rk_mpi *m, int from, const wire_header *h, const unsigned char *payload, size_t bytes);
/* Moves data, credit, lookups, closes and FINs; true when anything moved. */
bool rk__mpi_pump_links(rk_mpi *m, uint64_t now);
/* Fails the links of a peer not heard from in time, or gone. */
void rk__mpi_peer_lost(rk_mpi *m, int peer, rk_status why, const char *what);
/* Does any live link involve peer (heartbeats, liveness)? */
bool rk__mpi_peer_linked(rk_mpi *m, int peer);
/* destroy: every out link is done or failed. */
bool rk__mpi_links_finished(rk_mpi *m);
/* destroy: lets go of every channel, sink and hook. */
void rk__mpi_links_release(rk_mpi *m);

#endif
