tests/transpile/cases/features.c:58:9: error: atomic_add_u64: Metal has no 64-bit atomic add (a program whose entry points are all handlers may use it: the relaunch template runs a handler on one thread) (MSL target)
          atomic_add_u64(&stats->total, (uint64_t)primes[bucket]);
          ^
tests/transpile/cases/features.c:59:19: error: Metal has no double: this expression is computed in double in C (write float constants with an f suffix, and float functions such as sqrtf) (MSL target)
          p->energy += 0.5 * p->mass * SQUARE((double)value);
                    ^
tests/transpile/cases/features.c:85:31: error: dynamic_shared: dynamic threadgroup memory is not supported by the MSL emitter yet (MSL target)
      float *scratch = (float *)dynamic_shared();
                                ^
3 errors generated.
