// Exploration for issue 37's bound: how close does a copy *kernel* come to the runtime's
// device-to-device cudaMemcpy, the scan's yardstick? A scan must move its bytes through the
// SMs; if no plain copy kernel written here reaches cudaMemcpy's rate, part of the scan's gap
// to it is the gap every SM-issued copy has.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o "$dir/ck" scripts/gpu/explore/copy_kernels.cu && "$dir/ck"
//   (scripts/gpu/loaded_latency.sh builds and runs it in a private temporary folder)
//
// Shapes: LOADS int4 loads per thread per trip (1, 2, 4, 8), grid-stride over as many blocks of
// 512 threads as BLOCKS_PER_SM × SMs (1, 2, 4), with streaming (.cs) or default cache hints.
// Each shape and cudaMemcpy alternate in `rounds` rounds (argv[1], default 3) on one
// 2^28-int32 buffer; each time is the median of 10 launches after an untimed one. Every copy is
// checked. Output CSV on stdout:
// round,what,loads,blocks_per_sm,hint,median_us,gb_per_s_rw
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "copy_kernels: %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

constexpr size_t N = size_t(1) << 28;
constexpr int TIMED = 10;

template <int LOADS, bool STREAMING>
__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, size_t nvec) {
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nvec; i += LOADS * threads) {
    int4 v[LOADS];
#pragma unroll
    for (int j = 0; j < LOADS; ++j) {
      const size_t k = i + j * threads;
      v[j] = k < nvec ? (STREAMING ? __ldcs(in + k) : in[k]) : int4{};
    }
#pragma unroll
    for (int j = 0; j < LOADS; ++j) {
      const size_t k = i + j * threads;
      if (k < nvec) {
        if (STREAMING) __stcs(out + k, v[j]);
        else out[k] = v[j];
      }
    }
  }
}

using Launch = void (*)(const int4*, int4*, size_t, int, cudaStream_t);
template <int LOADS, bool STREAMING>
void launch(const int4* in, int4* out, size_t nvec, int grid, cudaStream_t s) {
  copy_kernel<LOADS, STREAMING><<<grid, 512, 0, s>>>(in, out, nvec);
}

struct Shape {
  int loads;
  bool streaming;
  Launch run;
};

// The median of TIMED calls of `call` on `s`, after an untimed one, in microseconds.
template <typename F>
double median_us(F call, cudaStream_t s) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  call();
  std::vector<float> ms(TIMED);
  for (int k = 0; k < TIMED; ++k) {
    CHECK(cudaEventRecord(e0, s));
    call();
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaEventElapsedTime(&ms[k], e0, e1));
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return 1000.0 * (ms[TIMED / 2 - 1] + ms[TIMED / 2]) / 2;
}

// Checks that `d_out` holds `want`, then clears it (so the next copy must write every element).
void check_and_clear(int4* d_out, const std::vector<int>& want, std::vector<int>& back, const char* what) {
  CHECK(cudaMemcpy(back.data(), d_out, N * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < N; ++i)
    if (back[i] != want[i]) {
      fprintf(stderr, "copy_kernels: %s is wrong at %zu\n", what, i);
      exit(1);
    }
  CHECK(cudaMemset(d_out, 0, N * 4));
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  if (rounds < 1 || rounds > 100) {
    fprintf(stderr, "copy_kernels: rounds must be 1 to 100, not %s\n", argv[1]);
    return 2;
  }
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::vector<int> ramp(N), back(N);
  for (size_t i = 0; i < N; ++i) ramp[i] = int(i * 2654435761u);
  int4 *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, N * 4));
  CHECK(cudaMalloc(&d_out, N * 4));
  CHECK(cudaMemcpy(d_in, ramp.data(), N * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0, N * 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Shape shapes[] = {
      {1, true, launch<1, true>},   {2, true, launch<2, true>},   {4, true, launch<4, true>},
      {8, true, launch<8, true>},   {4, false, launch<4, false>}, {8, false, launch<8, false>},
  };
  const double bytes = 2.0 * N * 4;
  printf("device,%s\n", p.name);
  printf("round,what,loads,blocks_per_sm,hint,median_us,gb_per_s_rw\n");
  for (int r = 1; r <= rounds; ++r) {
    const double m = median_us([&] { CHECK(cudaMemcpyAsync(d_out, d_in, N * 4, cudaMemcpyDeviceToDevice, s)); }, s);
    printf("%d,cudaMemcpy,,,,%.1f,%.1f\n", r, m, bytes / (m * 1e3));
    check_and_clear(d_out, ramp, back, "cudaMemcpy");
    for (const Shape& sh : shapes)
      for (int per_sm : {1, 2, 4}) {
        const int grid = per_sm * p.multiProcessorCount;
        const double t = median_us([&] { sh.run(d_in, d_out, N / 4, grid, s); }, s);
        printf("%d,copy_kernel,%d,%d,%s,%.1f,%.1f\n", r, sh.loads, per_sm, sh.streaming ? "cs" : "default", t,
               bytes / (t * 1e3));
        check_and_clear(d_out, ramp, back, "copy_kernel");
      }
  }
  return 0;
}
