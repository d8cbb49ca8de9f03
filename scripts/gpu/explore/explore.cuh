// What the exploration programs of issue 37 share (copy_kernels.cu, scan_steps.cu,
// loaded_latency.cu): the bulk-copy engine's ring primitives in PTX (mbarrier, cp.async.bulk, the
// proxy fence), the grid-stride copy, the timing rule (the median of TIMED launches after an untimed one) and the check of a result.
// Include after cub/harness_common.cuh (CHECK).
#pragma once

constexpr int TIMED = 10;

// ---- device: a ring of tiles in shared memory, filled by the bulk-copy engine -------------

__device__ __forceinline__ unsigned smem_addr(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// mbarrier.init with `count` arrivals a phase (by one thread; fence_barrier_init after all).
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// Makes the barriers' initialisation visible to the copy engine.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival (release at CTA scope: the arriving thread's earlier writes come with it).
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
}

// One thread: the barrier expects `bytes` more, and the engine copies them from `src` to `dst`
// (both 16-byte aligned, `bytes` a multiple of 16), completing them on the barrier. With
// EVICT_FIRST, under an L2 evict-first policy (as the Rust scan's producer warp loads).
template <bool EVICT_FIRST = false>
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  const unsigned b = smem_addr(bar);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  if (EVICT_FIRST) {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
        ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(b), "l"(policy)
        : "memory");
  } else {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(b)
                 : "memory");
  }
}

// This thread's shared-memory accesses (generic proxy) come before the engine's next writes.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// ---- device: a grid-stride copy ---------------------------------------------------------

// The grid-stride int4 copy of `nvec` vectors: each thread LOADS loads in flight per trip (all
// issued before any store), with streaming (.cs) or default cache hints.
template <int LOADS, bool STREAMING>
__device__ __forceinline__ void grid_stride_copy(const int4* __restrict__ in, int4* __restrict__ out, size_t nvec) {
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

// ---- host ---------------------------------------------------------------------------------

// The rounds a program runs: argv[1], default 3; outside 1..100 one line naming `prog`, exit 2.
inline int rounds_arg(int argc, char** argv, const char* prog) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  if (rounds < 1 || rounds > 100) {
    fprintf(stderr, "%s: rounds must be 1 to 100, not %s\n", prog, argv[1]);
    exit(2);
  }
  return rounds;
}

// Lets `kernel` take `bytes` of dynamic shared memory (once per kernel: call from a static).
template <typename K>
bool raise_shared(K kernel, int bytes) {
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  return true;
}

// The median of TIMED calls of `call` on `s`, after an untimed one, in microseconds. With
// `hold_ns`, each timed call is queued behind harness_common.cuh's stream_hold (that long on the
// GPU, before the start event), so that host work inside `call` (a library's dispatch) is done
// while the stream waits and the events time the GPU's work alone.
template <typename F>
double median_us(F call, cudaStream_t s, unsigned hold_ns = 0) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  call();
  std::vector<float> ms(TIMED);
  for (int k = 0; k < TIMED; ++k) {
    if (hold_ns) stream_hold<<<1, 1, 0, s>>>(hold_ns);
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

// Checks that the `want.size()` ints at `d_out` are `want` (else one line naming `prog`, `what`
// and the first wrong index, exit 1), then clears them: the next run must write every element.
inline void check_and_clear(void* d_out, const std::vector<int>& want, std::vector<int>& back, const char* prog,
                            const char* what) {
  const size_t n = want.size();
  CHECK(cudaMemcpy(back.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i)
    if (back[i] != want[i]) {
      fprintf(stderr, "%s: %s is wrong at %zu: %d, not %d\n", prog, what, i, back[i], want[i]);
      exit(1);
    }
  CHECK(cudaMemset(d_out, 0, n * 4));
  // The memset runs on the legacy stream, which the programs' non-blocking streams do not wait
  // for: done before anything is launched on them.
  CHECK(cudaDeviceSynchronize());
}

// The CSV's first lines: the device, then the columns every program's rows have.
inline void print_csv_head(const cudaDeviceProp& p) {
  printf("device,%s\n", p.name);
  printf("round,what,shape,blocks_per_sm,median_us,gb_per_s_rw\n");
}

// Round r's cudaMemcpy row: the device-to-device copy of `want` (at d_in) to d_out timed, its row
// printed (GB/s counting bytes read and written), the copy checked.
inline void memcpy_row(int r, const void* d_in, void* d_out, const std::vector<int>& want, std::vector<int>& back,
                       cudaStream_t s, const char* prog, unsigned hold_ns = 0) {
  const size_t bytes = want.size() * 4;
  const double m =
      median_us([&] { CHECK(cudaMemcpyAsync(d_out, d_in, bytes, cudaMemcpyDeviceToDevice, s)); }, s, hold_ns);
  printf("%d,cudaMemcpy,,,%.1f,%.1f\n", r, m, 2.0 * bytes / (m * 1e3));
  check_and_clear(d_out, want, back, prog, "cudaMemcpy");
}
