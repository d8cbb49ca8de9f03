// The CUDA C twins of the classic kernels: every kernel of the book chapters and tutorials
// that this project re-implements in Rust (kernels/src/reduce, sumsq, scan), written in CUDA C
// the way the book and the tutorials write it, so that Rust and CUDA C can be timed on the
// same data with the same launch geometry.
//
// host/src/twins.rs builds this file with nvcc at run time (-O3 -arch=sm_XX of the device,
// cached like cub/bench.cu), writes the input (raw little-endian int32) to a file, runs
//
//   classic KERNEL INPUT_FILE N BLOCK REPEAT [EXPECTED]
//
// and parses the one line it prints:
//
//   RESULT kernel=K n=N grid=G block=B launches=L sms=S runs=R median_us=M min_us=m
//          max_us=x times_us=t1,t2,... result=V expected=E ok=C [cycles=Y]
//
// (one line). The harness reads the first N int32 of INPUT_FILE, uploads them (outside any
// timing), makes one untimed warm-up run, then REPEAT timed runs: each restores what the
// kernel consumes (the scratch copy of the input for the in-place kernels; outside the
// timing), records a CUDA event, launches (ONE launch for a reduction; every launch of the
// plan for a scan), records a second event, waits, and then copies the result back and
// checks it, so every timed run is verified. Like the Rust side (reduce_scan::reduce::timed_runs),
// a slow kernel stops repeating after 3 runs once its runs have taken 3 s. The partials of
// a reduction are added on the host with wrapping 32-bit arithmetic (as Rust's wrapping_add);
// `result` is the last run's sum (for scans: the last element of the last run's output) and
// `ok` counts the runs whose result equalled EXPECTED (given by the caller, else the CPU
// reference computed here; scans always compare every element with the CPU inclusive scan).
// `cycles` (sum-of-squares kernels) is the last run's latest block end minus earliest block
// start of clock64(). Any failure prints "ERROR <what>" and exits with status 1.
//
// Geometry: the same as the Rust twin's (host/src/registry, host/src/reduce.rs `geometry`,
// host/src/scan): grid = ceil(N / (BLOCK * items per thread)) for the book's reductions,
// one thread / one block / 4 blocks per SM for the sum-of-squares steps, 512-thread blocks
// for the two scans. Shared memory: 4 KiB static arrays (the Rust kernels' [i32; 1024]),
// BLOCK * 4 bytes of dynamic shared memory for smem_unroll4_dyn.
//
// Where the book's code needs help, the smallest fix, with a comment at the place:
//  * The book assumes N is a multiple of the elements a block consumes (its N is 2^24): its
//    unrolled kernels fold 4 or 8 elements only when all of them exist, and its trees read a
//    whole block's slots. The harness keeps that assumption instead of changing the kernels:
//    the device buffer is zero-padded up to grid * BLOCK * items elements and the kernels get
//    that padded length as n (zeros add nothing; the extra reads are at most one segment).
//  * `if (idx >= n) return;` before a __syncthreads: a barrier must be reached by every
//    thread of the block, so the check becomes a flag that skips the work, not the barriers.
//  * The last-warp `volatile` code relies on the 32 lanes running in lock step, which Volta
//    and later do not guarantee (independent thread scheduling): each step is guarded by
//    `tid < stride` (so no lane writes a slot another lane reads in the same step) and the
//    steps are separated by __syncwarp(); the stride-32 step is skipped for a 32-thread block
//    (whose slots 32..63 are another data block or outside the shared array).
//
// The kernels, and the book's (or tutorial's) function each one mirrors:
//  Professional CUDA C Programming, chapter 3 (reduceInteger.cu), in place on a scratch copy:
//   neighbored              reduceNeighbored (tid % (2*stride))
//   neighbored_less         reduceNeighboredLess (index = 2*stride*tid)
//   interleaved             reduceInterleaved
//   unroll2                 reduceUnrolling2
//   unroll4                 reduceUnrolling4
//   unroll8                 reduceUnrolling8
//   unroll_warps8           reduceUnrollWarps8 (volatile last warp)
//   complete_unroll_warps8  reduceCompleteUnrollWarps8
//   complete_unroll         reduceCompleteUnroll<iBlockSize>, 32..1024, switch on the block
//  chapter 5 (reduceInteger with shared memory):
//   gmem                    reduceGmem (in place, global memory)
//   smem                    reduceSmem (static __shared__ int[1024])
//   smem_unroll4            reduceSmemUnroll4
//   smem_unroll4_dyn        reduceSmemUnroll4Dyn (extern __shared__)
//  the sum-of-squares tutorial (clock64 per block, partials added on the host):
//   squares_one_thread      sumOfSquares<<<1, 1>>>
//   squares_chunked         one block, each thread a contiguous chunk
//   squares_coalesced       one block, thread t reads t, t+T, ...
//   squares_grid_stride     BLOCK_NUM blocks, grid-wide stride
//   squares_block_tree      BLOCK_NUM blocks, shared-memory tree per block
//  chapter 3's nested reduction (nestedReduce.cu; the nested harness only, see its section):
//   recursive_reduce        gpuRecursiveReduce (tail launch)
//   recursive_reduce_nosync gpuRecursiveReduceNosync (fire and forget)
//   recursive_reduce2       gpuRecursiveReduce2 (one launch per level)
//  the Fenwick-tree (BIT) scan and Blelloch (inclusive):
//   bit                     gen_bit_in_one_block per level + calc_sum_using_bit
//   blelloch                GPU Gems 3 prescan (CONFLICT_FREE_OFFSET padding) per level,
//                           then the per-tile offsets added level by level
#include <cuda_runtime.h>

#include <cerrno>

// Arithmetic note: the kernels add and multiply `int` as the book does. Signed overflow is
// undefined in C++, but nvcc emits 32-bit two's-complement add.s32 / mul.lo.s32 for these
// sums, which wrap exactly like Rust's wrapping_add / wrapping_mul; the host-side checks use
// uint32_t arithmetic, which is defined to wrap.

// =====================================================================================
// The last warp of the unrolled trees (chapter 3 and 5).
//
// The book writes the six steps as `vmem[tid] += vmem[tid + s]` for all 32 lanes, relying on
// lock-step execution. On Volta and later the lanes of a warp may run apart, so a lane >= s
// could write its slot before a lane < s has read it. Fix: only lanes < s add (their partners
// tid + s >= s are written by nobody in that step) and a __syncwarp() separates the steps.
// `active` is false for threads the book would have sent home early (they still reach the
// warp barriers); `blockSize` skips the stride-32 step of a 32-thread block.
__device__ __forceinline__ void lastWarp(volatile int* vmem, unsigned int tid, unsigned int blockSize,
                                         bool active) {
  if (active && blockSize >= 64) vmem[tid] += vmem[tid + 32];
  __syncwarp();
  if (active && tid < 16) vmem[tid] += vmem[tid + 16];
  __syncwarp();
  if (active && tid < 8) vmem[tid] += vmem[tid + 8];
  __syncwarp();
  if (active && tid < 4) vmem[tid] += vmem[tid + 4];
  __syncwarp();
  if (active && tid < 2) vmem[tid] += vmem[tid + 2];
  __syncwarp();
  if (active && tid < 1) vmem[tid] += vmem[tid + 1];
}

// =====================================================================================
// Chapter 3: reduction in global memory, in place.

__global__ void reduceNeighbored(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;

  // The book: `if (idx >= n) return;` -- an early exit before the barriers below. Threads
  // past n stay and skip the adds instead.
  bool inside = idx < n;

  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    if (inside && (tid % (2 * stride)) == 0) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceNeighboredLess(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;

  bool inside = idx < n;  // the book's early return, kept as a flag (see reduceNeighbored)

  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    // The working threads packed first: thread tid handles the pair at 2*stride*tid.
    unsigned int index = 2 * stride * tid;
    if (inside && index < blockDim.x) idata[index] += idata[index + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceInterleaved(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;

  bool inside = idx < n;  // the book's early return, kept as a flag (see reduceNeighbored)

  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (inside && tid < stride) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceUnrolling2(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 2;

  // Fold the block's second data block into its first.
  if (idx + blockDim.x < n) g_idata[idx] += g_idata[idx + blockDim.x];
  __syncthreads();

  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceUnrolling4(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 4;

  // Four independent loads per thread, folded into the first data block (all four or none:
  // the harness pads n to a multiple of 4 * blockDim, as the book's sizes are).
  if (idx + 3 * blockDim.x < n) {
    int a0 = g_idata[idx];
    int a1 = g_idata[idx + blockDim.x];
    int a2 = g_idata[idx + 2 * blockDim.x];
    int a3 = g_idata[idx + 3 * blockDim.x];
    g_idata[idx] = a0 + a1 + a2 + a3;
  }
  __syncthreads();

  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// Phase 1 of the 8-way unrolled kernels: eight independent loads per thread, their sum stored
// in the first data block (all eight or none; the harness pads n to a multiple of 8*blockDim).
__device__ __forceinline__ void fold8(int* g_idata, unsigned int idx, unsigned int n) {
  if (idx + 7 * blockDim.x < n) {
    int a0 = g_idata[idx];
    int a1 = g_idata[idx + blockDim.x];
    int a2 = g_idata[idx + 2 * blockDim.x];
    int a3 = g_idata[idx + 3 * blockDim.x];
    int b0 = g_idata[idx + 4 * blockDim.x];
    int b1 = g_idata[idx + 5 * blockDim.x];
    int b2 = g_idata[idx + 6 * blockDim.x];
    int b3 = g_idata[idx + 7 * blockDim.x];
    g_idata[idx] = a0 + a1 + a2 + a3 + b0 + b1 + b2 + b3;
  }
}

__global__ void reduceUnrolling8(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 8;

  fold8(g_idata, idx, n);
  __syncthreads();

  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceUnrollWarps8(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 8;

  fold8(g_idata, idx, n);
  __syncthreads();

  // Block-wide rounds down to stride 64; the last warp finishes without block barriers.
  for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) idata[tid] += idata[tid + stride];
    __syncthreads();
  }

  if (tid < 32) lastWarp(idata, tid, blockDim.x, true);

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

__global__ void reduceCompleteUnrollWarps8(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 8;

  fold8(g_idata, idx, n);
  __syncthreads();

  // Every block-wide round written out (blockDim.x <= 1024); the barriers stay outside the ifs.
  if (blockDim.x >= 1024 && tid < 512) idata[tid] += idata[tid + 512];
  __syncthreads();
  if (blockDim.x >= 512 && tid < 256) idata[tid] += idata[tid + 256];
  __syncthreads();
  if (blockDim.x >= 256 && tid < 128) idata[tid] += idata[tid + 128];
  __syncthreads();
  if (blockDim.x >= 128 && tid < 64) idata[tid] += idata[tid + 64];
  __syncthreads();

  if (tid < 32) lastWarp(idata, tid, blockDim.x, true);

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

template <unsigned int iBlockSize>
__global__ void reduceCompleteUnroll(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 8 + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x * 8;

  fold8(g_idata, idx, n);
  __syncthreads();

  // The block size is a template constant: the compiler drops the rounds it does not need.
  if (iBlockSize >= 1024 && tid < 512) idata[tid] += idata[tid + 512];
  __syncthreads();
  if (iBlockSize >= 512 && tid < 256) idata[tid] += idata[tid + 256];
  __syncthreads();
  if (iBlockSize >= 256 && tid < 128) idata[tid] += idata[tid + 128];
  __syncthreads();
  if (iBlockSize >= 128 && tid < 64) idata[tid] += idata[tid + 64];
  __syncthreads();

  if (tid < 32) lastWarp(idata, tid, iBlockSize, true);

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// =====================================================================================
// Chapter 5: the unrolled tree in global memory, then in shared memory.

// Shared array of the static-shared kernels: the largest block (the Rust kernels' [i32; 1024]).
#define DIM 1024

__global__ void reduceGmem(int* g_idata, int* g_odata, unsigned int n) {
  unsigned int tid = threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;
  unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;

  bool inside = idx < n;  // the book's early return, kept as a flag (see reduceNeighbored)

  if (inside && blockDim.x >= 1024 && tid < 512) idata[tid] += idata[tid + 512];
  __syncthreads();
  if (inside && blockDim.x >= 512 && tid < 256) idata[tid] += idata[tid + 256];
  __syncthreads();
  if (inside && blockDim.x >= 256 && tid < 128) idata[tid] += idata[tid + 128];
  __syncthreads();
  if (inside && blockDim.x >= 128 && tid < 64) idata[tid] += idata[tid + 64];
  __syncthreads();

  if (tid < 32) lastWarp(idata, tid, blockDim.x, inside);

  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

// The shared-memory tree of reduceSmem / reduceSmemUnroll4 / reduceSmemUnrollDyn.
__device__ __forceinline__ void smemTree(int* smem, unsigned int tid) {
  if (blockDim.x >= 1024 && tid < 512) smem[tid] += smem[tid + 512];
  __syncthreads();
  if (blockDim.x >= 512 && tid < 256) smem[tid] += smem[tid + 256];
  __syncthreads();
  if (blockDim.x >= 256 && tid < 128) smem[tid] += smem[tid + 128];
  __syncthreads();
  if (blockDim.x >= 128 && tid < 64) smem[tid] += smem[tid + 64];
  __syncthreads();

  if (tid < 32) lastWarp(smem, tid, blockDim.x, true);
}

__global__ void reduceSmem(int* g_idata, int* g_odata, unsigned int n) {
  __shared__ int smem[DIM];
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;

  // The book returns early when idx >= n, before the barriers; a thread past n stores 0.
  smem[tid] = idx < n ? idata[tid] : 0;
  __syncthreads();

  smemTree(smem, tid);

  if (tid == 0) g_odata[blockIdx.x] = smem[0];
}

// Reads four data blocks per thread into a register sum (the book's tmpSum).
__device__ __forceinline__ int unroll4Sum(const int* g_idata, unsigned int idx, unsigned int n) {
  int tmpSum = 0;
  if (idx < n) {
    int a1 = 0, a2 = 0, a3 = 0, a4 = 0;
    a1 = g_idata[idx];
    if (idx + blockDim.x < n) a2 = g_idata[idx + blockDim.x];
    if (idx + 2 * blockDim.x < n) a3 = g_idata[idx + 2 * blockDim.x];
    if (idx + 3 * blockDim.x < n) a4 = g_idata[idx + 3 * blockDim.x];
    tmpSum = a1 + a2 + a3 + a4;
  }
  return tmpSum;
}

__global__ void reduceSmemUnroll4(int* g_idata, int* g_odata, unsigned int n) {
  __shared__ int smem[DIM];
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;

  smem[tid] = unroll4Sum(g_idata, idx, n);
  __syncthreads();

  smemTree(smem, tid);

  if (tid == 0) g_odata[blockIdx.x] = smem[0];
}

// The same with the shared array sized at launch (blockDim.x ints). The blog copy of this
// kernel tests `blockDim.x > 1024` and writes g_odata[threadIdx.x]; the book's >= and
// g_odata[blockIdx.x] are meant (smemTree).
__global__ void reduceSmemUnrollDyn(int* g_idata, int* g_odata, unsigned int n) {
  extern __shared__ int dsmem[];
  unsigned int tid = threadIdx.x;
  unsigned int idx = blockIdx.x * blockDim.x * 4 + threadIdx.x;

  dsmem[tid] = unroll4Sum(g_idata, idx, n);
  __syncthreads();

  smemTree(dsmem, tid);

  if (tid == 0) g_odata[blockIdx.x] = dsmem[0];
}

// =====================================================================================
// The sum-of-squares tutorial. Every step records clock64() per block the way the Rust
// kernels do: the start before a barrier that precedes the first load, the end after a
// barrier that follows the last result write; thread 0 writes both to time[2b], time[2b+1].
// (The tutorial keeps one DATA_SIZE and THREAD_NUM constant; here n and blockDim.x.)

__device__ __forceinline__ long long blockStart() {
  long long start = clock64();
  __syncthreads();
  return start;
}

__device__ __forceinline__ void blockStop(long long* time, long long start) {
  __syncthreads();
  if (threadIdx.x == 0) {
    long long end = clock64();
    time[2 * blockIdx.x] = start;
    time[2 * blockIdx.x + 1] = end;
  }
}

__global__ void sumOfSquaresOneThread(const int* num, int* result, long long* time, unsigned int n) {
  long long start = blockStart();
  int sum = 0;
  for (unsigned int i = 0; i < n; i++) sum += num[i] * num[i];
  result[0] = sum;
  blockStop(time, start);
}

__global__ void sumOfSquaresChunked(const int* num, int* result, long long* time, unsigned int n) {
  const unsigned int tid = threadIdx.x;
  long long start = blockStart();
  // The tutorial's chunk is DATA_SIZE / THREAD_NUM, which drops the remainder when the
  // division is not exact; here it is rounded up and the last chunk stops at n.
  unsigned long long size = (n + (unsigned long long)blockDim.x - 1) / blockDim.x;
  unsigned long long end = (tid + 1) * size < n ? (tid + 1) * size : n;
  int sum = 0;
  for (unsigned long long i = tid * size; i < end; i++) sum += num[i] * num[i];
  result[tid] = sum;
  blockStop(time, start);
}

__global__ void sumOfSquaresCoalesced(const int* num, int* result, long long* time, unsigned int n) {
  const unsigned int tid = threadIdx.x;
  long long start = blockStart();
  int sum = 0;
  for (unsigned long long i = tid; i < n; i += blockDim.x) sum += num[i] * num[i];
  result[tid] = sum;
  blockStop(time, start);
}

__global__ void sumOfSquaresGridStride(const int* num, int* result, long long* time, unsigned int n) {
  const unsigned int tid = threadIdx.x;
  const unsigned int bid = blockIdx.x;
  long long start = blockStart();
  int sum = 0;
  for (unsigned long long i = (unsigned long long)bid * blockDim.x + tid; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    sum += num[i] * num[i];
  }
  result[bid * blockDim.x + tid] = sum;
  blockStop(time, start);
}

__global__ void sumOfSquaresBlockTree(const int* num, int* result, long long* time, unsigned int n) {
  __shared__ int shared[DIM];
  const unsigned int tid = threadIdx.x;
  const unsigned int bid = blockIdx.x;
  long long start = blockStart();
  int sum = 0;
  for (unsigned long long i = (unsigned long long)bid * blockDim.x + tid; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    sum += num[i] * num[i];
  }
  shared[tid] = sum;
  __syncthreads();
  // The tutorial's last step: halve the active threads each round, one barrier per round.
  for (unsigned int offset = blockDim.x / 2; offset > 0; offset >>= 1) {
    if (tid < offset) shared[tid] += shared[tid + offset];
    __syncthreads();
  }
  if (tid == 0) result[bid] = shared[0];
  blockStop(time, start);
}

// =====================================================================================
// Scans (inclusive).

// Fenwick tree (BIT): 512 threads per block, as the blog's kernels and kernels::scan::BIT_BLOCK.
#define BIT_BLOCK 512

// One level of the tree: thread j of the launch owns position p = (j + 1) * stride - 1 and
// builds, in shared memory, the BIT of the 512 positions of its block; the result goes to
// tree[p]. The blog's kernel works in place on a copy of the input and reads input[p] for
// every thread; here the first level reads the input directly (as the Rust twin, so no copy)
// and a thread whose p is past n loads 0 and stores nothing (the blog reads past the end).
__global__ void bit_build(const int* src, int* tree, unsigned int n, unsigned int stride) {
  __shared__ int reduced_sum[BIT_BLOCK];
  unsigned int id = threadIdx.x;
  unsigned long long j = (unsigned long long)blockIdx.x * BIT_BLOCK + id;
  unsigned long long end = (j + 1) * stride;
  bool live = end <= n;
  unsigned long long p = end - 1;

  reduced_sum[id] = live ? src[p] : 0;
  __syncthreads();

  // Widths 2, 4, ..., 512: the slots whose (index + 1) is a multiple of the width add the
  // node half a width to their left (blocks start at multiples of 512, so the local index
  // has the same low bits as the global one the blog tests).
  for (unsigned int width = 2; width <= BIT_BLOCK; width <<= 1) {
    if (((id + 1) & (width - 1)) == 0) reduced_sum[id] += reduced_sum[id - width / 2];
    __syncthreads();
  }

  if (live) tree[p] = reduced_sum[id];
}

// Every prefix from the tree: walk down the lowbits of i + 1 (the blog's calc_sum_using_bit).
__global__ void bit_query(const int* tree, int* output, unsigned int n) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {  // no barrier in this kernel: the early exit is fine
    int sum = tree[i];
    unsigned long long k = i + 1;
    k -= k & (~k + 1);
    while (k > 0) {
      sum += tree[k - 1];
      k -= k & (~k + 1);
    }
    output[i] = sum;
  }
}

// Blelloch (GPU Gems 3, ch. 39): 512 threads scan a tile of 1024 in shared memory, padded by
// one word every 32 so that the tree's strided accesses hit distinct banks.
#define BLELLOCH_BLOCK 512
#define BLELLOCH_TILE (2 * BLELLOCH_BLOCK)
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(i) ((i) >> LOG_NUM_BANKS)

// Scans tile blockIdx.x of g_idata[0..n) into g_odata (inclusive, or exclusive when
// `exclusive`; upper levels scan the tile sums exclusively, in place) and writes the tile's
// total to g_sums[blockIdx.x]. Elements past n load as 0 and are not written.
__global__ void blelloch_block(const int* g_idata, int* g_odata, int* g_sums, unsigned int n, int exclusive) {
  __shared__ int temp[BLELLOCH_TILE + CONFLICT_FREE_OFFSET(BLELLOCH_TILE)];
  unsigned int thid = threadIdx.x;
  unsigned long long base = (unsigned long long)blockIdx.x * BLELLOCH_TILE;
  unsigned int ai = thid;
  unsigned int bi = thid + BLELLOCH_TILE / 2;
  int xa = base + ai < n ? g_idata[base + ai] : 0;
  int xb = base + bi < n ? g_idata[base + bi] : 0;
  temp[ai + CONFLICT_FREE_OFFSET(ai)] = xa;
  temp[bi + CONFLICT_FREE_OFFSET(bi)] = xb;

  // Up-sweep: build the sum tree in place.
  unsigned int offset = 1;
  for (unsigned int d = BLELLOCH_TILE >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      unsigned int a = offset * (2 * thid + 1) - 1;
      unsigned int b = offset * (2 * thid + 2) - 1;
      a += CONFLICT_FREE_OFFSET(a);
      b += CONFLICT_FREE_OFFSET(b);
      temp[b] += temp[a];
    }
    offset *= 2;
  }

  // The root is the tile's total: publish it, then clear it for the down-sweep.
  if (thid == 0) {
    unsigned int root = BLELLOCH_TILE - 1 + CONFLICT_FREE_OFFSET(BLELLOCH_TILE - 1);
    g_sums[blockIdx.x] = temp[root];
    temp[root] = 0;
  }

  // Down-sweep: each node passes its prefix to its left child and prefix + left to its right.
  for (unsigned int d = 1; d < BLELLOCH_TILE; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (thid < d) {
      unsigned int a = offset * (2 * thid + 1) - 1;
      unsigned int b = offset * (2 * thid + 2) - 1;
      a += CONFLICT_FREE_OFFSET(a);
      b += CONFLICT_FREE_OFFSET(b);
      int t = temp[a];
      temp[a] = temp[b];
      temp[b] += t;
    }
  }
  __syncthreads();

  int ea = temp[ai + CONFLICT_FREE_OFFSET(ai)];
  int eb = temp[bi + CONFLICT_FREE_OFFSET(bi)];
  if (base + ai < n) g_odata[base + ai] = exclusive ? ea : ea + xa;
  if (base + bi < n) g_odata[base + bi] = exclusive ? eb : eb + xb;
}

// Adds offsets[b] (the exclusive scan of the tile sums) to every element of tile b.
__global__ void blelloch_add(int* data, const int* offsets, unsigned int n) {
  unsigned long long base = (unsigned long long)blockIdx.x * BLELLOCH_TILE;
  int offset = offsets[blockIdx.x];
  unsigned long long i = base + threadIdx.x;
  if (i < n) data[i] += offset;
  i += BLELLOCH_BLOCK;
  if (i < n) data[i] += offset;
}

// =====================================================================================
// Chapter 3's nested reduction (nestedReduce.cu), in the second harness only: host/src/twins.rs
// builds this file again with -DCLASSIC_NESTED -rdc=true and links it with libcudadevrt, as
// the book's build line does (`nvcc -rdc=true`), so the other twins keep their usual build.
// CUDA 12's device runtime removed cudaDeviceSynchronize() from device code; each kernel sends
// its child to the named stream its Rust twin uses (kernels/src/reduce/recursive_reduce*.rs
// explain each choice):
//   recursive_reduce         gpuRecursiveReduce: the child in cudaStreamTailLaunch, which
//                            starts it once the launching grid has completed (the book waits)
//   recursive_reduce_nosync  gpuRecursiveReduceNosync: cudaStreamFireAndForget, after a fence
//                            and one barrier, so the child sees every thread's add
//   recursive_reduce2        gpuRecursiveReduce2: block 0 launches the next level into
//                            cudaStreamTailLaunch (the book's at-once launch is not ordered)
// The book's `if (isize == 2 && tid == 0) … return;` and its `istride > 1` test become one
// base case that the whole block returns from.
#ifdef CLASSIC_NESTED
__global__ void gpuRecursiveReduce(int* g_idata, int* g_odata, unsigned int isize) {
  unsigned int tid = threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;
  int* odata = &g_odata[blockIdx.x];

  if (isize == 2) {
    if (tid == 0) odata[0] = idata[0] + idata[1];
    return;
  }
  unsigned int istride = isize >> 1;
  if (tid < istride) idata[tid] += idata[tid + istride];

  if (tid == 0) gpuRecursiveReduce<<<1, istride, 0, cudaStreamTailLaunch>>>(idata, odata, istride);
}

__global__ void gpuRecursiveReduceNosync(int* g_idata, int* g_odata, unsigned int isize) {
  unsigned int tid = threadIdx.x;
  int* idata = g_idata + blockIdx.x * blockDim.x;
  int* odata = &g_odata[blockIdx.x];

  if (isize == 2) {
    if (tid == 0) odata[0] = idata[0] + idata[1];
    return;
  }
  unsigned int istride = isize >> 1;
  if (tid < istride) idata[tid] += idata[tid + istride];
  __threadfence();
  __syncthreads();

  if (tid == 0) gpuRecursiveReduceNosync<<<1, istride, 0, cudaStreamFireAndForget>>>(idata, odata, istride);
}

__global__ void gpuRecursiveReduce2(int* g_idata, int* g_odata, int iStride, const int iDim) {
  int* idata = g_idata + blockIdx.x * iDim;

  if (iStride == 1) {
    if (threadIdx.x == 0) g_odata[blockIdx.x] = idata[0] + idata[1];
    return;
  }
  idata[threadIdx.x] += idata[threadIdx.x + iStride];

  if (threadIdx.x == 0 && blockIdx.x == 0) {
    gpuRecursiveReduce2<<<gridDim.x, iStride / 2, 0, cudaStreamTailLaunch>>>(g_idata, g_odata, iStride / 2, iDim);
  }
}
#endif

// =====================================================================================
// The harness.

enum class Kind { InPlace, Reads, SumSq, Bit, Blelloch, NestedTail, NestedAtOnce, NestedPerLevel };
enum class SqGrid { None, OneThread, OneBlock, PerSm };

// Blocks per multiprocessor of the many-block sum-of-squares steps (host/src/registry/sumsq.rs).
static const unsigned int SUMSQ_BLOCKS_PER_SM = 4;

// Everything a launch may need.
struct Args {
  int* in;               // the kernel's input: the scratch copy (in place) or the input
  int* out;              // partials, or the scan's output
  long long* clocks;     // sum of squares: 2 per block
  unsigned int n;        // what the kernel gets as n (padded for the book's reductions)
  dim3 grid, block;
  size_t dyn_smem;
  unsigned int nested_part;  // the per-block nested kernels: blocks per host launch
};

using ReduceKernel = void (*)(int*, int*, unsigned int);
using SquaresKernel = void (*)(const int*, int*, long long*, unsigned int);

struct Twin {
  const char* name;      // the Rust variant's name
  Kind kind;
  unsigned int items;    // elements per thread (grid = ceil(n / (block * items)))
  SqGrid sq;             // sum of squares: the grid
  bool per_thread;       // sum of squares: one partial per thread (else per block)
  unsigned int dyn_per_thread;  // dynamic shared bytes per thread of the block
  ReduceKernel reduce;   // the reductions (complete_unroll: nullptr, dispatched on the block)
  SquaresKernel squares; // the sum-of-squares steps
};

static const Twin TWINS[] = {
    {"neighbored", Kind::InPlace, 1, SqGrid::None, false, 0, reduceNeighbored, nullptr},
    {"neighbored_modulo", Kind::InPlace, 1, SqGrid::None, false, 0, reduceNeighbored, nullptr},
    {"neighbored_less", Kind::InPlace, 1, SqGrid::None, false, 0, reduceNeighboredLess, nullptr},
    {"interleaved", Kind::InPlace, 1, SqGrid::None, false, 0, reduceInterleaved, nullptr},
    {"unroll2", Kind::InPlace, 2, SqGrid::None, false, 0, reduceUnrolling2, nullptr},
    {"unroll4", Kind::InPlace, 4, SqGrid::None, false, 0, reduceUnrolling4, nullptr},
    {"unroll8", Kind::InPlace, 8, SqGrid::None, false, 0, reduceUnrolling8, nullptr},
    {"unroll_warps8", Kind::InPlace, 8, SqGrid::None, false, 0, reduceUnrollWarps8, nullptr},
    {"complete_unroll_warps8", Kind::InPlace, 8, SqGrid::None, false, 0, reduceCompleteUnrollWarps8, nullptr},
    {"complete_unroll", Kind::InPlace, 8, SqGrid::None, false, 0, nullptr, nullptr},
    {"gmem", Kind::InPlace, 1, SqGrid::None, false, 0, reduceGmem, nullptr},
    {"smem", Kind::Reads, 1, SqGrid::None, false, 0, reduceSmem, nullptr},
    {"smem_unroll4", Kind::Reads, 4, SqGrid::None, false, 0, reduceSmemUnroll4, nullptr},
    {"smem_unroll4_dyn", Kind::Reads, 4, SqGrid::None, false, 4, reduceSmemUnrollDyn, nullptr},
    {"squares_one_thread", Kind::SumSq, 1, SqGrid::OneThread, true, 0, nullptr, sumOfSquaresOneThread},
    {"squares_chunked", Kind::SumSq, 1, SqGrid::OneBlock, true, 0, nullptr, sumOfSquaresChunked},
    {"squares_coalesced", Kind::SumSq, 1, SqGrid::OneBlock, true, 0, nullptr, sumOfSquaresCoalesced},
    {"squares_grid_stride", Kind::SumSq, 1, SqGrid::PerSm, true, 0, nullptr, sumOfSquaresGridStride},
    {"squares_block_tree", Kind::SumSq, 1, SqGrid::PerSm, false, 0, nullptr, sumOfSquaresBlockTree},
    {"bit", Kind::Bit, 1, SqGrid::None, false, 0, nullptr, nullptr},
    {"blelloch", Kind::Blelloch, 2, SqGrid::None, false, 0, nullptr, nullptr},
#ifdef CLASSIC_NESTED
    {"recursive_reduce", Kind::NestedTail, 1, SqGrid::None, false, 0, gpuRecursiveReduce, nullptr},
    {"recursive_reduce_nosync", Kind::NestedAtOnce, 1, SqGrid::None, false, 0, gpuRecursiveReduceNosync, nullptr},
    {"recursive_reduce2", Kind::NestedPerLevel, 1, SqGrid::None, false, 0, nullptr, nullptr},
#endif
};

static const Twin& find_twin(const char* name) {
  std::string names;
  for (const Twin& t : TWINS) {
    if (std::strcmp(t.name, name) == 0) return t;
    names += names.empty() ? t.name : std::string(", ") + t.name;
  }
  fail(std::string("no twin `") + name + "`; the twins are: " + names);
}

// The book's switch on the block size for reduceCompleteUnroll<iBlockSize>.
static void launch_complete_unroll(const Args& a) {
  switch (a.block.x) {
    case 1024: reduceCompleteUnroll<1024><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    case 512: reduceCompleteUnroll<512><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    case 256: reduceCompleteUnroll<256><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    case 128: reduceCompleteUnroll<128><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    case 64: reduceCompleteUnroll<64><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    case 32: reduceCompleteUnroll<32><<<a.grid, a.block>>>(a.in, a.out, a.n); break;
    default: fail("complete_unroll has no instantiation for block " + std::to_string(a.block.x));
  }
}

// The nested kernels' host launch, as the book makes it: a block's segment size for the
// per-block chains; half the block, its stride and the segment size for the per-level one.
static void launch_nested(const Twin& t, const Args& a) {
#ifdef CLASSIC_NESTED
  if (t.kind != Kind::NestedPerLevel) {
    // In parts of at most a.nested_part blocks, where the device grants too little room for the
    // whole grid's pending launches (as the Rust plan: reduce::plan::blocks_per_nested_launch).
    for (unsigned int first = 0; first < a.grid.x; first += a.nested_part) {
      const unsigned int blocks = std::min(a.nested_part, a.grid.x - first);
      const size_t skip = size_t(first) * a.block.x;
      t.reduce<<<blocks, a.block>>>(a.in + skip, a.out + first, a.block.x);
    }
  } else {
    gpuRecursiveReduce2<<<a.grid, a.block.x / 2>>>(a.in, a.out, int(a.block.x / 2), int(a.block.x));
  }
#else
  fail(std::string(t.name) + " is in the nested harness only (built with -DCLASSIC_NESTED -rdc=true)");
#endif
}

// The launches of one scan, planned once (grids and scratch), enqueued per run.
struct ScanPlan {
  std::vector<unsigned long long> strides;  // bit: one build launch per stride
  std::vector<unsigned long long> lens;     // blelloch: elements of each level
  std::vector<int*> sums;                   // blelloch: tile sums of each level
  int* tree = nullptr;                      // bit: the tree
};

static unsigned long long ceil_div(unsigned long long a, unsigned long long b) { return (a + b - 1) / b; }

static ScanPlan plan_scan(const Twin& t, unsigned long long n) {
  ScanPlan p;
  if (t.kind == Kind::Bit) {
    // Strides 1, 512, 512^2, ... while the next level still has two positions
    // (kernels::scan::index::bit_next_stride).
    p.strides.push_back(1);
    while (2 * p.strides.back() * BIT_BLOCK <= n) p.strides.push_back(p.strides.back() * BIT_BLOCK);
    CHECK(cudaMalloc(&p.tree, sizeof(int) * n));
  } else {
    // Level 0 is the input; each next level is the previous level's tile sums, until one tile.
    p.lens.push_back(n);
    while (ceil_div(p.lens.back(), BLELLOCH_TILE) > 1) p.lens.push_back(ceil_div(p.lens.back(), BLELLOCH_TILE));
    for (unsigned long long len : p.lens) {
      int* s = nullptr;
      CHECK(cudaMalloc(&s, sizeof(int) * ceil_div(len, BLELLOCH_TILE)));
      p.sums.push_back(s);
    }
  }
  return p;
}

static size_t scan_launches(const ScanPlan& p) {
  return p.strides.empty() ? 2 * p.lens.size() - 1 : p.strides.size() + 1;
}

static void enqueue_scan(const Twin& t, const ScanPlan& p, const int* in, int* out, unsigned int n) {
  if (t.kind == Kind::Bit) {
    for (unsigned long long s : p.strides) {
      unsigned int grid = (unsigned int)ceil_div(n / s, BIT_BLOCK);
      bit_build<<<grid, BIT_BLOCK>>>(s == 1 ? in : p.tree, p.tree, n, (unsigned int)s);
    }
    bit_query<<<(unsigned int)ceil_div(n, BIT_BLOCK), BIT_BLOCK>>>(p.tree, out, n);
    return;
  }
  size_t levels = p.lens.size();
  for (size_t k = 0; k < levels; ++k) {
    unsigned int grid = (unsigned int)ceil_div(p.lens[k], BLELLOCH_TILE);
    const int* src = k == 0 ? in : p.sums[k - 1];
    int* dst = k == 0 ? out : p.sums[k - 1];
    blelloch_block<<<grid, BLELLOCH_BLOCK>>>(src, dst, p.sums[k], (unsigned int)p.lens[k], k == 0 ? 0 : 1);
  }
  for (size_t k = levels - 1; k-- > 0;) {
    unsigned int grid = (unsigned int)ceil_div(p.lens[k], BLELLOCH_TILE);
    int* dst = k == 0 ? out : p.sums[k - 1];
    blelloch_add<<<grid, BLELLOCH_BLOCK>>>(dst, p.sums[k], (unsigned int)p.lens[k]);
  }
}

static long long parse_int(const char* s, const char* what, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (!end || *end != '\0' || end == s || errno != 0 || v < lo || v > hi) {
    fail(std::string(what) + " must be an integer in " + std::to_string(lo) + "..=" + std::to_string(hi) +
         ", got `" + s + "`");
  }
  return v;
}

static std::vector<int32_t> read_input(const char* path, unsigned long long n) {
  FILE* f = std::fopen(path, "rb");
  if (!f) fail(std::string("cannot open the input file ") + path + ": " + std::strerror(errno));
  std::vector<int32_t> data(n);
  size_t got = std::fread(data.data(), sizeof(int32_t), n, f);
  std::fclose(f);
  if (got != n) {
    fail(std::string("the input file ") + path + " holds " + std::to_string(got) + " int32, fewer than n = " +
         std::to_string(n));
  }
  return data;  // the file is little-endian, as is every CUDA host
}

// The CPU reference of a reduction, with wrapping 32-bit arithmetic (uint32_t wraps by definition).
static int32_t cpu_reduce(const std::vector<int32_t>& x, bool squares) {
  uint32_t sum = 0;
  for (int32_t v : x) sum += squares ? uint32_t(v) * uint32_t(v) : uint32_t(v);
  return int32_t(sum);
}

static double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}


// Timed runs every kernel gets, and the budget past which a slow one stops (reduce_scan::reduce).
static const long long MIN_RUNS = 3;
static const double RUN_BUDGET_US = 3e6;

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) fail("usage: classic KERNEL INPUT_FILE N BLOCK REPEAT [EXPECTED]");
  const Twin& t = find_twin(argv[1]);
  const unsigned long long n = parse_int(argv[3], "N", 1, UINT_MAX);
  long long block = parse_int(argv[4], "BLOCK", 1, 1024);
  const long long repeat = parse_int(argv[5], "REPEAT", 1, INT_MAX);
  const bool scan = t.kind == Kind::Bit || t.kind == Kind::Blelloch;
  const bool squares = t.kind == Kind::SumSq;
  const bool nested = t.kind == Kind::NestedTail || t.kind == Kind::NestedAtOnce || t.kind == Kind::NestedPerLevel;
  const bool in_place = t.kind == Kind::InPlace || nested;
  if (scan) block = t.kind == Kind::Bit ? BIT_BLOCK : BLELLOCH_BLOCK;  // fixed, as in Rust
  if (t.sq == SqGrid::OneThread) block = 1;                           // ignored, as in Rust
  if (!scan && t.sq != SqGrid::OneThread && (block < 32 || (block & (block - 1)) != 0)) {
    fail("block " + std::to_string(block) + " is not allowed; block must be a power of two in 32..=1024");
  }
  std::vector<int32_t> host = read_input(argv[2], n);
  int32_t expected = argc == 7 ? int32_t(parse_int(argv[6], "EXPECTED", INT_MIN, INT_MAX)) : cpu_reduce(host, squares);

  int dev = 0, sms = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));

  // Geometry, as the Rust twin's.
  unsigned long long grid = 0, outputs = 0, padded = n;
  switch (t.sq) {
    case SqGrid::OneThread: grid = 1; break;
    case SqGrid::OneBlock: grid = 1; break;
    case SqGrid::PerSm: grid = (unsigned long long)SUMSQ_BLOCKS_PER_SM * std::max(sms, 1); break;
    case SqGrid::None:
      grid = ceil_div(n, (unsigned long long)block * t.items);
      if (!scan) padded = grid * block * t.items;  // the book's sizes: whole segments
      break;
  }
  if (grid > INT_MAX) fail("n = " + std::to_string(n) + " needs " + std::to_string(grid) + " blocks");
  if (padded > UINT_MAX) fail("n = " + std::to_string(n) + " padded to whole segments exceeds 2^32-1");
  outputs = squares ? (t.per_thread ? grid * block : grid) : (scan ? n : grid);

  // Device buffers: the (zero-padded) input, a scratch copy for the in-place kernels, the
  // outputs, the clocks; all outside any timing.
  int *d_input = nullptr, *d_scratch = nullptr, *d_out = nullptr;
  long long* d_clocks = nullptr;
  CHECK(cudaMalloc(&d_input, sizeof(int) * padded));
  CHECK(cudaMemset(d_input, 0, sizeof(int) * padded));
  CHECK(cudaMemcpy(d_input, host.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
  if (in_place) CHECK(cudaMalloc(&d_scratch, sizeof(int) * padded));
  // Room for the launches the children keep pending, as the Rust plan gives
  // (reduce::plan::per_block_pending_launches): a tail-launched child per block; every launch
  // of every chain when the children start at once (log2(block) - 1 per chain).
  // Where the driver grants less than the whole grid needs, the grid runs in as few equal parts
  // as fit (reduce::plan::blocks_per_nested_launch).
  unsigned long long nested_part = grid;
  if (t.kind == Kind::NestedTail || t.kind == Kind::NestedAtOnce) {
    size_t per_chain = 0;
    for (long long b = block; b > 2; b >>= 1) ++per_chain;
    if (t.kind == Kind::NestedTail) per_chain = 1;
    const size_t need = std::max<size_t>(2048, grid * per_chain + 24);
    size_t granted = 0;
    CHECK(cudaDeviceGetLimit(&granted, cudaLimitDevRuntimePendingLaunchCount));
    if (granted < need) {
      CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, need));
      CHECK(cudaDeviceGetLimit(&granted, cudaLimitDevRuntimePendingLaunchCount));
    }
    if (granted < need) {
      if (granted < per_chain + 24) {
        fail("one block's chain needs room for " + std::to_string(per_chain + 24) +
             " pending device-side launches; the driver grants " + std::to_string(granted));
      }
      const unsigned long long most = (granted - 24) / per_chain;
      const unsigned long long parts = ceil_div(grid, most);
      nested_part = ceil_div(grid, parts);
    }
  }
  CHECK(cudaMalloc(&d_out, sizeof(int) * outputs));
  if (squares) CHECK(cudaMalloc(&d_clocks, sizeof(long long) * 2 * grid));
  ScanPlan plan;
  if (scan) plan = plan_scan(t, n);

  Args a{in_place ? d_scratch : d_input, d_out, d_clocks, (unsigned int)padded,
         dim3((unsigned int)grid), dim3((unsigned int)block), size_t(t.dyn_per_thread) * block,
         (unsigned int)nested_part};
  auto restore = [&] {
    if (d_scratch) CHECK(cudaMemcpy(d_scratch, d_input, sizeof(int) * padded, cudaMemcpyDeviceToDevice));
  };
  auto launch = [&] {
    if (scan) {
      enqueue_scan(t, plan, d_input, d_out, (unsigned int)n);
    } else if (squares) {
      t.squares<<<a.grid, a.block>>>(d_input, d_out, d_clocks, (unsigned int)n);
    } else if (nested) {
      launch_nested(t, a);
    } else if (t.reduce) {
      t.reduce<<<a.grid, a.block, a.dyn_smem>>>(a.in, a.out, a.n);
    } else {
      launch_complete_unroll(a);
    }
    CHECK(cudaGetLastError());
  };

  // The CPU inclusive scan, for every scan run.
  std::vector<int32_t> want_scan;
  if (scan) {
    want_scan.resize(n);
    uint32_t run = 0;
    for (unsigned long long i = 0; i < n; ++i) want_scan[i] = int32_t(run += uint32_t(host[i]));
    expected = want_scan[n - 1];
  }
  std::vector<int32_t> got(outputs);
  std::vector<long long> clocks(squares ? 2 * grid : 0);
  // Copies the last run's result back: the wrapping sum of the partials (the last element
  // for a scan), and whether it is right.
  auto check = [&](int32_t& result) -> bool {
    CHECK(cudaMemcpy(got.data(), d_out, sizeof(int) * outputs, cudaMemcpyDeviceToHost));
    if (scan) {
      result = got[n - 1];
      return std::equal(got.begin(), got.end(), want_scan.begin());
    }
    uint32_t sum = 0;
    for (int32_t p : got) sum += uint32_t(p);
    result = int32_t(sum);
    return result == expected;
  };

  Events ev;
  int32_t result = 0;
  restore();
  launch();
  CHECK(cudaDeviceSynchronize());
  check(result);

  std::vector<double> times;
  long long ok = 0;
  double spent = 0;
  for (long long r = 0; r < repeat; ++r) {
    if (r >= MIN_RUNS && spent > RUN_BUDGET_US) break;
    restore();
    CHECK(cudaDeviceSynchronize());
    double us = ev.time(launch);
    spent += us;
    times.push_back(us);
    ok += check(result) ? 1 : 0;
  }

  unsigned long long cycles = 0;
  if (squares) {
    CHECK(cudaMemcpy(clocks.data(), d_clocks, sizeof(long long) * 2 * grid, cudaMemcpyDeviceToHost));
    long long first = clocks[0], last = clocks[1];
    for (unsigned long long b = 0; b < grid; ++b) {
      first = std::min(first, clocks[2 * b]);
      last = std::max(last, clocks[2 * b + 1]);
    }
    cycles = last > first ? (unsigned long long)(last - first) : 0;
  }

  size_t launches = scan ? scan_launches(plan) : 1;
  std::printf("RESULT kernel=%s n=%llu grid=%llu block=%lld launches=%zu sms=%d runs=%zu median_us=%.3f "
              "min_us=%.3f max_us=%.3f times_us=",
              t.name, n, grid, block, launches, sms, times.size(), median_of(times),
              *std::min_element(times.begin(), times.end()), *std::max_element(times.begin(), times.end()));
  for (size_t i = 0; i < times.size(); ++i) std::printf(i ? ",%.3f" : "%.3f", times[i]);
  std::printf(" result=%d expected=%d ok=%lld", result, expected, ok);
  if (squares) std::printf(" cycles=%llu", cycles);
  std::printf("\n");
  return 0;
}
