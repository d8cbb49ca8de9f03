use crate::collective::block::{
    BLOCK_SUM_SLOTS, BLOCK_SUM_SMEM_BYTES, block_arg_reduce, block_reduce_smem_bytes, is_last_block,
};
use crate::collective::thread::thread_arg_v128;
use crate::device::atomic::{load_relaxed_u32, store_relaxed_u32};
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::types::{Arg, Element, Extreme};
use crate::{extreme_kernel, static_shared};

/// Static shared memory of `arg_reduce__{type}_{op}` per block: one value per warp of the
/// largest block, one `u32` index per warp, then the 16-byte-aligned "last block" flag.
pub const fn arg_reduce_shared_bytes<T>() -> u32 {
    block_reduce_smem_bytes::<T>() + BLOCK_SUM_SMEM_BYTES + 16
}

extreme_kernel!(arg_reduce = arg_reduce_generic(
    g_idata: Global<T>,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>,
    g_ticket: GlobalMut<u32>,
    n: u32
));

/// Argmin or argmax in one launch: the extreme of `g_idata[..n]` **and its index**, the
/// first one where the extreme repeats; NaN is the extreme (`cub::DeviceReduce::ArgMin` /
/// `ArgMax`, `torch.argmin` / `torch.argmax`). Instantiated by `extreme_kernel!` as
/// `arg_reduce__{type}_{min|max}` for the six element types.
///
/// # Concept
/// **A reduction whose operator carries a position.** An argmax is a max over pairs
/// (value, index) with a total order: the larger value wins, and equal values go to the lower
/// index. That combine is associative and commutative (`types::Arg::combine`), so every tree a
/// reduction builds — a thread's loop, a warp's shuffles, the block's slots, the last block's
/// pass over the partials — gives the answer a left-to-right scan gives: the *first* index of
/// the extreme. What changes from a plain max is the payload: each shuffle moves the value and
/// the index, each shared slot holds both.
///
/// # Previous problem → fix
/// [`single_pass_generic`](super::single_pass_generic) finds the maximum but not where it is;
/// a second pass searching for it would read the input twice (and, for a value that repeats,
/// would still need the lowest index). Here the index rides along with the value through
/// every level, and the one launch reads each element once, as `single_pass` does. NaN needs a
/// rule of its own: IEEE's `<` and `>` are false for a NaN, so a plain compare would skip it.
/// `types::Extreme::beats` makes a NaN beat every number (PyTorch's rule) and two NaNs tie, so
/// the first NaN wins; −0.0 and +0.0 compare equal and tie (CUB's and PyTorch's `<`).
///
/// # Execution
/// 1. Each thread: `collective::thread::thread_arg_v128` — the grid-stride loop of four
///    128-bit loads per trip (`ld.global.nc.v4`), the head element first and the tail last, so a
///    thread meets its elements in index order and keeps the first of equal values
///    (`Arg::update`: one compare and two selects per element).
/// 2. The block: `collective::block::block_arg_reduce` — five `shfl.down` steps per warp, each
///    moving the value (one or two words) and the index, then one slot pair per warp and warp 0.
/// 3. Thread 0 writes the block's winner to `g_values[b]` and `g_indices[b]`;
///    `collective::block::is_last_block` (fence, ticket, fence) tells every block whether it is
///    the last to finish.
/// 4. The last block: thread `t` combines partials `t, t + blockDim, …` (strong loads:
///    `Element::load_relaxed`, `ld.relaxed.gpu`), the block reduces them again, and thread 0
///    writes the answer to `g_values[gridDim.x]` and `g_indices[gridDim.x]` and puts the ticket
///    back to 0.
///
/// ```text
///  block 0   (x[i0], i0) → g_values[0], g_indices[0] ; fence ; ticket → 1
///  block 1   (x[i1], i1) → g_values[1], g_indices[1] ; fence ; ticket → 0
///  block 2   (x[i2], i2) → g_values[2], g_indices[2] ; fence ; ticket → 2 = gridDim-1: last
///              combine partials 0..3 → g_values[3], g_indices[3] ; ticket = 0
/// ```
///
/// # Launch
/// Grid `min(ceil(n / (items × blockDim)), SMs × resident blocks per SM, 2^29 / blockDim)` (16
/// items per thread for 32-bit types, 8 for 64-bit ones), block a power of two in 32..=1024,
/// [`arg_reduce_shared_bytes`]`::<T>()` bytes of static shared memory. Reads its input.
///
/// # Preconditions
/// `g_idata` holds `n ≥ 1` `T`-aligned elements; `g_values` and `g_indices` hold
/// `gridDim.x + 1` elements (the partials, then the answer); `*g_ticket` is 0 at launch (a
/// zeroed allocation; every completed launch leaves it 0); launches sharing a ticket run one
/// after the other. `gridDim.x × blockDim.x ≤ 2^29`
/// ([`MAX_GRID_THREADS`](crate::collective::thread::MAX_GRID_THREADS)).
///
/// # Safety
/// The pointers are valid device memory of those lengths; no thread writes `g_idata` while the
/// kernel runs. Every thread reaches every barrier and shuffle: the last block's condition is
/// uniform over the block (`is_last_block` hands it out after a barrier).
///
/// # Measured
/// NVIDIA H100 80GB HBM3, the library's plan (block 1024 on the resident grid above 2^22),
/// 2 interleaved rounds of 20 runs, every run checked, CUB `DeviceReduce::ArgMax` on the same
/// values (`docs/measurements/2026-11-26-h100/library-ops-939a239/library_ops.csv`, commit 939a239): f32 argmax 2^24 27.7–27.8 µs
/// (1.084–1.095× CUB), 2^28 345.0–346.0 µs (92.6–92.8 % of bytes / peak bandwidth, 1.034–1.037×
/// CUB). ncu at 2^28: 92.4 % of DRAM peak.
#[inline(always)]
pub unsafe fn arg_reduce_generic<T: Element, O: Extreme<T>>(
    g_idata: Global<T>,
    g_values: GlobalMut<T>,
    g_indices: GlobalMut<u32>,
    g_ticket: GlobalMut<u32>,
    n: u32,
) {
    let values = static_shared!(ARG_REDUCE_VALUES: [T; BLOCK_SUM_SLOTS]);
    let indices = static_shared!(ARG_REDUCE_INDICES: [u32; BLOCK_SUM_SLOTS]);
    let last_flag = static_shared!(ARG_REDUCE_LAST: [u32; 1]);
    let tid = thread_idx_x();
    // SAFETY: g_idata holds n elements that nobody writes during the kernel.
    let mine = unsafe { thread_arg_v128::<T, O>(g_idata, n) };
    // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
    let best = unsafe { block_arg_reduce::<T, O>(mine, values, indices) };
    if tid == 0 {
        let b = block_idx_x() as usize;
        // SAFETY: g_values and g_indices hold gridDim.x + 1 elements; b < gridDim.x.
        unsafe {
            g_values.write(b, best.value);
            g_indices.write(b, best.index);
        }
    }
    // SAFETY: every thread calls it, after thread 0 published; g_ticket is one u32, 0 at launch.
    if unsafe { is_last_block(g_ticket, last_flag) } {
        let (grid, block) = (grid_dim_x() as usize, block_dim_x() as usize);
        let mut acc = Arg::identity::<O>();
        let mut i = tid as usize;
        while i < grid {
            // SAFETY: i < gridDim.x; every block's stores to slot i happen-before these loads
            // (step 3 of the docs).
            let (value, index) = unsafe {
                (T::load_relaxed(g_values.offset(i).as_const()), load_relaxed_u32(g_indices.offset(i).as_const()))
            };
            acc = acc.combine::<O>(Arg { value, index });
            i += block;
        }
        // SAFETY: the whole block is here (the condition is uniform); the first reduction's
        // reads of the slots came before is_last_block's barrier.
        let all = unsafe { block_arg_reduce::<T, O>(acc, values, indices) };
        if tid == 0 {
            // SAFETY: slot gridDim.x is the answer's; every block has drawn its ticket.
            unsafe {
                g_values.write(grid, all.value);
                g_indices.write(grid, all.index);
                store_relaxed_u32(g_ticket, 0);
            }
        }
    }
}
