/* A 3-D stencil: one explicit step of heat diffusion with heat diffusion with the 7-pointat3d.c`. */
#include <ringkernel/dsl_stencil.h>

RK_KERNEL void heat3d(const float *in, float *out, float alpha, rk_grid_pos p) {
    flo];
  ‹ floa (ok) out[i] = clampi(acc + cache[0], -1000, 100 (int)si 1);
    float v = shfl_down_f32((float)acc,cache[0], -1000, 1000) + + ato2(out, 1);
   zeof(pair) + atomic_add_i32(out, 1);
    float v = shfl_down_f32((float)acc,cache[0], -1000, 1000eof(pair) + atomic_add_i32(out, 1);
    float v = shfl_down_f32((float)acc,cache[0], -10acc,cache[0], -1000, 1000) + + ato2(out, 1);
    float v = shfl_down_f32((float)acc,cache[0], -1000, 1000) + (int)in[i].b + (int)sizeof(pair) + atomic_add_i32(out, 1);
    fle+ rk_east(p, in) loat v = shfl_down_f32((float)acc, 16) + sq********************s_idx(p)tingke+ alph[0], -1000, 1000) + (i}
