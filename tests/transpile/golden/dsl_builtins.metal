tests/transpile/cases/dsl_builtins.c:35:33: error: lrintf: Metal's standard library has no such function (MSL target)
      o[2] = isfinite(x) ? (float)lrintf(x * 10.0f) : 0.0f; /* lrintf of inf or NaN is undefined */
                                  ^
1 error generated.
