// Session 55: how fast can `select`'s data path be at 1 % kept? A decomposition in CUDA C, not
// a kernel of the library: each variant reads 2^28 i32 (values uniform in [0, 1000), a fixed
// seed), counts the elements below 10 per tile of 7168 (a block of 256 threads, 28 a thread, as
// `select` does), and writes each tile's count; nothing is compacted. What differs is how the
// tile comes in:
//   smem: `select`'s way: 7 striped 16-byte cp.async (L2 evict_first) a thread into a 28 KiB
//         shared tile, wait, barrier, 7 blocked 16-byte shared reads a thread;
//   regs: 7 striped 16-byte global loads a thread (ld.global.nc.L1::no_allocate, evict_first)
//         straight into registers, counted there; no shared tile.
// Options: +pf, step 4b's L2 prefetch of tile + 495 after the count (224 threads, one 128-byte
// line each); +occ5, 43 KiB of static shared memory a block (the tile and index array of
// `select`), so 5 blocks an SM as `select`; grid-stride: a whole-buffer count with 2048 threads
// an SM (the read bound); copy: cudaMemcpy D2D of half the bytes (select_copy.py's copy).
//   nvcc -O3 -arch=sm_90 -o datapath datapath.cu && ./datapath [ROUNDS]
// prints CSV: variant,round,time_us_median,gb_per_s_read,total (total must equal the CPU's)
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>

constexpr int THREADS = 256, ROWS = 7, TILE = THREADS * 4 * ROWS, AHEAD = 495;
constexpr int OPERAND = 10;

__device__ __forceinline__ uint64_t evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

__device__ __forceinline__ int block_sum(int c, int* warp_totals) {
  for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x / 32] = c;
  __syncthreads();
  int t = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < THREADS / 32; ++w) t += warp_totals[w];
  return t;
}

__device__ __forceinline__ void prefetch_ahead(const int* in, long n) {
  long ahead = (long)blockIdx.x + AHEAD;
  if ((ahead + 1) * TILE <= n && threadIdx.x < TILE / 32)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(in + ahead * TILE + 32 * threadIdx.x));
}

template <bool SMEM, bool PF, bool OCC5>
__global__ void __launch_bounds__(THREADS) tile_count(const int* __restrict__ in, long n, int* __restrict__ counts) {
  __shared__ __align__(16) int tile[SMEM || OCC5 ? TILE + 3584 + 36 : 36];
  long base = (long)blockIdx.x * TILE;
  int c = 0;
  if (base + TILE <= n) {
    uint64_t pol = evict_first();
    if (SMEM) {
      for (int r = 0; r < ROWS; ++r) {
        int chunk = r * THREADS + threadIdx.x;
        unsigned dst = (unsigned)__cvta_generic_to_shared(tile + 4 * chunk);
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(dst),
                     "l"(in + base + 4 * chunk), "l"(pol));
      }
      asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
      __syncthreads();
      for (int r = 0; r < ROWS; ++r) {
        int4 v = reinterpret_cast<const int4*>(tile)[threadIdx.x * ROWS + r];
        c += (v.x < OPERAND) + (v.y < OPERAND) + (v.z < OPERAND) + (v.w < OPERAND);
      }
    } else {
      int4 v[ROWS];
      for (int r = 0; r < ROWS; ++r) {
        const int* p = in + base + 4 * (r * THREADS + threadIdx.x);
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.s32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(v[r].x), "=r"(v[r].y), "=r"(v[r].z), "=r"(v[r].w)
                     : "l"(p), "l"(pol));
      }
      for (int r = 0; r < ROWS; ++r)
        c += (v[r].x < OPERAND) + (v[r].y < OPERAND) + (v[r].z < OPERAND) + (v[r].w < OPERAND);
    }
  } else {
    for (long i = base + threadIdx.x; i < n; i += THREADS) c += in[i] < OPERAND;
  }
  int* totals = SMEM || OCC5 ? tile + TILE + 3584 : tile;
  int t = block_sum(c, totals);
  if (PF) prefetch_ahead(in, n);
  if (threadIdx.x == 0) counts[blockIdx.x] = t;
}

__global__ void __launch_bounds__(1024) grid_count(const int4* __restrict__ in, long n4, int* __restrict__ counts) {
  __shared__ int totals[32];
  int c = 0;
  for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
    int4 v = __ldcs(in + i);
    c += (v.x < OPERAND) + (v.y < OPERAND) + (v.z < OPERAND) + (v.w < OPERAND);
  }
  for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0) totals[threadIdx.x / 32] = c;
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int w = 0; w < (int)blockDim.x / 32; ++w) t += totals[w];
    counts[blockIdx.x] = t;
  }
}

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e = (x);                                                   \
    if (e != cudaSuccess) {                                                \
      fprintf(stderr, "datapath: %s: %s\n", #x, cudaGetErrorString(e));  \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

template <typename F>
float median_us(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int i = -3; i < 20; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 0) t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  return 0.5f * (t[9] + t[10]);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 2;
  const long n = 1L << 28;
  std::vector<int> h(n);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  long want = 0;
  for (long i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    h[i] = (int)(s % 1000);
    want += h[i] < OPERAND;
  }
  int *in, *counts, *copy_dst;
  CK(cudaMalloc(&in, n * 4));
  CK(cudaMalloc(&copy_dst, n * 2));
  long tiles = (n + TILE - 1) / TILE;
  CK(cudaMalloc(&counts, std::max(tiles, 132L * 2) * 4));
  CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  std::vector<int> hc(tiles);
  auto total = [&](long k) {
    CK(cudaMemcpy(hc.data(), counts, k * 4, cudaMemcpyDeviceToHost));
    long t = 0;
    for (long i = 0; i < k; ++i) t += hc[i];
    return t;
  };
  struct V {
    const char* name;
    void (*k)(const int*, long, int*);
  } vs[] = {
      {"smem+pf+occ5", tile_count<true, true, true>}, {"smem+occ5", tile_count<true, false, true>},
      {"regs+pf+occ5", tile_count<false, true, true>}, {"regs+occ5", tile_count<false, false, true>},
      {"regs+pf", tile_count<false, true, false>}, {"regs", tile_count<false, false, false>},
  };
  printf("variant,round,time_us_median,gb_per_s_read,total,expected\n");
  for (int r = 1; r <= rounds; ++r) {
    for (auto& v : vs) {
      float us = median_us([&] { v.k<<<tiles, THREADS>>>(in, n, counts); });
      CK(cudaGetLastError());
      printf("%s,%d,%.2f,%.1f,%ld,%ld\n", v.name, r, us, n * 4 / us / 1e3, total(tiles), want);
    }
    float us = median_us([&] { grid_count<<<132 * 2, 1024>>>(reinterpret_cast<int4*>(in), n / 4, counts); });
    printf("grid-stride,%d,%.2f,%.1f,%ld,%ld\n", r, us, n * 4 / us / 1e3, total(132 * 2), want);
    us = median_us([&] { CK(cudaMemcpyAsync(copy_dst, in, n * 2, cudaMemcpyDeviceToDevice)); });
    printf("copy-half,%d,%.2f,%.1f,,\n", r, us, n * 4 / us / 1e3);
    fflush(stdout);
  }
  return 0;
}
