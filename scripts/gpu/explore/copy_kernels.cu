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
// The ring primitives, the timing rule and the check, shared with scan_steps.cu.
#include "explore.cuh"

constexpr size_t N = size_t(1) << 28;

template <int LOADS, bool STREAMING>
__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, size_t nvec) {
  grid_stride_copy<LOADS, STREAMING>(in, out, nvec);
}

// The bulk-copy engine (TMA) as the scan's producer warp uses it: one thread per block runs a
// ring of STAGES tiles of TILE bytes in shared memory; each tile comes in with one
// cp.async.bulk (an mbarrier counts its bytes) and goes out with one bulk store, and a stage is
// refilled once the engine has read its store's source. Tiles are dealt to blocks round-robin.
// The last tile may be short (a multiple of 16 bytes, as the engine needs).
template <int TILE>
__device__ __forceinline__ unsigned tile_bytes(size_t total, size_t t) {
  return unsigned(total - t * TILE < TILE ? total - t * TILE : TILE);
}

template <int TILE, int STAGES>
__global__ void bulk_copy(const char* __restrict__ in, char* __restrict__ out, size_t total) {
  const size_t tiles = (total + TILE - 1) / TILE;
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long full[STAGES];
  if (threadIdx.x != 0) return;
  for (int st = 0; st < STAGES; ++st) mbar_init(&full[st], 1);
  fence_barrier_init();
  auto load = [&](size_t t, int st) { bulk_load(ring + st * TILE, in + t * TILE, tile_bytes<TILE>(total, t), &full[st]); };
  const size_t first = blockIdx.x, step = gridDim.x;
  for (int st = 0; st < STAGES && first + st * step < tiles; ++st) load(first + st * step, st);
  size_t k = 0;
  for (size_t t = first; t < tiles; t += step, ++k) {
    const int st = int(k % STAGES);
    mbar_wait(&full[st], unsigned(k / STAGES) & 1);
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(out + t * TILE), "r"(smem_addr(ring + st * TILE)), "r"(tile_bytes<TILE>(total, t)) : "memory");
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
      mbar_init(&full[st], 1);
      mbar_init(&empty[st], WARPS);
    }
    fence_barrier_init();
  }
  __syncthreads();
  const size_t first = blockIdx.x, step = gridDim.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane != 0) return;
    size_t k = 0;
    for (size_t t = first; t < tiles; t += step, ++k) {
      const int st = int(k % STAGES);
      if (k >= STAGES) mbar_wait(&empty[st], unsigned(k / STAGES - 1) & 1);
      bulk_load(ring + st * TILE, in + t * TILE, tile_bytes<TILE>(total, t), &full[st]);
    }
    return;
  }
  const int me = threadIdx.x - 32;
  size_t k = 0;
  for (size_t t = first; t < tiles; t += step, ++k) {
    const int st = int(k % STAGES);
    mbar_wait(&full[st], unsigned(k / STAGES) & 1);
    const int4* tile = reinterpret_cast<const int4*>(ring + st * TILE);
    const unsigned vecs = tile_bytes<TILE>(total, t) / 16;
    for (unsigned v = me; v < vecs; v += 32 * WARPS) __stcs(out + t * (TILE / 16) + v, tile[v]);
    fence_proxy_async();
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[st]);
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
  static const bool raised = raise_shared(bulk_copy<TILE, STAGES>, TILE * STAGES);
  (void)raised;
  bulk_copy<TILE, STAGES><<<grid, 32, TILE * STAGES, s>>>(reinterpret_cast<const char*>(in),
                                                          reinterpret_cast<char*>(out), N * 4);
}

template <int TILE, int STAGES>
void launch_bulk_stg(const int4* in, int4* out, int grid, cudaStream_t s) {
  constexpr int WARPS = 8;
  static const bool raised = raise_shared(bulk_in_stg_out<TILE, STAGES, WARPS>, TILE * STAGES);
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

int main(int argc, char** argv) {
  const int rounds = rounds_arg(argc, argv, "copy_kernels");
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
  print_csv_head(p);
  for (int r = 1; r <= rounds; ++r) {
    memcpy_row(r, d_in, d_out, ramp, back, s, "copy_kernels");
    for (const Shape& sh : shapes)
      for (int per_sm : sh.per_sm) {
        if (per_sm == 0) continue;
        const double t = median_us([&] { sh.run(d_in, d_out, per_sm * p.multiProcessorCount, s); }, s);
        printf("%d,%s,%s,%d,%.1f,%.1f\n", r, sh.what, sh.shape, per_sm, t, bytes / (t * 1e3));
        check_and_clear(d_out, ramp, back, "copy_kernels", sh.what);
      }
  }
  return 0;
}
