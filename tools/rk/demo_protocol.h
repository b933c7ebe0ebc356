/* The host's side of the demo handler (examples/handlers/demo_handler.c):
 * the same message layouts, how requests are made, and how replies are
 * checked. Keep the structs identical to the handler source. */
#ifndef RK_TOOL_DEMO_PROTOCOL_H
#define RK_TOOL_DEMO_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct demo_request {
    uint32_t seq;
    uint32_t a, b;
    uint32_t pad[13];
} demo_request;

typedef struct demo_reply {
    uint32_t seq;
    uint32_t sum;
    uint32_t mix;
    uint32_t status;
} demo_reply;

#define DEMO_HANDLER_NAME "demo_handler"
#define DEMO_HANDLER_PATH "examples/handlers/demo_handler.c"

/* The handler's source, embedded at build time (cmake rk_embed). */
extern const char rk_demo_handler_source[];

/* Fills the request for running number seq. */
void demo_make_request(uint64_t seq, demo_request *out);

/* Checks a reply against the request with running number seq. On mismatch
 * writes what was wrong into why and returns false. */
bool demo_check_reply(uint64_t seq, const demo_reply *reply, char *why, size_t why_size);

#endif
