use crate::collective::block::{BLOCK_SUM_SLOTS, block_reduce, block_reduce_smem_bytes, is_last_block};
use crate::collective::thread::thread_transform_v128;
use crate::device::atomic::store_relaxed_u32;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::types::{Element, Operator, Transform};
use crate::{static_shared, transform_kernel};

/// Static shared memory of `transform_reduce__{type}_{transform}_{op}` per block: one `T` per
/// warp of the largest block, then the 16-byte-aligned "last block" flag.
pub const fn transform_reduce_shared_bytes<T>() -> u32 {
    block_reduce_smem_bytes::<T>() + 16
}

transform_kernel!(transform_reduce = transform_reduce_generic(
    g_a: Global<T>,
    g_b: Global<T>,
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    n: u32
));

/// Transform-reduce in one launch: `O` over `X(a[i], b[i])` for `i < n` with no temporary
/// array — a dot product (`X` = product, `O` = sum), a sum of squares (square, sum)
/// (`cub::DeviceReduce::TransformReduce`, `torch.dot`, the sum inside
/// `torch.linalg.vector_norm`). Instantiated by `transform_kernel!` as
/// `transform_reduce__{type}_{transform}_{op}` (`transform_reduce__f32_product_sum`).
///
/// # Concept
/// **Fuse the map into the reduction.** A dot product written as two library calls — multiply
/// into a temporary, then sum it — reads `2n` elements, writes `n` and reads `n` again: twice
/// the traffic of the answer's lower bound. Applied in registers as each element arrives, the
/// transform costs a multiply per element and no memory at all; the reduction is memory-bound,
/// so the fused kernel runs at the speed of reading its inputs once. The transform is an axis
/// of its own (`types::Transform`), beside the operator: one generic body serves every
/// transform × operator × type, as `Operator` lets one body serve sum, min and max.
///
/// # Previous problem → fix
/// [`single_pass_generic`](super::single_pass_generic) reduces one input as it is. Here each
/// thread reads one or two inputs and applies `X::apply` before `O::combine`
/// (`collective::thread::thread_transform_v128`); everything after the thread's loop is
/// `single_pass`'s, so a float dot product is summed in a fixed order and gives the same bits
/// on every run of the same grid (an atomic finish would not).
///
/// # Execution
/// 1. Each thread: the grid-stride loop of `thread_transform_v128` — for a product, two
///    128-bit loads of `a` and two of `b` per trip (the same bytes in flight as four loads of
///    one input), for a square four loads of `a`; each element transformed, then combined. Where
///    `a` and `b` sit at different offsets from a 16-byte boundary, one element at a time.
/// 2. The block: `collective::block::block_reduce` (warp shuffles, one slot per warp).
/// 3. Thread 0 writes the block's result to `g_partials[b]`; `collective::block::is_last_block`
///    (fence, ticket, fence) finds the last block.
/// 4. The last block combines the partials (`Element::load_relaxed`, strong loads), reduces
///    them, writes the answer to `g_partials[gridDim.x]` and puts the ticket back to 0.
///
/// ```text
///  thread   acc ⊕= X(a[i], b[i]) for its i   (registers; no temporary array)
///  block    block_reduce → g_partials[b] ; fence ; ticket
///  last     ⊕ g_partials[0..grid] → g_partials[grid] ; ticket = 0
/// ```
///
/// # Launch
/// Grid `min(ceil(n / (items × blockDim)), SMs × resident blocks per SM, 2^29 / blockDim)` (16
/// items per thread for 32-bit types, 8 for 64-bit ones), block a power of two in 32..=1024,
/// [`transform_reduce_shared_bytes`]`::<T>()` bytes of static shared memory. Reads its inputs.
///
/// # Preconditions
/// `g_a` holds `n ≥ 1` `T`-aligned elements, and so does `g_b` for a binary transform (a unary
/// one never reads it: pass `g_a`); `g_partials` holds `gridDim.x + 1` elements (the partials,
/// then the answer); `*g_ticket` is 0 at launch (a zeroed allocation; every completed launch
/// leaves it 0); launches sharing a ticket run one after the other. `gridDim.x × blockDim.x ≤
/// 2^29` ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
///
/// # Safety
/// The pointers are valid device memory of those lengths; no thread writes the inputs while
/// the kernel runs. Every thread reaches every barrier and shuffle: the last block's condition
/// is uniform over the block (`is_last_block` hands it out after a barrier).
///
/// # Measured
/// NVIDIA H100 80GB HBM3, the library's plan (block 1024 on the resident grid above 2^22),
/// 2 interleaved rounds of 20 runs, every run checked, CUB's `TransformReduce` on the same values
/// (`docs/measurements/2026-11-26-h100/library-ops-939a239/library_ops.csv`, commit 939a239): f32 dot 2^28 684.4–685.1 µs (93.5–93.6 % of bytes /
/// peak bandwidth, 1.020–1.023× CUB); f32 sum of squares 2^28 344.5–344.8 µs (1.051–1.053× CUB).
#[inline(always)]
pub unsafe fn transform_reduce_generic<T: Element, X: Transform<T>, O: Operator<T>>(
    g_a: Global<T>,
    g_b: Global<T>,
    g_partials: GlobalMut<T>,
    g_ticket: GlobalMut<u32>,
    n: u32,
) {
    let slots = static_shared!(TRANSFORM_REDUCE_SLOTS: [T; BLOCK_SUM_SLOTS]);
    let last_flag = static_shared!(TRANSFORM_REDUCE_LAST: [u32; 1]);
    let tid = thread_idx_x();
    // SAFETY: g_a (and, for a binary transform, g_b) hold n elements nobody writes.
    let mine = unsafe { thread_transform_v128::<T, X, O>(g_a, g_b, n) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let total = unsafe { block_reduce::<T, O>(mine, slots) };
    if tid == 0 {
        // SAFETY: g_partials holds gridDim.x + 1 elements; blockIdx.x < gridDim.x.
        unsafe { g_partials.write(block_idx_x() as usize, total) };
    }
    // SAFETY: every thread calls it, after thread 0 published; g_ticket is one u32, 0 at launch.
    if unsafe { is_last_block(g_ticket, last_flag) } {
        let (grid, block) = (grid_dim_x() as usize, block_dim_x() as usize);
        let mut acc = O::IDENTITY;
        let mut i = tid as usize;
        while i < grid {
            // SAFETY: i < gridDim.x; every block's store to g_partials[i] happens-before this
            // load (step 3 of the docs).
            acc = O::combine(acc, unsafe { T::load_relaxed(g_partials.offset(i).as_const()) });
            i += block;
        }
        // SAFETY: the whole block is here (the condition is uniform); the first reduction's
        // reads of the slots came before is_last_block's barrier.
        let all = unsafe { block_reduce::<T, O>(acc, slots) };
        if tid == 0 {
            // SAFETY: slot gridDim.x is the answer's; every block has drawn its ticket.
            unsafe {
                g_partials.write(grid, all);
                store_relaxed_u32(g_ticket, 0);
            }
        }
    }
}
