#include <ringkernel/dsl.h>
RK_KERNEL void k(int *a { a[0] = 1; }
RK_KERNEL void k2(int *a) { a[0] = (1 + ; a[1] = 2 }
struct s { int x int y; };
#if 1 +
#endif
#include "loop.h"
#define F(x) x
F(
