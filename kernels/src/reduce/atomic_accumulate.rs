use crate::collective::block::{BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_reduce, block_sum};
use crate::collective::thread::{VEC, thread_reduce_v128, thread_sum_v4};
use crate::collective::warp::warp_sum_shfl;
use crate::device::atomic::{red_add_i32, store_relaxed_u32};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_idx_x, thread_idx_x};
use crate::types::{Element, Operator};
use crate::{kernel, static_shared, typed_kernel};

/// 128-bit loads per thread per trip of [`atomic_accumulate`]: four, as `vector_loads`.
///
/// Two were tried (2026-11-23) and are not used: in CUDA C with one block per tile
/// (`docs/measurements/2026-11-22-h100/reduce_shapes.csv`, H100, per call, 3 interleaved
/// rounds) two loads were 0.7–1.3% faster than four at 2^24..2^28 (2^28: 335.3–335.4 against
/// 337.4–337.9 µs); in this kernel on the H100 (`sum_vs_cub.csv` at 160b1c8, kept as
/// `sum_vs_cub_two_loads.csv`) 0–0.8% faster (2^28: 337.3–337.6 µs, as with four); but on the
/// H200 (`docs/measurements/2026-11-23-h200/sum_vs_cub_two_loads.csv`) 2^28 took 286.0–286.4 µs
/// against 236.3 with four and CUB's 237.6–238.4 (0.83×), and 2^26 was 0.95× CUB. A GPU with
/// 1.4× the bandwidth needs about 1.4× the bytes in flight per SM, and two 16-byte loads per
/// thread are not enough there.
pub const ATOMIC_ACCUMULATE_LOADS: usize = 4;
/// Elements one thread of [`atomic_accumulate`] reads per trip (the registry's
/// `items_per_thread`): [`ATOMIC_ACCUMULATE_LOADS`] × 4.
pub const ATOMIC_ACCUMULATE_ITEMS_PER_TRIP: usize = ATOMIC_ACCUMULATE_LOADS * VEC;

/// Static shared memory of [`atomic_accumulate`] per block: the block reduction's slots, one
/// `i32` per warp of the largest block (128 bytes).
pub const ATOMIC_ACCUMULATE_SHARED_BYTES: u32 = BLOCK_SUM_SMEM_BYTES;

kernel! {
    /// Full reduction in one launch, finished by the memory system: every block adds its
    /// partial sum straight into the result with a fire-and-forget atomic (`red.add`).
    ///
    /// # Concept
    /// **Atomics as the combining step.** A reduction's last step — combine one value per
    /// block — need not be a pass at all: L2 can do it. Each block issues one `red.global.add`
    /// (an atomic add whose old value nobody waits for) and exits; the adds to the one word
    /// are serialised in L2 while the blocks are already gone. For integers the order of the
    /// adds cannot change the result (wrapping addition is associative and commutative), so
    /// the sum is exact and the same on every run. (For floating point it would not be: the
    /// result would depend on the order the blocks finish in.)
    ///
    /// # Previous problem → fix
    /// `single_pass` finishes on the device too, but through a chain that nothing can
    /// overlap: each block writes its partial, fences, draws a ticket; the block that draws
    /// the last ticket fences again, re-reads every partial from L2, reduces them and writes
    /// the result. The GPU is idle except for that one block for a few microseconds at the
    /// end of every launch (the difference between `single_pass` and `vector_loads`). Here no
    /// block waits for any other: the kernel ends when the last block's add has been sent.
    /// The cost moves to the start of the kernel: the result word must be 0 before the first
    /// add, without a host-side memset (that would be a second operation per sum). The
    /// result lives in one of two words chosen by the launch's `epoch` (the host passes 0, 1,
    /// 2, … in stream order); block 0 clears the *other* word for the next launch, which no
    /// block of this launch touches.
    ///
    /// # Execution
    /// 1. Thread 0 of block 0 stores 0 to `g_acc[(epoch + 1) % 2]`.
    /// 2. As `vector_loads`: each thread sums its share of the input with four 128-bit loads
    ///    per trip of a grid-stride loop ([`ATOMIC_ACCUMULATE_LOADS`]; unaligned head and tail
    ///    element by element); the block reduces with shuffles.
    /// 3. Thread 0 of each block: `red.offset(g_acc[epoch % 2], block_sum)`.
    ///
    /// ```text
    ///  block 0 ─ v4 loads … shuffles ─► red.add ┐
    ///  block 1 ─ v4 loads … shuffles ─► red.add ├─► L2 adds them to g_acc[epoch % 2]
    ///  …                                        │   (no block waits; order does not matter)
    ///  block G ─ v4 loads … shuffles ─► red.add ┘
    /// ```
    ///
    /// # Launch
    /// Grid `min(ceil(n / (16*blockDim)), SMs × K, 2^29 / blockDim)` (K: the resident blocks per SM, or more for
    /// one block per 16 × blockDim tile, as `reduce_scan::sum`'s plan does above 2^22), block a power of two
    /// in 32..=1024, 128 bytes of static shared memory ([`ATOMIC_ACCUMULATE_SHARED_BYTES`]).
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` `i32`-aligned elements; `g_acc` holds two elements, and
    /// `g_acc[epoch % 2]` is 0 when the launch starts: true for a zeroed buffer at epochs 0
    /// and 1, and afterwards when the launches of one buffer get consecutive epochs in one
    /// stream (each launch clears the word the next one uses). The sum is in
    /// `g_acc[epoch % 2]` once the launch completes, until the next launch of the buffer.
    /// `gridDim.x × blockDim.x ≤ 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; no thread writes `g_idata`
    /// while the kernel runs (it is read through the non-coherent path); no other launch uses
    /// `g_acc` concurrently. Every thread reaches the block barrier and every shuffle.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-25-h100/twins_2e24.csv`, `twins_2e28.csv`, commit e032fa9):
    ///
    /// | n | time | GB/s | × previous | × CUDA C twin |
    /// |---|---|---|---|---|
    /// | 2^24 | 25.47 µs | 2634.6 | 1.07 (`single_pass`) | — |
    /// | 2^28 | 346.8 µs | 3096.0 | 1.01 (`single_pass`) | — |
    pub unsafe fn atomic_accumulate(g_idata: Global<i32>, g_acc: GlobalMut<i32>, n: u32, epoch: u32) {
        let slots = static_shared!(ATOMIC_ACCUMULATE_SLOTS: [i32; BLOCK_SUM_SLOTS]);
        if block_idx_x() == 0 && thread_idx_x() == 0 {
            let next = ((epoch + 1) % 2) as usize;
            // SAFETY: g_acc holds two elements; no block of this launch touches this one.
            unsafe { store_relaxed_u32(g_acc.offset(next).cast::<u32>(), 0) };
        }
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4::<ATOMIC_ACCUMULATE_LOADS>(g_idata, n) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_acc holds two elements, and the precondition made this one 0.
            unsafe { red_add_i32(g_acc.offset((epoch % 2) as usize), total) };
        }
    }
}

/// Static shared memory of `atomic_accumulate__{type}_{op}` per block: one `T` per warp of the
/// largest block (128 bytes for 32-bit types, 256 for 64-bit ones).
pub const fn atomic_accumulate_shared_bytes<T>() -> u32 {
    crate::collective::block::block_reduce_smem_bytes::<T>()
}

typed_kernel!(atomic_accumulate = atomic_accumulate_generic(g_idata: Global<T>, g_acc: GlobalMut<T>, n: u32, epoch: u32));

/// [`atomic_accumulate`] for any element type and operator: one launch, each block folds its
/// result into the answer with one fire-and-forget atomic. Instantiated by `typed_kernel!` as
/// `atomic_accumulate__{type}_{op}` for every type × operator but `i32` × sum (which is
/// [`atomic_accumulate`] itself).
///
/// # Concept
/// **An atomic per operator and type.** PTX's `red` reduces into memory with `add` for
/// `u32`/`s32`/`u64`/`f32`/`f64` (`i64` adds as `u64`: two's complement), and `min`/`max` for
/// signed and unsigned 32- and 64-bit integers (64-bit: sm_32+). It has no float `min`/`max`:
/// those are two integer atomics chosen by the sign bit (`device::atomic`, "Float min and
/// max"), one instruction and no compare-and-swap loop.
///
/// # Previous problem → fix
/// [`atomic_accumulate`] sums `i32`, whose identity 0 is what a zeroed word holds. Min and
/// max start from another identity, so block 0 stores `O::IDENTITY` (not 0) into the word the
/// next launch uses, and the host fills both words with it when it allocates them. A float sum
/// accumulated this way is rounded in the order the blocks reach L2: it may differ in the
/// last bits from run to run (integers, min and max never do).
///
/// # Execution
/// 1. Thread 0 of block 0 stores `O::IDENTITY` to `g_acc[(epoch + 1) % 2]`.
/// 2. As [`vector_loads_generic`](super::vector_loads_generic): each thread combines its
///    share with 128-bit loads, the block with shuffles.
/// 3. Thread 0 of each block: `O::red(g_acc[epoch % 2], block_result)`.
///
/// # Launch
/// As [`atomic_accumulate`], with 8 elements per trip for 64-bit types and
/// [`atomic_accumulate_shared_bytes`]`::<T>()` bytes of static shared memory.
///
/// # Preconditions
/// `g_idata` holds `n ≥ 1` `T`-aligned elements; `g_acc` holds two elements, and
/// `g_acc[epoch % 2]` holds `O::IDENTITY` when the launch starts (the host fills both words
/// at allocation; afterwards each launch clears the word the next one uses, when the launches
/// of one buffer get consecutive epochs in one stream). `gridDim.x × blockDim.x ≤ 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
///
/// # Safety
/// As [`atomic_accumulate`]: valid pointers, no writes to `g_idata`, no concurrent launch on
/// `g_acc`; every thread reaches the block barrier and every shuffle.
///
/// # Measured
/// NVIDIA H100 80GB HBM3, block 512, median of 20 timed runs, every run checked (`docs/measurements/2026-11-22-h100/twins_2e24.csv`, `twins_2e28.csv`, commit b17aeb5):
///
/// | n | time | GB/s | × previous | × CUDA C twin |
/// |---|---|---|---|---|
/// | 2^24 | 26.08 µs | 2573.2 | 1.04 (`single_pass`) | — |
/// | 2^28 | 347.2 µs | 3092.9 | 1.01 (`single_pass`) | — |
#[inline(always)]
pub unsafe fn atomic_accumulate_generic<T: Element, O: Operator<T>>(
    g_idata: Global<T>,
    g_acc: GlobalMut<T>,
    n: u32,
    epoch: u32,
) {
    let slots = static_shared!(ATOMIC_ACCUMULATE_TYPED_SLOTS: [T; BLOCK_SUM_SLOTS]);
    if block_idx_x() == 0 && thread_idx_x() == 0 {
        let next = ((epoch + 1) % 2) as usize;
        // SAFETY: g_acc holds two elements; no block of this launch touches this one.
        unsafe { T::store_relaxed(g_acc.offset(next), O::IDENTITY) };
    }
    // SAFETY: g_idata holds n elements that nobody writes during the kernel.
    let mine = unsafe { thread_reduce_v128::<T, O>(g_idata, n) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let total = unsafe { block_reduce::<T, O>(mine, slots) };
    if thread_idx_x() == 0 {
        // SAFETY: g_acc holds two elements, and the precondition made this one the identity.
        unsafe { O::red(g_acc.offset((epoch % 2) as usize), total) };
    }
}
