// Exploration for issue 37: does CUB's own warp-specialized scan (its "lookahead" algorithm, the
// design of NVIDIA/cccl PR #6811, with the look-ahead in cub/detail/warpspeed/) come nearer a
// device-to-device copy on Hopper than `lookback_warpspec_8x12x6`? The CUB of the GPU machine's
// CUDA 13.0 has no such scan, and a newer CCCL runs it on Hopper only for deterministic float
// sums; so this program is built against a newer CCCL's headers (-I, ahead of the toolkit's own)
// and asks for the algorithm through CUB's public tuning API (`cuda::execution::tune` with a
// policy selector that returns `ScanAlgorithm::lookahead`), with several tile shapes.
//
// In each of `rounds` rounds (argv[1], default 3), at one size (argv[2], default 2^28 int32; its
// last tile short), interleaved: cudaMemcpy (device to device), CUB's `InclusiveSum` as this CCCL
// chooses it for sm_90 (the look-back scan), and `InclusiveSum` with each lookahead shape below;
// each time the median of 10 launches after an untimed one (explore.cuh), each queued behind a
// 50 µs stream hold so that CUB's host dispatch (its environment API queries the device and sets
// the kernel's shared memory at every call) is not timed; the result of the last launch of each
// row checked against the host's inclusive sum and then cleared. (On sm_90 CUB launches its
// lookahead scan with one block an SM, drawing tiles from a counter: dispatch_scan.cuh's
// atomic_scheduling.) CSV on stdout (explore.cuh's columns, `shape`
// = warps x items per thread x look-ahead items per thread), the CCCL version on stderr.
//
//   nvcc -O3 -std=c++20 -arch=sm_90 -I $CCCL/cub -I $CCCL/thrust -I $CCCL/libcudacxx/include \
//        -o cub_lookahead scripts/gpu/explore/cub_lookahead.cu
//   ./cub_lookahead 3 268435456
// scripts/gpu/cub_lookahead.sh runs it at several sizes and sums the rounds up.
#include "../../../cub/harness_common.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
#include <cuda/execution>
#include <cuda/memory_resource>
#include <cuda/stream>

#include "explore.cuh"

// One lookahead shape: W reduce-and-scan warps, each thread IPT items, the look-ahead warp LA
// predecessors a lane per round trip. The stages are CUB's own choice (as many as fit).
template <int W, int IPT, int LA>
struct Lookahead {
  __host__ __device__ constexpr auto operator()(cuda::compute_capability) const -> cub::ScanPolicy {
    cub::ScanPolicy p{};
    p.algorithm = cub::ScanAlgorithm::lookahead;
    p.lookahead.reduce_and_scan_warps = W;
    p.lookahead.items_per_thread = IPT;
    p.lookahead.lookahead_items_per_thread = LA;
    return p;
  }
};

// CUB's environment API allocates its temporary storage from the environment's memory resource
// at every call; this one hands out one buffer, allocated before the timed launches (as the
// two-phase API would take it), so that the times are the scan's alone. One call at a time.
// The stream hold before each timed launch (explore.cuh's median_us), in ns.
constexpr unsigned HOLD_NS = 50000;

struct FixedBuffer : cuda::mr::memory_resource_base<FixedBuffer> {
  void* base = nullptr;
  size_t bytes = 0;
  void* allocate(cuda::stream_ref, size_t want, size_t) {
    if (want > bytes) {
      fprintf(stderr, "cub_lookahead: CUB asked for %zu bytes of temporary storage, %zu reserved\n", want, bytes);
      exit(1);
    }
    return base;
  }
  void deallocate(cuda::stream_ref, void*, size_t, size_t) noexcept {}
  void* allocate_sync(size_t want, size_t a) { return allocate(cuda::stream_ref{cudaStream_t{}}, want, a); }
  void deallocate_sync(void*, size_t, size_t) noexcept {}
  bool operator==(const FixedBuffer& o) const { return base == o.base; }
  bool operator!=(const FixedBuffer& o) const { return base != o.base; }
};

struct Buffers {
  const int* in;
  int* out;
  int n;
  FixedBuffer temp;
};

// CUB's InclusiveSum on stream `s` with the tuning `tune` (an environment), its temporary storage
// from `b.temp` (reserved by the first call: the two-phase API's size query, then the buffer).
template <typename Tune>
void inclusive_sum(Buffers& b, cudaStream_t s, const Tune& tune) {
  if (!b.temp.base) {
    size_t bytes = 0;
    CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, b.in, b.out, b.n, s));
    b.temp.bytes = std::max<size_t>(bytes, size_t(64) << 20);
    CHECK(cudaMalloc(&b.temp.base, b.temp.bytes));
  }
  auto env = cuda::std::execution::env{cuda::std::execution::prop{cuda::get_stream_t{}, cuda::stream_ref{s}},
                                       cuda::std::execution::prop{cuda::mr::get_memory_resource_t{}, b.temp}, tune};
  CHECK(cub::DeviceScan::InclusiveSum(b.in, b.out, b.n, env));
}

template <int W, int IPT, int LA>
void lookahead_row(int r, Buffers& b, cudaStream_t s, const std::vector<int>& want, std::vector<int>& back) {
  const double m = median_us([&] { inclusive_sum(b, s, cuda::execution::tune(Lookahead<W, IPT, LA>{})); }, s, HOLD_NS);
  printf("%d,cub_lookahead,%dx%dx%d,,%.1f,%.1f\n", r, W, IPT, LA, m, 8.0 * b.n / (m * 1e3));
  char what[64];
  snprintf(what, sizeof what, "cub_lookahead %dx%dx%d", W, IPT, LA);
  check_and_clear(b.out, want, back, "cub_lookahead", what);
}

int main(int argc, char** argv) {
  const int rounds = rounds_arg(argc, argv, "cub_lookahead");
  const long long n = argc > 2 ? atoll(argv[2]) : 268435456;
  if (n < 1 || n > (1LL << 30)) {
    fprintf(stderr, "cub_lookahead: the size must be 1 to 2^30, not %s\n", argv[2]);
    return 2;
  }
  fprintf(stderr, "cub_lookahead: CCCL %d.%d.%d, n = %lld\n", CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
          CUB_SUBMINOR_VERSION, n);
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  print_csv_head(p);
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Inputs from a fixed seed, small values; the sum wraps as int32 does (unsigned on the host).
  std::vector<int> host(n), want(n), back(n);
  unsigned x = 12345u, acc = 0;
  for (long long i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    host[i] = int(x >> 28) - 8;
    acc += unsigned(host[i]);
    want[i] = int(acc);
  }
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * 4));
  CHECK(cudaMalloc(&d_out, n * 4));
  CHECK(cudaMemcpy(d_in, host.data(), n * 4, cudaMemcpyHostToDevice));
  Buffers b{d_in, d_out, int(n)};
  for (int r = 1; r <= rounds; ++r) {
    fprintf(stderr, "cub_lookahead: round %d/%d\n", r, rounds);
    memcpy_row(r, d_in, d_out, host, back, s, "cub_lookahead", HOLD_NS);
    const double m = median_us([&] { inclusive_sum(b, s, cuda::std::execution::env<>{}); }, s, HOLD_NS);
    printf("%d,cub_default,,,%.1f,%.1f\n", r, m, 8.0 * n / (m * 1e3));
    check_and_clear(d_out, want, back, "cub_lookahead", "cub_default");
    lookahead_row<4, 79, 3>(r, b, s, want, back);  // CUB's sm_100 int32 tuning
    lookahead_row<4, 63, 4>(r, b, s, want, back);  // CUB's sm_100 fallback for 4-byte sums
    lookahead_row<8, 31, 4>(r, b, s, want, back);
    lookahead_row<8, 12, 4>(r, b, s, want, back);  // the Rust kernel's tile (8 x 32 x 12)
  }
  return 0;
}
