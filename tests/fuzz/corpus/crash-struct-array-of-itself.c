#include <ringkernel/dsl.h>
/* A struct with an array of itself (the CI fuzzer: endless recursion). */
struct T { int a; struct T self[2]; };
RK_HANDLER int h(const struct T *q, struct T *r, void *st) { return 0; }
