use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce, block_sum};
use crate::collective::thread::{LOADS_PER_TRIP, thread_reduce_v128, thread_sum_v4};
use crate::collective::warp::warp_sum_shfl;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_idx_x, thread_idx_x};
use crate::static_shared;
use crate::types::{Element, Operator};
use crate::{kernel, typed_kernel};

/// Static shared memory of [`vector_loads`] per block: the block reduction's slots, one `i32`
/// per warp of the largest block (128 bytes).
pub const VECTOR_LOADS_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES;

kernel! {
    /// The bandwidth kernel: a grid-stride loop of **128-bit loads**, four independent ones
    /// per thread per trip, over a grid of resident blocks; any alignment of the input.
    ///
    /// # Concept
    /// **Bandwidth = bytes in flight ÷ latency** (Little's law). A DRAM load takes hundreds
    /// of nanoseconds; to stream at full bandwidth the GPU must have enough loads
    /// outstanding to cover that latency. Three things raise the bytes in flight per thread
    /// without more threads:
    /// * **vector loads** — one `ld.global.v4` moves 16 bytes per thread, 512 bytes per
    ///   warp instruction (CUDA C: reading through `int4*`);
    /// * **independent loads** — a thread issues several loads before it uses the first
    ///   result, so they overlap instead of queueing behind each other;
    /// * **the read-only path** — `ld.global.nc` (`__ldg`) for data no thread writes.
    ///
    /// A 128-bit load must be 16-byte aligned. An `i32` array is only 4-byte aligned in
    /// general (a sub-slice starting at element 1 is 4 bytes past a boundary), so the input
    /// splits into an unaligned **head** (up to three elements, loaded one by one), a body
    /// of aligned vectors, and a **tail** of up to three elements
    /// ([`split_for_v4`](crate::collective::thread::split_for_v4)).
    ///
    /// # Previous problem → fix
    /// `grid_stride` loads one 4-byte word per thread per trip, and the next trip's load
    /// is issued only after the loop comes round: each resident thread keeps 4 bytes in
    /// flight, far too few to cover DRAM latency at Hopper's bandwidth. Here each trip issues
    /// four 16-byte loads back to back: 16× the bytes in flight per thread, and a quarter of
    /// the load instructions per byte.
    ///
    /// # Execution
    /// Steps 1 and 2 are `collective::thread::thread_sum_v4`, step 3
    /// `collective::block::block_sum`.
    /// 1. Split `g_idata[..n]` into head, vectors, tail by its address.
    /// 2. With `T = gridDim × blockDim` threads, each trip of the grid reads a window of
    ///    `4T` vectors: grid thread `g` loads vectors `g`, `g + T`, `g + 2T`, `g + 3T` of the
    ///    window (all four issued, then added), while its first vector exists. Each load is
    ///    checked against the end (a compare and a predicated load, 32-bit indices), so the
    ///    last, partial window needs no code of its own and no thread does more than one
    ///    vector more than another. Grid threads `0..head` and `0..tail` add the head and tail.
    /// 3. Block reduction as in `warp_shuffle`; thread 0 writes `g_odata[blockIdx]`.
    ///
    /// ```text
    ///  g_idata  h h h │ window 0: 4T vectors                       │ window 1 │ … │ last (partial) │ t t
    ///  window         │ v[0..T)     │ v[T..2T)  │ v[2T..3T) │ v[3T..4T) │        (v = 16 bytes)
    ///  thread g        v[g]          v[T+g]      v[2T+g]     v[3T+g]     four ld.global.nc.v4 in flight
    ///  then            16 adds per trip → block reduction (shuffles) → g_odata[blockIdx]
    /// ```
    ///
    /// # Launch
    /// Grid `min(ceil(n / (16*blockDim)), SMs × resident blocks per SM, 2^29 / blockDim)` (the occupancy
    /// calculator's residency), block a power of two in 32..=1024, 128 bytes of static shared
    /// memory ([`VECTOR_LOADS_SHARED_BYTES`]). Reads its input; the host adds the partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`. `g_idata` need only be
    /// `i32`-aligned. `gridDim.x × blockDim.x ≤ 2^29`
    /// ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths, and no thread writes `g_idata`
    /// while the kernel runs (it is read through the non-coherent path). Every thread reaches
    /// the block barrier and every shuffle.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 25.22 µs | 2661.4 | 1.32 (`grid_stride`) | — |
    /// | 2^28 | 347.1 µs | 3093.9 | 1.34 (`grid_stride`) | — |
    pub unsafe fn vector_loads(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {
        let slots = static_shared!(VECTOR_LOADS_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<LOADS_PER_TRIP>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { g_odata.write(block_idx_x() as usize, total)};
        }
    }
}

/// Static shared memory of `vector_loads__{type}_{op}` per block: one `T` per warp of the
/// largest block (128 bytes for 32-bit types, 256 for 64-bit ones).
pub const fn vector_loads_shared_bytes<T>() -> u32 {
    crate::collective::block::block_reduce_smem_bytes::<T>()
}

typed_kernel!(vector_loads = vector_loads_generic(g_idata: Global<T>, g_odata: GlobalMut<T>, n: u32));

/// [`vector_loads`] for any element type and operator: a grid-stride loop of four
/// independent 128-bit loads per thread per trip, then the block combine. Instantiated by
/// `typed_kernel!` as `vector_loads__{type}_{op}` for every type × operator but `i32` × sum
/// (which is [`vector_loads`] itself).
///
/// # Concept
/// **A 128-bit load is 16 bytes, whatever the type.** Bandwidth comes from bytes in flight,
/// so a 64-bit element type keeps the `ld.global.nc.v4.b32` of the 32-bit kernel and reads two
/// elements per load instead of four: the same bytes per instruction, half the elements.
///
/// # Previous problem → fix
/// [`vector_loads`] sums `i32` only, and its head/tail split counts 4-byte elements. Here the
/// split is in bytes (`collective::thread::split_for_128`: a 64-bit array has at most one
/// unaligned element before the first 16-byte boundary and one after the last), and the loaded
/// words are reassembled into `T::PER_128` elements before the combine.
///
/// # Execution
/// 1. Each thread combines its share of the input: whole windows of four 128-bit loads
///    (unchecked while the thread's whole trip exists), then the rest of the last trip one
///    vector at a time, then the unaligned head and tail element by element
///    (`collective::thread::thread_reduce_v128`).
/// 2. The block combines with shuffles and one slot per warp
///    (`collective::block::block_reduce`); thread 0 writes `g_odata[b]`.
///
/// # Launch
/// Grid `min(ceil(n / (blockDim × items_per_trip::<T>())), SMs × resident blocks per SM,
/// 2^29 / blockDim)`
/// (`collective::thread::items_per_trip`: 16 for 32-bit, 8 for 64-bit types), block a power
/// of two in 32..=1024, [`vector_loads_shared_bytes`]`::<T>()` bytes of static shared memory.
/// The host combines the partials.
///
/// # Preconditions
/// `g_idata` holds `n ≥ 1` `T`-aligned elements, `g_odata` `gridDim.x`. `gridDim.x × blockDim.x ≤ 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
///
/// # Safety
/// The pointers are valid device memory of those lengths; no thread writes `g_idata` while
/// the kernel runs (it is read through the non-coherent path). Every thread reaches the block
/// barrier and every shuffle.
///
/// # Measured
/// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-22-h100/twins_2e24.csv`, `twins_2e28.csv`, commit b17aeb5):
///
/// | n | time | GB/s | × previous | × CUDA C twin |
/// |---|---|---|---|---|
/// | 2^24 | 25.26 µs | 2656.3 | 1.32 (`grid_stride`) | — |
/// | 2^28 | 347.4 µs | 3090.7 | 1.34 (`grid_stride`) | — |
#[inline(always)]
pub unsafe fn vector_loads_generic<T: Element, O: Operator<T>>(g_idata: Global<T>, g_odata: GlobalMut<T>, n: u32) {
    let slots = static_shared!(VECTOR_LOADS_TYPED_SLOTS: [T; BLOCK_SUM_SLOTS]);
    // SAFETY: g_idata holds n elements that nobody writes during the kernel.
    let mine = unsafe { thread_reduce_v128::<T, O>(g_idata, n) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let total = unsafe { block_reduce::<T, O>(mine, slots) };
    if thread_idx_x() == 0 {
        // SAFETY: g_odata holds gridDim.x elements.
        unsafe { g_odata.write(block_idx_x() as usize, total) };
    }
}
