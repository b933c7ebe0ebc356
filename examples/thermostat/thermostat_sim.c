/* The thermostat's device side (rk_sim DSL; thermostat_args.h comes first).
 * A square plate of `rows` x `rows` cells with two time levels of the field
 * t (level step & 1 is current): each step diffuses heat to the four
 * neighbours (insulated edges), loses a fraction to the air, and adds the
 * heater's power at its cell. */
RK_DEVICE void plate_step(const rk_sim_state *s, const rk_sim_region *r) {
    const int n = s->rows, from = (int)(r->step & 1u) * n * n, to = n * n - from;
    const float k = s->scalars->k, loss = s->scalars->loss;
    for (int y = r->row_begin; y < r->row_end; y++) {
        for (int x = r->tid; x < n; x += r->threads) {
            const int c = from + y * n + x;
            const float t = s->t[c];
            const float up = y > 0 ? s->t[c - n] : t, down = y < n - 1 ? s->t[c + n] : t;
            const float left = x > 0 ? s->t[c - 1] : t, right = x < n - 1 ? s->t[c + 1] : t;
            float next = t + k * (up + down + left + right - 4.0f * t) - loss * t;
            if (x == s->scalars->hx && y == s->scalars->hy) next += s->scalars->power;
            s->t[to + y * n + x] = next;
        }
    }
}

RK_DEVICE uint64_t plate_probe(const rk_sim_state *s, const rk_sim_region *r, const probe_args *a) {
    return rk_sim_answer_f32(s->t[(int)(r->step & 1u) * s->rows * s->rows + a->y * s->rows + a->x]);
}

RK_DEVICE uint64_t plate_heater(const rk_sim_state *s, const rk_sim_region *r, const heater_args *a) {
    if (r->tid == 0) {
        s->scalars->hx = a->x;
        s->scalars->hy = a->y;
        s->scalars->power = a->power;
    }
    return 0;
}
