/* The host's side of `rk bench soak` (examples/handlers/soak_handler.c):
 * the message layouts, requests made from (kernel, seq) alone, expected
 * replies, and a sliding window that tells a new reply from a duplicate or
 * from one that was never sent. Nothing per message is stored. */
#ifndef RK_TOOL_SOAK_CHECK_H
#define RK_TOOL_SOAK_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { SOAK_PAYLOAD_WORDS = 61 };

typedef struct soak_request {
    uint32_t seq, kernel, words;
    uint32_t payload[SOAK_PAYLOAD_WORDS];
} soak_request;

typedef struct soak_reply {
    uint32_t seq, kernel, words, hash;
} soak_reply;

#define SOAK_HANDLER_NAME "soak_handler"
extern const char rk_soak_handler_source[];

/* The payload length of message seq: random-looking, 0 .. 61 words. */
uint32_t soak_words(uint32_t kernel, uint64_t seq);
/* Fills the request; returns the bytes in use (the rest of the slot may be
 * left out of a send: the runtime zero-pads it). */
size_t soak_make_request(uint32_t kernel, uint64_t seq, soak_request *out);
/* Checks content: kernel, words and hash as the handler computes them. */
bool soak_reply_matches(uint32_t kernel, uint64_t seq, const soak_reply *reply);

/* Replies seen, over the seqs [base, base + size) that may be in flight. */
typedef struct soak_window {
    uint64_t base; /* every seq below is received */
    uint32_t size; /* a power of two */
    uint8_t *seen;
} soak_window;

typedef enum soak_mark {
    SOAK_NEW,
    SOAK_DUPLICATE, /* already received */
    SOAK_UNKNOWN,   /* never sent, or outside the window */
} soak_mark;

bool soak_window_init(soak_window *w, uint32_t size);
void soak_window_free(soak_window *w);
/* The full seq a 32-bit one stands for, given the window's base. */
uint64_t soak_window_seq(const soak_window *w, uint32_t seq32);
/* Records reply seq (of sent messages [0, sent)). */
soak_mark soak_window_mark(soak_window *w, uint64_t seq, uint64_t sent);

#endif
