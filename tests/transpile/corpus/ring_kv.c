/* A key-value store as a ring handler: a switch on the command, an else-if
 * chain to find the slot, and the reply written after both. */
#include <ringkernel/dsl.h>

enum { SLOTS = 16 };

typedef struct KvReq {
    uint32_t cmd; /* 0 get, 1 put, 2 delete */
    uint32_t key;
    int32_t value;
    uint32_t pad;
} KvReq;

typedef struct KvReply {
    int32_t value;
    int32_t found;
} KvReply;

typedef struct KvState {
    uint32_t keys[SLOTS];
    int32_t values[SLOTS];
    uint32_t used[SLOTS];
    uint32_t misses;
} KvState;

RK_DEVICE int find_slot(const KvState *s, uint32_t key) {
    int free_slot = -1;
    for (int i = 0; i < SLOTS; i++) {
        if (s->used[i] && s->keys[i] == key) return i;
        else if (!s->used[i] && free_slot < 0) free_slot = i;
    }
    return -2 - free_slot; /* not found: -2 - (first free slot), -1 when full */
}

RK_HANDLER int kv(const KvReq *req, KvReply *reply, KvState *state) {
    int slot = find_slot(state, req->key);
    int found = slot >= 0;
    int value = 0;
    switch (req->cmd) {
    case 0:
        if (found) value = state->values[slot];
        break;
    case 1:
        if (found) {
            state->values[slot] = req->value;
        } else if (slot < -1) {
            int s = -2 - slot;
            state->used[s] = 1u;
            state->keys[s] = req->key;
            state->values[s] = req->value;
        } else {
            return -1; /* full */
        }
        value = req->value;
        break;
    case 2:
        if (found) state->used[slot] = 0u;
        break;
    default:
        return -2;
    }
    if (!found) state->misses++;
    reply->value = value;
    reply->found = found;
    return 0;
}
