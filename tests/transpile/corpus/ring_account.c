/* A stateful ring handler: bank accounts. Each request is an operation on
 * one account; the reply carries the new balance and a status. Operations
 * are an if / else-if chain; the reply and the counters follow it. */
#include <ringkernel/dsl.h>

enum { OP_DEPOSIT = 1, OP_WITHDRAW = 2, OP_QUERY = 3, ACCOUNTS = 8 };

typedef struct AccountReq {
    uint32_t op;
    uint32_t account;
    int32_t amount;
    uint32_t seq;
} AccountReq;

typedef struct AccountReply {
    uint32_t seq;
    int32_t balance;
    int32_t status;
    uint32_t pad;
} AccountReply;

typedef struct Bank {
    int32_t balance[ACCOUNTS];
    uint32_t ops;
    uint32_t rejected;
} Bank;

RK_HANDLER int account(const AccountReq *req, AccountReply *reply, Bank *bank) {
    int status = 0;
    if (req->account >= ACCOUNTS) {
        status = -2;
    } else if (req->op == OP_DEPOSIT) {
        bank->balance[req->account] += req->amount;
    } else if (req->op == OP_WITHDRAW) {
        if (bank->balance[req->account] >= req->amount)
            bank->balance[req->account] -= req->amount;
        else
            status = -1;
    } else if (req->op != OP_QUERY) {
        status = -3;
    }
    reply->seq = req->seq;
    reply->balance = req->account < ACCOUNTS ? bank->balance[req->account] : 0;
    reply->status = status;
    bank->ops++;
    if (status != 0) bank->rejected++;
    return status;
}
