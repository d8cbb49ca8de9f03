use super::warp_shuffle::{MAX_WARPS, block_sum, warp_sum_shfl};
use crate::device::mem::load_v4_nc;
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::kernel;
use crate::static_shared;

/// 32-bit words per 128-bit load.
pub const VEC: usize = 4;
/// Independent 128-bit loads a thread issues per trip of the loop.
pub const LOADS_PER_TRIP: usize = 4;
/// Elements a thread consumes per trip: the registry's `items_per_thread` for the kernels
/// built on this loop (`vector_loads`, `single_pass`).
pub const ITEMS_PER_TRIP: usize = VEC * LOADS_PER_TRIP;

/// How `n` consecutive `i32` starting at byte address `addr` split for 128-bit loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V4Split {
    /// Leading elements before the first 16-byte boundary (0..=3, at most `n`), read one by one.
    pub head: usize,
    /// Whole 16-byte vectors after the head, read with 128-bit loads.
    pub vectors: usize,
    /// Elements after the last whole vector (0..=3), read one by one.
    pub tail: usize,
}

/// The head / vectors / tail split of `n` `i32` at byte address `addr` (a multiple of 4, as
/// every `i32` address is): `head + VEC * vectors + tail == n`, and element `head` sits on a
/// 16-byte boundary whenever `vectors > 0`.
///
/// ```text
///  addr % 16 = 4:   [h h h][v v v v][v v v v] … [v v v v][t t]
///                    head   vectors (16-byte aligned)     tail
/// ```
#[inline(always)]
pub const fn split_for_v4(addr: usize, n: usize) -> V4Split {
    // Elements from addr up to the next multiple of 16 bytes (0 when already aligned).
    let to_boundary = (VEC - (addr / 4) % VEC) % VEC;
    let head = if to_boundary < n { to_boundary } else { n };
    let rest = n - head;
    V4Split { head, vectors: rest / VEC, tail: rest % VEC }
}

/// The sum of this thread's share of `g_idata[..n]`, read with 128-bit loads by a
/// grid-stride loop; every element of the array is added by exactly one thread of the grid.
/// Shared by `vector_loads` and `single_pass`.
///
/// With `T = gridDim × blockDim` threads and grid index `g`, one **trip** of the grid covers
/// a window of `4T` vectors (16 bytes each): thread `g` loads vectors `g`, `g + T`, `g + 2T`,
/// `g + 3T` of the window — four independent 128-bit loads, all issued before the first
/// add, each a warp-wide 512-byte contiguous access.
///
/// 1. **Whole windows**, no bounds checks: every thread makes the same number of trips.
/// 2. **The last, partial window**: the same four loads, each checked against the end, so
///    every thread gets at most one vector more than any other — the work stays balanced
///    across the grid whatever `n` is.
/// 3. **Head and tail**: grid threads `0..head` and `0..tail` add the up to three unaligned
///    elements before the first vector and after the last one ([`split_for_v4`]).
///
/// # Safety
/// `g_idata` is valid global memory for reading `n` elements (any `i32` alignment) that no
/// thread writes during the kernel.
#[inline(always)]
pub(crate) unsafe fn thread_sum_v4(g_idata: *const i32, n: usize) -> i32 {
    let V4Split { head, vectors, tail } = split_for_v4(g_idata as usize, n);
    let threads = grid_dim_x() as usize * block_dim_x() as usize;
    let gid = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
    // SAFETY: head <= n; `body` is 16-byte aligned and holds `VEC * vectors + tail` elements.
    let body = unsafe { g_idata.add(head) };
    let mut sum = 0i32;

    let window = LOADS_PER_TRIP * threads;
    let whole = vectors / window;
    // Index (in vectors) of this thread's first load in the current window.
    let mut at = gid;
    for _ in 0..whole {
        let mut v = [[0i32; VEC]; LOADS_PER_TRIP];
        for j in 0..LOADS_PER_TRIP {
            // SAFETY: at + j*threads < (trip + 1) * window <= vectors; body is 16-byte
            // aligned, so every vector is.
            v[j] = unsafe { load_v4_nc(body.add(VEC * (at + j * threads))) };
        }
        for j in 0..LOADS_PER_TRIP {
            sum = sum.wrapping_add(v[j][0]).wrapping_add(v[j][1]).wrapping_add(v[j][2]).wrapping_add(v[j][3]);
        }
        at += window;
    }

    let mut v = [[0i32; VEC]; LOADS_PER_TRIP];
    for j in 0..LOADS_PER_TRIP {
        let i = at + j * threads;
        if i < vectors {
            // SAFETY: i < vectors.
            v[j] = unsafe { load_v4_nc(body.add(VEC * i)) };
        }
    }
    for j in 0..LOADS_PER_TRIP {
        sum = sum.wrapping_add(v[j][0]).wrapping_add(v[j][1]).wrapping_add(v[j][2]).wrapping_add(v[j][3]);
    }

    if gid < head {
        // SAFETY: gid < head <= n.
        sum = sum.wrapping_add(unsafe { *g_idata.add(gid) });
    }
    if gid < tail {
        // SAFETY: head + VEC*vectors + gid < n.
        sum = sum.wrapping_add(unsafe { *body.add(VEC * vectors + gid) });
    }
    sum
}

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
    /// of aligned vectors, and a **tail** of up to three elements ([`split_for_v4`]).
    ///
    /// # Previous problem → fix
    /// `grid_stride` loads one 4-byte word per thread per trip, and the next trip's load
    /// is issued only after the loop comes round: each resident thread keeps 4 bytes in
    /// flight, far too few to cover DRAM latency at Hopper's bandwidth. Here each trip issues
    /// four 16-byte loads back to back: 16× the bytes in flight per thread, and a quarter of
    /// the load instructions per byte.
    ///
    /// # Execution
    /// 1. Split `g_idata[..n]` into head, vectors, tail by its address.
    /// 2. With `T = gridDim × blockDim` threads, each trip of the grid reads a window of
    ///    `4T` vectors: grid thread `g` loads vectors `g`, `g + T`, `g + 2T`, `g + 3T` of the
    ///    window (all four issued, then added). Whole windows run unchecked; the last,
    ///    partial one checks each of the four loads, so no thread does more than one vector
    ///    more than another. Grid threads `0..head` and `0..tail` add the head and tail.
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
    /// Grid `min(ceil(n / (16*blockDim)), SMs × resident blocks per SM)` (the occupancy
    /// calculator's residency), block a power of two in 32..=1024, 128 bytes of static shared
    /// memory. Reads its input; the host adds the partials.
    ///
    /// # Preconditions
    /// `g_idata` holds `n ≥ 1` elements and `g_odata` `gridDim.x`. `g_idata` need only be
    /// `i32`-aligned.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths, and no thread writes `g_idata`
    /// while the kernel runs (it is read through the non-coherent path). Every thread reaches
    /// the block barrier and every shuffle.
    pub unsafe fn vector_loads(g_idata: *const i32, g_odata: *mut i32, n: u32) {
        let slots = static_shared!(VECTOR_LOADS_SLOTS: [i32; MAX_WARPS]);
        // SAFETY: g_idata holds n elements that nobody writes during the kernel.
        let sum = unsafe { thread_sum_v4(g_idata, n as usize) };
        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_odata holds gridDim.x elements.
            unsafe { *g_odata.add(block_idx_x() as usize) = total };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_element_and_aligns_the_body() {
        for base in (0..64usize).step_by(4) {
            for n in 0..70usize {
                let s = split_for_v4(base, n);
                assert_eq!(s.head + VEC * s.vectors + s.tail, n, "base={base} n={n}");
                assert!(s.head < VEC && s.tail < VEC, "base={base} n={n}: {s:?}");
                if s.vectors > 0 {
                    assert_eq!((base + 4 * s.head) % 16, 0, "base={base} n={n}: body misaligned");
                }
            }
        }
    }

    #[test]
    fn split_examples() {
        assert_eq!(split_for_v4(0x100, 10), V4Split { head: 0, vectors: 2, tail: 2 });
        assert_eq!(split_for_v4(0x104, 10), V4Split { head: 3, vectors: 1, tail: 3 });
        assert_eq!(split_for_v4(0x10c, 10), V4Split { head: 1, vectors: 2, tail: 1 });
        assert_eq!(split_for_v4(0x104, 2), V4Split { head: 2, vectors: 0, tail: 0 });
        assert_eq!(split_for_v4(0x108, 1), V4Split { head: 1, vectors: 0, tail: 0 });
    }
}
