tests/transpile/cases/grid_phases.c:10:9: error: grid_sync: Metal has no barrier across threadgroups (MSL target)
          grid_sync();
          ^
tests/transpile/cases/grid_phases.c:12:9: error: grid_sync: Metal has no barrier across threadgroups (MSL target)
          grid_sync();
          ^
tests/transpile/cases/grid_phases.c:15:9: error: store_release_u32: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
          store_release_u32(flag, (uint32_t)rounds);
          ^
tests/transpile/cases/grid_phases.c:16:16: error: load_acquire_u32: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
          while (load_acquire_u32(flag) != (uint32_t)rounds) sleep_ns(100);
                 ^
tests/transpile/cases/grid_phases.c:16:60: error: sleep_ns: Metal kernels cannot sleep (MSL target)
          while (load_acquire_u32(flag) != (uint32_t)rounds) sleep_ns(100);
                                                             ^
5 errors generated.
