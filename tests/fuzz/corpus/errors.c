#include <ringkernel/dsl.h>
int f(int x) { return x ? g(x) : 0; }
int g(int y) { return f(y - 1); }
RK_KERNEL void bad(float *p, int n) {
    int vla[n];
    printf("%d", n);
    float *q = malloc(4);
    void (*fp)(void) = 0;
    goto out;
out:
    p[0] = f(n) + vla[0];
}
union u { int a; float b; };
