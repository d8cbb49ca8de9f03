// Exploration for issue 37's bound: how close does a copy *kernel* come to the runtime's
// device-to-device cudaMemcpy, the scan's yardstick? A scan must move its bytes through the
// SMs; if no plain copy kernel written here reaches cudaMemcpy's rate, part of the scan's gap
// to it is the gap every SM-issued copy has.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o "$dir/ck" scripts/gpu/explore/copy_kernels.cu && "$dir/ck"
//   (scripts/gpu/loaded_latency.sh builds and runs it in a private temporary folder)
//
// Shapes: `copy_kernel`, LOADS int4 loads per thread per trip (1, 2, 4, 8), grid-stride over
// blocks of 512 threads, 1, 2 or 4 per SM, with streaming (.cs) or default cache hints; and
// `bulk_copy`, the bulk-copy engine with a ring of tiles in shared memory, and
// `bulk_in_stg_out`, the same ring emptied by 8 warps' 16-byte stores (below).
// Each shape and cudaMemcpy alternate in `rounds` rounds (argv[1], default 3) on one
// 2^28-int32 buffer; each time is the median of 10 launches after an untimed one. Every copy is
// checked. Output CSV on stdout:
// round,what,shape,blocks_per_sm,median_us,gb_per_s_rw

// CHECK (one line "ERROR …" and exit 1 on a failed CUDA call), shared with the harnesses.
#include "../../../cub/harness_common.cuh"

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

// The bulk-copy engine (TMA) as the scan's producer warp uses it: one thread per block runs a
// ring of STAGES tiles of TILE bytes in shared memory; each tile comes in with one
// cp.async.bulk (an mbarrier counts its bytes) and goes out with one bulk store, and a stage is
// refilled once the engine has read its store's source. Tiles are dealt to blocks round-robin.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

template <int TILE, int STAGES>
__global__ void bulk_copy(const char* __restrict__ in, char* __restrict__ out, size_t total) {
  const size_t tiles = (total + TILE - 1) / TILE;
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long full[STAGES];
  if (threadIdx.x != 0) return;
  for (int st = 0; st < STAGES; ++st)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[st])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  // The last tile may be short (a multiple of 16 bytes, as the engine needs).
  auto bytes = [&](size_t t) { return unsigned(total - t * TILE < TILE ? total - t * TILE : TILE); };
  auto load = [&](size_t t, int st) {
    const unsigned bar = smem_addr(&full[st]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes(t)) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(ring + st * TILE)), "l"(in + t * TILE), "r"(bytes(t)), "r"(bar) : "memory");
  };
  const size_t first = blockIdx.x, step = gridDim.x;
  for (int st = 0; st < STAGES && first + st * step < tiles; ++st) load(first + st * step, st);
  size_t k = 0;
  for (size_t t = first; t < tiles; t += step, ++k) {
    const int st = int(k % STAGES);
    const unsigned parity = unsigned(k / STAGES) & 1, bar = smem_addr(&full[st]);
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(out + t * TILE), "r"(smem_addr(ring + st * TILE)), "r"(bytes(t)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    const size_t again = t + STAGES * step;
    if (again < tiles) {
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      load(again, st);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// The scan's data path without the scan (`bulk_in_stg_out`): as `bulk_copy`, the tiles come in
// through the ring with the bulk-copy engine, but WARPS warps take each tile out of shared
// memory and store it with 16-byte streaming stores (the scan's STG.E.EF.128), then hand the
// stage back on an *empty* barrier (one arrival per warp, after a proxy fence) before the
// producer (warp 0, lane 0) refills it.
template <int TILE, int STAGES, int WARPS>
__global__ void bulk_in_stg_out(const char* __restrict__ in, int4* __restrict__ out, size_t total) {
  const size_t tiles = (total + TILE - 1) / TILE;
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int st = 0; st < STAGES; ++st) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[st])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(&empty[st])), "r"(WARPS) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  auto bytes = [&](size_t t) { return unsigned(total - t * TILE < TILE ? total - t * TILE : TILE); };
  auto wait = [](unsigned long long* bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
  };
  const size_t first = blockIdx.x, step = gridDim.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane != 0) return;
    size_t k = 0;
    for (size_t t = first; t < tiles; t += step, ++k) {
      const int st = int(k % STAGES);
      if (k >= STAGES) wait(&empty[st], unsigned(k / STAGES - 1) & 1);
      const unsigned bar = smem_addr(&full[st]);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes(t)) : "memory");
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(smem_addr(ring + st * TILE)), "l"(in + t * TILE), "r"(bytes(t)), "r"(bar) : "memory");
    }
    return;
  }
  const int me = threadIdx.x - 32;
  size_t k = 0;
  for (size_t t = first; t < tiles; t += step, ++k) {
    const int st = int(k % STAGES);
    wait(&full[st], unsigned(k / STAGES) & 1);
    const int4* tile = reinterpret_cast<const int4*>(ring + st * TILE);
    const unsigned vecs = bytes(t) / 16;
    for (unsigned v = me; v < vecs; v += 32 * WARPS) __stcs(out + t * (TILE / 16) + v, tile[v]);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    if (lane == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(&empty[st])) : "memory");
  }
}

// A launch of one shape on `grid` blocks.
using Launch = void (*)(const int4*, int4*, int, cudaStream_t);
template <int LOADS, bool STREAMING>
void launch(const int4* in, int4* out, int grid, cudaStream_t s) {
  copy_kernel<LOADS, STREAMING><<<grid, 512, 0, s>>>(in, out, N / 4);
}
template <int TILE, int STAGES>
void launch_bulk(const int4* in, int4* out, int grid, cudaStream_t s) {
  static const bool raised = [] {
    CHECK(cudaFuncSetAttribute(bulk_copy<TILE, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE * STAGES));
    return true;
  }();
  (void)raised;
  bulk_copy<TILE, STAGES><<<grid, 32, TILE * STAGES, s>>>(reinterpret_cast<const char*>(in),
                                                          reinterpret_cast<char*>(out), N * 4);
}

template <int TILE, int STAGES>
void launch_bulk_stg(const int4* in, int4* out, int grid, cudaStream_t s) {
  constexpr int WARPS = 8;
  static const bool raised = [] {
    CHECK(cudaFuncSetAttribute(bulk_in_stg_out<TILE, STAGES, WARPS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               TILE * STAGES));
    return true;
  }();
  (void)raised;
  bulk_in_stg_out<TILE, STAGES, WARPS>
      <<<grid, 32 * (WARPS + 1), TILE * STAGES, s>>>(reinterpret_cast<const char*>(in), out, N * 4);
}

struct Shape {
  const char* what;   // copy_kernel, bulk_copy or bulk_in_stg_out
  const char* shape;  // loads per thread and hint, or tile and stages
  int per_sm[3];      // blocks per SM to run it at (0: none)
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
      {"copy_kernel", "loads1_cs", {1, 2, 4}, launch<1, true>},
      {"copy_kernel", "loads2_cs", {1, 2, 4}, launch<2, true>},
      {"copy_kernel", "loads4_cs", {1, 2, 4}, launch<4, true>},
      {"copy_kernel", "loads8_cs", {1, 2, 4}, launch<8, true>},
      {"copy_kernel", "loads4_default", {1, 2, 4}, launch<4, false>},
      {"copy_kernel", "loads8_default", {1, 2, 4}, launch<8, false>},
      {"bulk_copy", "tile16k_stages4", {1, 2, 3}, launch_bulk<16384, 4>},
      {"bulk_copy", "tile8k_stages8", {1, 2, 3}, launch_bulk<8192, 8>},
      {"bulk_copy", "tile32k_stages3", {1, 2, 0}, launch_bulk<32768, 3>},
      {"bulk_copy", "tile12k_stages6", {1, 2, 3}, launch_bulk<12288, 6>},
      {"bulk_in_stg_out", "tile12k_stages6_warps8", {1, 2, 3}, launch_bulk_stg<12288, 6>},
      {"bulk_in_stg_out", "tile32k_stages3_warps8", {1, 2, 0}, launch_bulk_stg<32768, 3>},
  };
  const double bytes = 2.0 * N * 4;
  printf("device,%s\n", p.name);
  printf("round,what,shape,blocks_per_sm,median_us,gb_per_s_rw\n");
  for (int r = 1; r <= rounds; ++r) {
    const double m = median_us([&] { CHECK(cudaMemcpyAsync(d_out, d_in, N * 4, cudaMemcpyDeviceToDevice, s)); }, s);
    printf("%d,cudaMemcpy,,,%.1f,%.1f\n", r, m, bytes / (m * 1e3));
    check_and_clear(d_out, ramp, back, "cudaMemcpy");
    for (const Shape& sh : shapes)
      for (int per_sm : sh.per_sm) {
        if (per_sm == 0) continue;
        const double t = median_us([&] { sh.run(d_in, d_out, per_sm * p.multiProcessorCount, s); }, s);
        printf("%d,%s,%s,%d,%.1f,%.1f\n", r, sh.what, sh.shape, per_sm, t, bytes / (t * 1e3));
        check_and_clear(d_out, ramp, back, sh.what);
      }
  }
  return 0;
}
