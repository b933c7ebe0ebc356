tests/transpile/cases/blur.c:7:42: error: Metal has no double: this expression is computed in double in C (write float constants with an f suffix, and float functions such as sqrtf) (MSL target)
  static double weight(int d) { return 1.0 / (double)(1 + d * d); }
                                           ^
tests/transpile/cases/blur.c:10:79: error: Metal has no double: this expression is computed in double in C (write float constants with an f suffix, and float functions such as sqrtf) (MSL target)
      double near = rk_at(p, a, -1, 0) + rk_at(p, a, 1, 0) + rk_at(p, a, 0, -1) + rk_at(p, a, 0, 1);
                                                                                ^
2 errors generated.
