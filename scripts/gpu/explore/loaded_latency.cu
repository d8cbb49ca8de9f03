// Exploration for issue 37's arithmetic of the bound: the memory latency L a load sees while a
// device-to-device copy keeps DRAM busy, so that Little's law (bytes in flight per SM =
// bandwidth per SM × L) says how many bytes an SM must keep loading to run at the copy's speed.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o "$dir/ll" scripts/gpu/explore/loaded_latency.cu && "$dir/ll"
//   (scripts/gpu/copy_bound.sh does this in a private temporary folder)
//
// One thread walks a random cycle of 128-byte lines spread over LINES_MIB MiB (far larger than
// L2; each step's address comes from the previous load, so steps never overlap): the time per
// step is one load's latency. It walks once alone ("idle") and once while a grid-stride int4
// copy of 2^28 int32 runs on another stream ("loaded"); both kernels read %globaltimer at their
// start and end, and the output says how much of the walk the copy covered. Every copy is
// checked. Output: CSV rows `what,value,unit` on stdout.

// CHECK (one line "ERROR …" and exit 1 on a failed CUDA call), shared with the harnesses.
#include "../../../cub/harness_common.cuh"
// The grid-stride copy, shared with copy_kernels.cu.
#include "explore.cuh"

constexpr size_t LINE_WORDS = 32;  // 128 bytes per step
constexpr size_t LINES_MIB = 1024;
constexpr int STEPS = 20000;
constexpr size_t COPY_N = size_t(1) << 28;
constexpr int COPY_LAUNCHES = 60;
constexpr int LOADS = 8;  // 8 × 16 B × 1,024 threads: 128 KiB of loads per SM

__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread: STEPS dependent loads (L1 bypassed) from line *at, where the walk goes on next
// time (each walk meets lines no earlier walk brought into L2); times[0..1] = start, end.
__global__ void walk(const uint32_t* __restrict__ next, int steps, uint64_t* times, uint32_t* at_io) {
  uint32_t at = *at_io;
  uint64_t t0 = now_ns();
  for (int s = 0; s < steps; ++s) at = __ldcg(next + size_t(at) * LINE_WORDS);
  uint64_t t1 = now_ns();
  times[0] = t0;
  times[1] = t1;
  *at_io = at;
}

// copy_kernels.cu's grid-stride copy with LOADS streaming loads per thread per trip; block 0
// thread 0 records the first launch's start (slot 0) and every launch's end (slot 1, the last
// one stays).
__global__ void copy4(const int4* __restrict__ in, int4* __restrict__ out, size_t nvec, uint64_t* times, int first) {
  if (first && blockIdx.x == 0 && threadIdx.x == 0) times[0] = now_ns();
  grid_stride_copy<LOADS, true>(in, out, nvec);
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(reinterpret_cast<unsigned long long*>(times + 1), now_ns());
}

// A random single cycle over `lines` lines (Sattolo's shuffle, fixed seed): word 0 of line k
// holds the line that follows k.
std::vector<uint32_t> cycle(size_t lines) {
  std::vector<uint32_t> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = uint32_t(i);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = lines - 1; i > 0; --i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(order[i], order[x % i]);
  }
  std::vector<uint32_t> next(lines * LINE_WORDS, 0);
  for (size_t i = 0; i < lines; ++i) next[size_t(order[i]) * LINE_WORDS] = order[(i + 1) % lines];
  return next;
}

double walk_ns(const uint32_t* d_next, uint64_t* d_times, uint32_t* d_at, cudaStream_t s, uint64_t* t) {
  walk<<<1, 1, 0, s>>>(d_next, STEPS, d_times, d_at);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(t, d_times, 2 * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return double(t[1] - t[0]) / STEPS;
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  const size_t lines = LINES_MIB * 1024 * 1024 / (LINE_WORDS * 4);
  std::vector<uint32_t> host = cycle(lines);
  uint32_t *d_next, *d_at;
  uint64_t *d_wt, *d_ct;
  int4 *d_in, *d_out;
  CHECK(cudaMalloc(&d_next, host.size() * 4));
  CHECK(cudaMemcpy(d_next, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&d_at, 4));
  CHECK(cudaMemset(d_at, 0, 4));
  CHECK(cudaMalloc(&d_wt, 16));
  CHECK(cudaMalloc(&d_ct, 16));
  CHECK(cudaMalloc(&d_in, COPY_N * 4));
  CHECK(cudaMalloc(&d_out, COPY_N * 4));
  std::vector<int> ramp(COPY_N);
  for (size_t i = 0; i < COPY_N; ++i) ramp[i] = int(i * 2654435761u);
  CHECK(cudaMemcpy(d_in, ramp.data(), COPY_N * 4, cudaMemcpyHostToDevice));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  uint64_t wt[2], ct[2];
  walk_ns(d_next, d_wt, d_at, s2, wt);  // untimed: first touch, clocks up
  const double idle = walk_ns(d_next, d_wt, d_at, s2, wt);
  // Two blocks of 512 per SM: half the threads an SM holds, so the walk's block finds a slot.
  const int grid = 2 * p.multiProcessorCount;
  copy4<<<grid, 512, 0, s1>>>(d_in, d_out, COPY_N / 4, d_ct, 1);  // untimed
  CHECK(cudaStreamSynchronize(s1));
  CHECK(cudaMemset(d_ct, 0, 16));
  for (int k = 0; k < COPY_LAUNCHES; ++k) copy4<<<grid, 512, 0, s1>>>(d_in, d_out, COPY_N / 4, d_ct, k == 0);
  CHECK(cudaGetLastError());
  const double loaded = walk_ns(d_next, d_wt, d_at, s2, wt);
  CHECK(cudaStreamSynchronize(s1));
  CHECK(cudaMemcpy(ct, d_ct, 16, cudaMemcpyDeviceToHost));
  std::vector<int> back(COPY_N);
  CHECK(cudaMemcpy(back.data(), d_out, COPY_N * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < COPY_N; ++i)
    if (back[i] != ramp[i]) {
      fprintf(stderr, "loaded_latency: the copy is wrong at %zu\n", i);
      return 1;
    }
  // The runtime's device-to-device copy alone, for comparison with copy4's rate.
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaMemcpyAsync(d_out, d_in, COPY_N * 4, cudaMemcpyDeviceToDevice, s1));
  CHECK(cudaEventRecord(e0, s1));
  for (int k = 0; k < 10; ++k) CHECK(cudaMemcpyAsync(d_out, d_in, COPY_N * 4, cudaMemcpyDeviceToDevice, s1));
  CHECK(cudaEventRecord(e1, s1));
  CHECK(cudaEventSynchronize(e1));
  float memcpy_ms = 0;
  CHECK(cudaEventElapsedTime(&memcpy_ms, e0, e1));
  const double copy_ns = double(ct[1] - ct[0]);
  const double gbps = 2.0 * COPY_N * 4 * COPY_LAUNCHES / copy_ns;
  const double lo = double(wt[0] > ct[0] ? wt[0] : ct[0]), hi = double(wt[1] < ct[1] ? wt[1] : ct[1]);
  const double covered = hi > lo ? (hi - lo) / double(wt[1] - wt[0]) : 0.0;
  printf("what,value,unit\n");
  printf("device,%s,\n", p.name);
  printf("sms,%d,\n", p.multiProcessorCount);
  printf("walk_footprint,%zu,MiB\n", LINES_MIB);
  printf("walk_steps,%d,\n", STEPS);
  printf("latency_idle,%.1f,ns\n", idle);
  printf("latency_under_copy,%.1f,ns\n", loaded);
  printf("copy_during_walk,%.1f,GB/s\n", gbps);
  printf("copy_per_sm,%.2f,GB/s\n", gbps / p.multiProcessorCount);
  printf("memcpy_d2d_alone,%.1f,GB/s\n", 2.0 * COPY_N * 4 * 10 / (memcpy_ms * 1e6));
  printf("walk_covered_by_copy,%.3f,\n", covered);
  // Little's law on the reads alone (half the bytes): what an SM must keep loading.
  printf("read_bytes_in_flight_per_sm,%.1f,KiB\n", gbps / 2 / p.multiProcessorCount * loaded / 1024.0);
  return 0;
}
