// The floor under the persistent ring kernel's round trip: a bare host <-> GPU
// ping-pong of 64-byte messages in the same tagged-word format, with warps
// owning 32-position chunks as in src/device/cuda/ring.cu, varying the polling
// warps, the poll window and a per-pass device-memory control read. No
// handler, staging or library: see docs/cuda.md for what it measured.
//   nvcc -O2 -arch=sm_90 -o cuda_ll_pingpong bench/cuda_ll_pingpong.cu && taskset -c 2 ./cuda_ll_pingpong
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
#include <time.h>
#include <cuda_runtime.h>
typedef unsigned long long u64; typedef unsigned u32;
#define SLOT 16   // 8-byte LL words per slot (64B payload)
#define CAP 4096
__device__ __forceinline__ void ld2(const u64 *p, u64 &a, u64 &b) { asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(a), "=l"(b) : "l"(p)); }
__device__ __forceinline__ void st2(u64 *p, u64 a, u64 b) { asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" :: "l"(p), "l"(a), "l"(b) : "memory"); }
// Warp w owns chunks of 32 positions (c % W == w). Window = number of slots polled from the first not-done.
__global__ void ring(u64 *in, u64 *out, volatile u64 *stop, u64 *dctl, int W, int win, int use_dctl, u64 n) {
  int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  if (w >= W) return;
  for (u64 chunk = w; chunk * 32 < n; chunk += W) {
    u32 done = 0;
    while (done != 0xffffffffu) {
      if (chunk * 32 + __ffs(~done) - 1 >= n) break;
      u64 d0 = 0; if (use_dctl) d0 = *(volatile u64 *)dctl;
      int first = __ffs(~done) - 1, lim = min(32, first + win);
      int units = (lim - first) * (SLOT / 2);
      u32 bad = 0; u64 x[8], y[8];
#pragma unroll
      for (int k = 0; k < 8; k++) { int u = k * 32 + lane; x[k] = y[k] = 0; if (u < units) { u64 pos = chunk * 32 + first + u / (SLOT/2); ld2(in + (pos % CAP) * SLOT + 2 * (u % (SLOT/2)), x[k], y[k]); } }
      if (use_dctl && d0 == 12345) return;
#pragma unroll
      for (int k = 0; k < 8; k++) { int u = k * 32 + lane; if (u < units) { u64 pos = chunk * 32 + first + u / (SLOT/2); u32 tag = (u32)(pos / CAP) + 1;
          if ((u32)(x[k] >> 32) != tag || (u32)(y[k] >> 32) != tag) bad |= 1u << (first + u / (SLOT/2)); } }
      bad = __reduce_or_sync(0xffffffffu, bad);
      u32 want = (lim >= 32 ? 0xffffffffu : ((1u << lim) - 1)) & ~((1u << first) - 1);
      u32 ready = want & ~bad & ~done;
      if (!ready) continue;
#pragma unroll
      for (int k = 0; k < 8; k++) { int u = k * 32 + lane; if (u < units) { int off = first + u / (SLOT/2); if (!((ready >> off) & 1)) continue;
          u64 pos = chunk * 32 + off; st2(out + (pos % CAP) * SLOT + 2 * (u % (SLOT/2)), x[k] + 1, y[k] + 1); } }
      done |= ready;
    }
  }
}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main() {
  u64 *in, *out, *stop; cudaHostAlloc(&in, CAP * SLOT * 8, cudaHostAllocMapped | cudaHostAllocPortable);
  cudaHostAlloc(&out, CAP * SLOT * 8, cudaHostAllocMapped | cudaHostAllocPortable); cudaHostAlloc(&stop, 64, cudaHostAllocMapped);
  u64 *dctl; cudaMalloc(&dctl, 64); cudaMemset(dctl, 0, 64);
  struct { int W, win, dctl, blocks; } cfg[] = {{1,1,0,1},{32,1,1,4},{32,2,1,4},{32,4,1,4},{32,32,1,4},{128,1,1,16}};
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (auto &c : cfg) {
    memset(in, 0, CAP * SLOT * 8); memset(out, 0, CAP * SLOT * 8); *stop = 0;
    const u64 N = 30000;
    ring<<<c.blocks, 32 * ((c.W + c.blocks - 1) / c.blocks), 0, s>>>(in, out, stop, dctl, c.W, c.win, c.dctl, N);
    std::vector<double> lat;
    for (u64 p = 0; p < N; p++) {
      u64 *slot = in + (p % CAP) * SLOT; u32 tag = (u32)(p / CAP) + 1;
      double t0 = now();
      for (int i = 0; i < SLOT; i++) ((volatile u64 *)slot)[i] = ((u64)tag << 32) | (u32)(p * 16 + i);
      volatile u64 *o = out + (p % CAP) * SLOT;
      for (int i = 0; i < SLOT; i++) while ((u32)(o[i] >> 32) != tag + 0 || (u32)o[i] != (u32)(p * 16 + i) + 1) {}
      double t1 = now(); if (p >= 2000) lat.push_back(t1 - t0);
    }
    *stop = 1; cudaStreamSynchronize(s);
    std::sort(lat.begin(), lat.end());
    printf("warps %3d window %2d dctl %d: p50 %.2f us  p99 %.2f us  p99.9 %.2f us  (%s)\n", c.W, c.win, c.dctl,
           lat[lat.size()/2]/1e3, lat[lat.size()*99/100]/1e3, lat[lat.size()*999/1000]/1e3, cudaGetErrorString(cudaGetLastError()));
  }
  return 0;
}
