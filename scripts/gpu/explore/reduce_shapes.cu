// Exploration, not a product figure (issue 13): which load shape of a one-launch, atomically
// finished int32 sum is fastest per call at 2^20..2^28, beside CUB's DeviceReduce::Sum on the
// same buffer, all behind the same stream_hold as the CLI. Whatever wins here is then built in
// Rust and measured through the CLI (scripts/gpu/measure.sh); these numbers only choose what to
// build. Every launch's answer is checked against the CPU's sum.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/rs scripts/gpu/explore/reduce_shapes.cu && /tmp/rs > out.csv
//
// Shapes: LOADS 128-bit loads per thread per trip (1, 2, 4, 8); block 256/512/1024; grid one
// block per tile, or as many blocks as are resident; pattern `tile` (a block's LOADS x block
// vectors are contiguous) or `spread` (thread gid loads gid + j x all threads: what
// kernels::collective::thread_sum_v4 does today).
#include <cub/cub.cuh>

#include "../../../cub/harness_common.cuh"

template <int LOADS, bool SPREAD>
__global__ void sum_shape(const int4* __restrict__ in, int* acc, size_t nvec, unsigned epoch) {
  __shared__ int warp_sums[32];
  if (blockIdx.x == 0 && threadIdx.x == 0) acc[(epoch + 1) & 1] = 0;
  int s = 0;
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  if (SPREAD) {
    const size_t window = LOADS * threads;
    for (size_t at = size_t(blockIdx.x) * blockDim.x + threadIdx.x; at < nvec; at += window) {
      int4 v[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; ++j) {
        size_t i = at + j * threads;
        v[j] = i < nvec ? __ldg(in + i) : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int j = 0; j < LOADS; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
    }
  } else {
    const size_t tile = size_t(LOADS) * blockDim.x;
    for (size_t t = blockIdx.x; t * tile < nvec; t += gridDim.x) {
      int4 v[LOADS];
#pragma unroll
      for (int j = 0; j < LOADS; ++j) {
        size_t i = t * tile + j * blockDim.x + threadIdx.x;
        v[j] = i < nvec ? __ldg(in + i) : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int j = 0; j < LOADS; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
    }
  }
  for (int m = 16; m > 0; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0;
    for (int m = 16; m > 0; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
    if (threadIdx.x == 0) atomicAdd(acc + (epoch & 1), s);
  }
}

__global__ void empty_kernel(int* acc, unsigned epoch) {
  if (threadIdx.x == 0) acc[epoch & 1] = 0;
}

using Kernel = void (*)(const int4*, int*, size_t, unsigned);

struct Shape {
  const char* pattern;
  int loads;
  Kernel k;
};

static const Shape SHAPES[] = {
    {"tile", 1, sum_shape<1, false>}, {"tile", 2, sum_shape<2, false>},  {"tile", 4, sum_shape<4, false>},
    {"tile", 8, sum_shape<8, false>}, {"spread", 2, sum_shape<2, true>}, {"spread", 4, sum_shape<4, true>},
};

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 30;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  // Optional: only n = 2^argv[3], and only the shape (pattern argv[4], loads argv[5], block
  // argv[6], one block per tile), for profiling one configuration with ncu.
  const int only_lg = argc > 3 ? std::atoi(argv[3]) : 0;
  const char* only_pattern = argc > 4 ? argv[4] : nullptr;
  const int only_loads = argc > 5 ? std::atoi(argv[5]) : 0;
  const int only_block = argc > 6 ? std::atoi(argv[6]) : 0;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t max_n = size_t(1) << 28;
  std::vector<int> h(max_n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& e : h) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = int(x % 2001) - 1000;
  }
  int *d_in, *d_acc, *d_out;
  CHECK(cudaMalloc(&d_in, max_n * 4));
  CHECK(cudaMalloc(&d_acc, 8));
  CHECK(cudaMalloc(&d_out, 4));
  CHECK(cudaMemcpy(d_in, h.data(), max_n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_acc, 0, 8));
  Events ev;
  unsigned epoch = 0;
  std::printf("round,n,config,pattern,loads,block,grid,median_us,min_us,cub_median_us\n");
  for (int r = 1; r <= rounds; ++r) {
    for (int lg : {20, 22, 24, 26, 28}) {
      if (only_lg && lg != only_lg) continue;
      const size_t n = size_t(1) << lg, nvec = n / 4;
      int expect = 0;
      for (size_t i = 0; i < n; ++i) expect += h[i];
      void* temp = nullptr;
      size_t temp_bytes = 0;
      CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, int(n)));
      CHECK(cudaMalloc(&temp, temp_bytes));
      auto cub_call = [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, int(n))); };
      std::vector<double> cub_t;
      for (int i = 0; i < runs; ++i) {
        cub_t.push_back(ev.time(cub_call));
        int got = 0;
        CHECK(cudaMemcpy(&got, d_out, 4, cudaMemcpyDeviceToHost));
        if (got != expect) fail("cub wrong sum at n=" + std::to_string(n));
      }
      const double cub_med = median(cub_t);
      std::vector<double> e_t;
      for (int i = 0; i < runs; ++i) {
        ++epoch;
        e_t.push_back(ev.time([&] { empty_kernel<<<1, 32>>>(d_acc, epoch); }));
      }
      std::printf("%d,%zu,empty,-,0,32,1,%.3f,%.3f,%.3f\n", r, n, median(e_t),
                  *std::min_element(e_t.begin(), e_t.end()), cub_med);
      for (const Shape& s : SHAPES) {
        if (only_pattern && (std::strcmp(only_pattern, s.pattern) != 0 || only_loads != s.loads)) continue;
        for (int block : {256, 512, 1024}) {
          if (only_block && block != only_block) continue;
          int per_sm = 0;
          CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s.k, block, 0));
          const size_t tiles = (nvec + size_t(s.loads) * block - 1) / (size_t(s.loads) * block);
          for (bool resident : {false, true}) {
            if (only_block && resident) continue;
            const size_t grid = resident ? std::min(tiles, size_t(per_sm) * sms) : tiles;
            if (resident && grid == tiles) continue;
            std::vector<double> t;
            for (int i = 0; i < runs; ++i) {
              ++epoch;
              t.push_back(ev.time([&] {
                s.k<<<unsigned(grid), block>>>(reinterpret_cast<const int4*>(d_in), d_acc, nvec, epoch);
              }));
              CHECK(cudaGetLastError());
              int got[2];
              CHECK(cudaMemcpy(got, d_acc, 8, cudaMemcpyDeviceToHost));
              if (got[epoch & 1] != expect) fail("wrong sum " + std::string(s.pattern) + " n=" + std::to_string(n));
            }
            std::printf("%d,%zu,%s,%s,%d,%d,%zu,%.3f,%.3f,%.3f\n", r, n, resident ? "resident" : "per_tile",
                        s.pattern, s.loads, block, grid, median(t), *std::min_element(t.begin(), t.end()),
                        cub_med);
          }
        }
      }
      CHECK(cudaFree(temp));
      std::fflush(stdout);
    }
  }
  return 0;
}
