tests/transpile/cases/tagged_words.c:15:16: error: store_relaxed_u64: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
      if (i < n) store_relaxed_u64(&words[i], (uint64_t)tag << 32 | (uint64_t)(uint32_t)(i * 3));
                 ^
tests/transpile/cases/tagged_words.c:20:26: error: load_relaxed_u64: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
              uint64_t w = load_relaxed_u64(&words[j]);
                           ^
tests/transpile/cases/tagged_words.c:25:30: error: store_release_gpu_u64: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
      if (thread_idx_x() == 0) store_release_gpu_u64(&flags[block_idx_x()], tag);
                               ^
tests/transpile/cases/tagged_words.c:27:18: error: load_acquire_gpu_u64: words shared with a running host need persistent kernels; Metal relaunches per batch instead (MSL target)
      if (i < n && load_acquire_gpu_u64(&flags[block_idx_x()]) != tag) out[i] = 0xfffffffeu;
                   ^
4 errors generated.
