/* Answers n + 1: a handler kept in its own file, embedded with rk_embed. */
RK_HANDLER int echo(const uint32_t *req, uint32_t *reply, void *state) {
    (void)state;
    *reply = *req + 1u;
    return 0;
}
