/* The soak's checker must catch what it promises to: duplicates, replies
 * never sent, wrong content, and a lost message holding the window back. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "soak_check.h"

const char rk_soak_handler_source[] = "";

/* The handler's computation, as a reply the device would send. */
static soak_reply handled(const soak_request *q) {
    uint32_t h = 2166136261u ^ q->seq;
    for (uint32_t i = 0; i < q->words; i++) h = (h ^ q->payload[i]) * 16777619u;
    return (soak_reply){.seq = q->seq, .kernel = q->kernel, .words = q->words, .hash = h};
}

int main(void) {
    soak_request q;
    soak_window w;
    CHECK(soak_window_init(&w, 64));
    bool varied = false;
    for (uint64_t seq = 0; seq < 40; seq++) {
        size_t used = soak_make_request(3, seq, &q);
        CHECK(used == 12 + 4 * (size_t)q.words && q.words <= SOAK_PAYLOAD_WORDS);
        varied |= q.words != soak_words(3, 0);
        soak_reply r = handled(&q);
        CHECK(soak_reply_matches(3, seq, &r));
        r.hash ^= 1;
        CHECK(!soak_reply_matches(3, seq, &r)); /* one flipped bit is caught */
        r.hash ^= 1;
        CHECK(!soak_reply_matches(2, seq, &r)); /* a reply for another kernel */
    }
    CHECK(varied); /* payload lengths differ between messages */

    /* Out of order is fine; twice is not; never sent is not. */
    uint64_t sent = 10;
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 1), sent) == SOAK_NEW);
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 0), sent) == SOAK_NEW);
    CHECK(w.base == 2);
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 1), sent) == SOAK_DUPLICATE); /* below the base */
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 5), sent) == SOAK_NEW);
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 5), sent) == SOAK_DUPLICATE); /* inside the window */
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 10), sent) == SOAK_UNKNOWN);  /* not sent yet */
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 0xfffffff0u), sent) == SOAK_UNKNOWN);
    /* A lost message (2) keeps the base, so the sender's window stops it. */
    for (uint32_t s = 3; s < 10; s++)
        if (s != 5) CHECK(soak_window_mark(&w, soak_window_seq(&w, s), sent) == SOAK_NEW);
    CHECK(w.base == 2);
    CHECK(soak_window_mark(&w, soak_window_seq(&w, 2), sent) == SOAK_NEW);
    CHECK(w.base == 10);
    soak_window_free(&w);
    printf("soak_check: ok\n");
    return 0;
}
