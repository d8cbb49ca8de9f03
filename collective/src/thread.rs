//! Thread-level sums: what one thread adds of its share of the input before any other thread
//! is involved (CUB's `ThreadReduce` and its tile loads). No barriers, no shuffles: any
//! thread may call these on its own.
//!
//! * [`thread_sum_items`] — `ITEMS` strided elements into a register (`warp_shuffle`,
//!   `redux`).
//! * [`thread_sum_v4`] — a grid-stride loop of 128-bit loads over any alignment
//!   (`vector_loads`, `single_pass`, `atomic_accumulate`).
//! * [`thread_reduce_items`], [`thread_reduce_v128`] — the same two loads for any element
//!   type and operator (the typed `warp_shuffle__*`, `vector_loads__*`,
//!   `atomic_accumulate__*` kernels), with [`split_for_128`] for any element size.
//! * [`thread_arg_v128`] — the same loads keeping the extreme's index (`arg_reduce`).
//! * [`thread_fold_v128`] — the same loads by any group of threads (a warp, a block, the grid)
//!   over any range, for any [`Fold`] (a plain value, or a value and its index): the segmented
//!   reductions.
//! * [`thread_transform_v128`] — the same loads of one or two inputs, each element (or pair)
//!   transformed before it is combined (`transform_reduce`: dot products, sums of squares).

use crate::device::global::Global;
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
use crate::fold::Fold;
use crate::types::{Arg, Element, Extreme, Operator, Transform};

/// Sum of the `len` elements at `segment` that thread `tid` of a `block`-thread block owns:
/// `segment[tid + j*block]` for `j < ITEMS`. A full segment takes the unrolled path (`ITEMS`
/// independent loads issued back to back, then the adds); the last, short segment checks
/// every index.
///
/// # Safety
/// `segment` is valid for reading `len` elements, `len <= ITEMS * block`, `tid < block`.
#[inline(always)]
pub unsafe fn thread_sum_items<const ITEMS: usize>(segment: Global<i32>, len: usize, tid: usize, block: usize) -> i32 {
    let mut sum = 0i32;
    if len == ITEMS * block {
        let mut x = [0i32; ITEMS];
        for (j, slot) in x.iter_mut().enumerate() {
            // SAFETY: tid + j*block < ITEMS*block = len.
            *slot = unsafe { segment.read(tid + j * block) };
        }
        for v in x {
            sum = sum.wrapping_add(v);
        }
    } else {
        let mut i = tid;
        while i < len {
            // SAFETY: i < len.
            sum = sum.wrapping_add(unsafe { segment.read(i) });
            i += block;
        }
    }
    sum
}

/// 32-bit words per 128-bit load.
pub const VEC: usize = 4;
/// Independent 128-bit loads a thread issues per trip of [`thread_sum_v4`]'s loop.
pub const LOADS_PER_TRIP: usize = 4;
/// Elements a thread consumes per trip: the registry's `items_per_thread` for the kernels
/// built on [`thread_sum_v4`] (`vector_loads`, `single_pass`, `atomic_accumulate`).
pub const ITEMS_PER_TRIP: usize = VEC * LOADS_PER_TRIP;

/// How `n` consecutive `i32` starting at byte address `addr` split for 128-bit loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V4Split {
    /// Leading elements before the first 16-byte boundary (0..=3, at most `n`), read one by
    /// one.
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

/// Most threads a grid may have for [`thread_sum_v4`] and [`thread_reduce_v128`]: their
/// indices are 32-bit, and with `gridDim.x × blockDim.x ≤ 2^29` no index of a trip (below
/// `vectors + 4 × threads`, `vectors < 2^31`) can overflow. A grid-stride grid never needs
/// more: a GPU holds a few hundred thousand threads at once. (One thread per trip of a `u32`
/// length is 2^28 threads for 32-bit elements but 2^29 + a block for 64-bit ones, so the host
/// caps resident grids at this bound: `reduce_scan::reduce::plan::MAX_GRID_THREADS`.)
pub const MAX_GRID_THREADS: u32 = 1 << 29;

/// The sum of this thread's share of `g_idata[..n]`, read with 128-bit loads by a
/// grid-stride loop; every element of the array is added by exactly one thread of the grid.
/// Taught by `vector_loads`; also the loads of `single_pass` and `atomic_accumulate`.
///
/// With `T = gridDim × blockDim` threads and grid index `g`, one **trip** of the grid covers
/// a window of `LOADS × T` vectors (16 bytes each): thread `g` loads vectors `g`, `g + T`, …,
/// `g + (LOADS − 1)T` of the window — `LOADS` independent 128-bit loads ([`LOADS_PER_TRIP`]
/// = 4 for `vector_loads` and `single_pass`), all issued before the first add, each a
/// warp-wide 512-byte contiguous access.
///
/// 1. **Trips** while this thread's first vector exists; each of the `LOADS` loads is checked
///    against the end (a compare and a predicated load), so the last, partial window needs no
///    code of its own, and every thread gets at most one vector more than any other.
/// 2. **Head and tail**: grid threads `0..head` and `0..tail` add the up to three unaligned
///    elements before the first vector and after the last one ([`split_for_v4`]).
///
/// **Why so plain.** The first version counted whole windows with a 64-bit division, ran
/// them unchecked, then ran a checked last window, all in 64-bit indices: 121 instructions
/// before the first load, and 481,024 warp instructions at 2^20 (ncu, H100, `atomic_accumulate`
/// at block 256). This loop (32-bit indices, a compare
/// per load) issues its first load 65 instructions in and executes 261,888 (2^20) and 65.9 M
/// (2^28, against 122.0 M); per call at 2^20 it took 4.45–4.64 µs against 4.83–4.86, and the
/// same time at 2^24..2^28 (`docs/measurements/2026-11-23-h100/prologue_ab.csv`,
/// `limits/prologue_ncu_*.csv`).
///
/// # Safety
/// `g_idata` is valid global memory for reading `n` elements (any `i32` alignment) that no
/// thread writes during the kernel; `gridDim.x × blockDim.x ≤` [`MAX_GRID_THREADS`].
#[inline(always)]
pub unsafe fn thread_sum_v4<const LOADS: usize>(g_idata: Global<i32>, n: u32) -> i32 {
    // The index bound of MAX_GRID_THREADS holds for up to four loads per trip.
    const { assert!(LOADS >= 1 && LOADS <= 4, "1..=4 loads per trip (the 32-bit index bound)") };
    let V4Split { head, vectors, tail } = split_for_v4(g_idata.addr(), n as usize);
    let (head, vectors, tail) = (head as u32, vectors as u32, tail as u32);
    let block = block_dim_x();
    let threads = grid_dim_x() * block;
    let gid = block_idx_x() * block + thread_idx_x();
    // SAFETY: head <= n; `body` is 16-byte aligned and holds `VEC * vectors + tail` elements.
    let body = unsafe { g_idata.offset(head as usize) };
    let mut sum = 0i32;
    let window = LOADS as u32 * threads;
    let mut at = gid;
    while at < vectors {
        let mut v = [[0i32; VEC]; LOADS];
        for j in 0..LOADS {
            let i = at + j as u32 * threads;
            if i < vectors {
                // SAFETY: i < vectors.
                v[j] = unsafe { body.load_v4_nc(VEC * i as usize) };
            }
        }
        for w in &v {
            sum = sum.wrapping_add(w[0]).wrapping_add(w[1]).wrapping_add(w[2]).wrapping_add(w[3]);
        }
        at += window;
    }
    if gid < head {
        // SAFETY: gid < head <= n.
        sum = sum.wrapping_add(unsafe { g_idata.read(gid as usize) });
    }
    if gid < tail {
        // SAFETY: head + VEC*vectors + gid < n.
        sum = sum.wrapping_add(unsafe { body.read((VEC as u32 * vectors + gid) as usize) });
    }
    sum
}

/// [`thread_sum_items`] for any element type and operator: `O::combine` of the elements
/// `segment[tid + j*block]`, `j < ITEMS`, that exist (`O::IDENTITY` if none does). A full
/// segment issues its `ITEMS` loads back to back before the first combine.
///
/// # Safety
/// `segment` is valid for reading `len` elements, `len <= ITEMS * block`, `tid < block`.
#[inline(always)]
pub unsafe fn thread_reduce_items<T: Element, O: Operator<T>, const ITEMS: usize>(
    segment: Global<T>,
    len: usize,
    tid: usize,
    block: usize,
) -> T {
    let mut acc = O::IDENTITY;
    if len == ITEMS * block {
        let mut x = [O::IDENTITY; ITEMS];
        for (j, slot) in x.iter_mut().enumerate() {
            // SAFETY: tid + j*block < ITEMS*block = len.
            *slot = unsafe { segment.read(tid + j * block) };
        }
        for v in x {
            acc = O::combine(acc, v);
        }
    } else {
        let mut i = tid;
        while i < len {
            // SAFETY: i < len.
            acc = O::combine(acc, unsafe { segment.read(i) });
            i += block;
        }
    }
    acc
}

/// [`split_for_v4`] for elements of `size` bytes (4 or 8; a power of two that divides 16):
/// how `n` elements at byte address `addr` (a multiple of `size`) split into a head read one
/// by one, 16-byte vectors of `16 / size` elements, and a tail.
/// `head + (16 / size) * vectors + tail == n`, and element `head` is 16-byte aligned whenever
/// `vectors > 0`.
#[inline(always)]
pub const fn split_for_128(addr: usize, n: usize, size: usize) -> V4Split {
    let per = 16 / size;
    // Elements from addr up to the next multiple of 16 bytes (0 when already aligned).
    let to_boundary = (per - (addr / size) % per) % per;
    let head = if to_boundary < n { to_boundary } else { n };
    let rest = n - head;
    V4Split { head, vectors: rest / per, tail: rest % per }
}

/// Elements one thread consumes per trip of [`thread_reduce_v128`]: four 128-bit loads of
/// `T::PER_128` elements (16 for 32-bit types, 8 for 64-bit ones).
pub const fn items_per_trip<T: Element>() -> usize {
    LOADS_PER_TRIP * T::PER_128
}

/// [`thread_sum_v4`] for any element type and operator: this thread's `O::combine` over its
/// share of `g_idata[..n]`, read by a grid-stride loop of four independent 128-bit loads per
/// trip (`ld.global.nc.v4.b32`: four 32-bit elements or two 64-bit ones per load, so 64-bit
/// types keep the 128-bit vectorisation), then the unaligned head and tail element by
/// element ([`split_for_128`]). Every element is combined by exactly one thread of the grid.
///
/// Unlike [`thread_sum_v4`], the trips run unchecked while the thread's whole trip exists
/// (`at + 3T < vectors`, a compare, no division), and the rest of the last trip follows one
/// vector at a time: a missing vector cannot be filled with zeros for min and max, and
/// checking each load inside the loop makes the compiler fold every float min/max load before
/// issuing the next one. The four addresses of a trip are one pointer plus `j × 16T` bytes:
/// computed from 32-bit indices instead, float min/max took 35–36 registers, one block of 1024
/// per SM instead of two, and ran 10% slower than CUB at 2^26 and 2^28 on the H100
/// (`docs/measurements/2026-11-23-h100/types_vs_cub_u32_index.csv`); this way every typed
/// kernel fits in 32.
///
/// # Safety
/// `g_idata` is valid, `T`-aligned global memory for reading `n` elements that no thread
/// writes during the kernel; `gridDim.x × blockDim.x ≤` [`MAX_GRID_THREADS`].
#[inline(always)]
pub unsafe fn thread_reduce_v128<T: Element, O: Operator<T>>(g_idata: Global<T>, n: u32) -> T {
    let V4Split { head, vectors, tail } = split_for_128(g_idata.addr(), n as usize, core::mem::size_of::<T>());
    let (head, vectors, tail) = (head as u32, vectors as u32, tail as u32);
    let block = block_dim_x();
    let threads = grid_dim_x() * block;
    let gid = block_idx_x() * block + thread_idx_x();
    // SAFETY: head <= n; `body` is 16-byte aligned and holds `PER_128 * vectors + tail` elements.
    let body = unsafe { g_idata.offset(head as usize) };
    let words = body.cast::<u32>();
    let per = T::PER_128;
    let mut acc = O::IDENTITY;
    let fold = |acc: T, w: [u32; VEC]| {
        let mut a = acc;
        for e in 0..per {
            a = O::combine(a, T::from_128(w, e));
        }
        a
    };

    let window = LOADS_PER_TRIP as u32 * threads;
    let last = (LOADS_PER_TRIP as u32 - 1) * threads;
    let mut at = gid;
    let stride = VEC * threads as usize;
    while at + last < vectors {
        let mut v = [[0u32; VEC]; LOADS_PER_TRIP];
        // SAFETY: at < vectors.
        let first = unsafe { words.offset(VEC * at as usize) };
        for (j, slot) in v.iter_mut().enumerate() {
            // SAFETY: at + j*threads <= at + last < vectors; every vector of the 16-byte
            // aligned body is 16-byte aligned.
            *slot = unsafe { first.load_v4_nc(j * stride) };
        }
        for w in &v {
            acc = fold(acc, *w);
        }
        at += window;
    }
    // The last, partial trip: one vector at a time (at most LOADS_PER_TRIP - 1 of them).
    while at < vectors {
        // SAFETY: at < vectors.
        acc = fold(acc, unsafe { words.load_v4_nc(VEC * at as usize) });
        at += threads;
    }

    if gid < head {
        // SAFETY: gid < head <= n.
        acc = O::combine(acc, unsafe { g_idata.read(gid as usize) });
    }
    if gid < tail {
        // SAFETY: head + PER_128*vectors + gid < n.
        acc = O::combine(acc, unsafe { body.read(per * vectors as usize + gid as usize) });
    }
    acc
}

/// [`thread_reduce_v128`] keeping the position: this thread's extreme of its share of
/// `g_idata[..n]` and its index ([`Arg`]; the first index where the extreme repeats), read
/// with the same grid-stride loop of four independent 128-bit loads per trip. The head element
/// (the one before the first 16-byte boundary that this thread owns) is taken first and the
/// tail last, so a thread meets its elements in increasing index order and [`Arg::update`]
/// keeps the first of equal values. `Arg::identity` where the thread owns no element.
///
/// # Safety
/// As for [`thread_reduce_v128`]: `g_idata` is valid, `T`-aligned global memory for reading `n`
/// elements that no thread writes during the kernel; `gridDim.x × blockDim.x ≤`
/// [`MAX_GRID_THREADS`].
#[inline(always)]
pub unsafe fn thread_arg_v128<T: Element, O: Extreme<T>>(g_idata: Global<T>, n: u32) -> Arg<T> {
    let V4Split { head, vectors, tail } = split_for_128(g_idata.addr(), n as usize, core::mem::size_of::<T>());
    let (head, vectors, tail) = (head as u32, vectors as u32, tail as u32);
    let block = block_dim_x();
    let threads = grid_dim_x() * block;
    let gid = block_idx_x() * block + thread_idx_x();
    let mut acc = Arg::identity::<O>();
    if gid < head {
        // SAFETY: gid < head <= n.
        acc = acc.update::<O>(unsafe { g_idata.read(gid as usize) }, gid);
    }
    // SAFETY: head <= n; `body` is 16-byte aligned and holds `PER_128 * vectors + tail` elements.
    let body = unsafe { g_idata.offset(head as usize) };
    let words = body.cast::<u32>();
    let per = T::PER_128 as u32;
    // Vector `at` holds elements `head + per·at ..`, below n (< 2^32): no index overflows.
    let fold = |acc: Arg<T>, w: [u32; VEC], at: u32| {
        let mut a = acc;
        for e in 0..per {
            a = a.update::<O>(T::from_128(w, e as usize), head + per * at + e);
        }
        a
    };
    let window = LOADS_PER_TRIP as u32 * threads;
    let last = (LOADS_PER_TRIP as u32 - 1) * threads;
    let stride = VEC * threads as usize;
    let mut at = gid;
    while at + last < vectors {
        let mut v = [[0u32; VEC]; LOADS_PER_TRIP];
        // SAFETY: at < vectors.
        let first = unsafe { words.offset(VEC * at as usize) };
        for (j, slot) in v.iter_mut().enumerate() {
            // SAFETY: at + j*threads <= at + last < vectors; every vector of the body is aligned.
            *slot = unsafe { first.load_v4_nc(j * stride) };
        }
        for (j, w) in v.iter().enumerate() {
            acc = fold(acc, *w, at + j as u32 * threads);
        }
        at += window;
    }
    while at < vectors {
        // SAFETY: at < vectors.
        acc = fold(acc, unsafe { words.load_v4_nc(VEC * at as usize) }, at);
        at += threads;
    }
    if gid < tail {
        let i = per * vectors + gid;
        // SAFETY: head + PER_128*vectors + gid < n.
        acc = acc.update::<O>(unsafe { body.read(i as usize) }, head + i);
    }
    acc
}

/// [`thread_arg_v128`] for any group of `ranks` threads and any [`Fold`]: thread `rank` of the
/// group folds its share of `g[..n]` — 128-bit loads of the 16-byte-aligned body, vector
/// `rank`, `rank + ranks`, … (four independent loads per trip while a whole trip exists), the
/// unaligned head first and the tail last, so that it meets its elements in index order;
/// element `i` is passed to [`Fold::step`] with index `base + i`. With the group a warp (`rank`
/// the lane, `ranks` 32) it is a warp's share of one segment; a block (`threadIdx.x`,
/// `blockDim.x`), a block's tile of one segment. `F::identity()` where the thread owns nothing.
/// The last trip, when fewer than four vectors are left to a rank, is read as `last_trip` says:
/// [`LastTrip::AtOnce`] (up to three predicated loads, then their folds: one wait) or
/// [`LastTrip::OneByOne`] (a load and its fold at a time: a wait each, fewer registers).
///
/// # Safety
/// `g` is valid, `T`-aligned global memory for reading `n` elements that no thread writes
/// during the kernel; `rank < ranks`, `ranks ≤ 2^29`, and `base + n ≤ u32::MAX`; for every
/// element read, `ranks ≥ T::PER_128 − 1` (the unaligned head and the tail, up to
/// `PER_128 − 1` elements each, take a rank per element).
#[inline(always)]
pub unsafe fn thread_fold_v128<T: Element, F: Fold<T>>(
    g: Global<T>,
    n: u32,
    base: u32,
    rank: u32,
    ranks: u32,
    last_trip: LastTrip,
) -> F::Acc {
    let V4Split { head, vectors, tail } = split_for_128(g.addr(), n as usize, core::mem::size_of::<T>());
    let (head, vectors, tail) = (head as u32, vectors as u32, tail as u32);
    let mut acc = F::identity();
    if rank < head {
        // SAFETY: rank < head <= n.
        acc = F::step(acc, unsafe { g.read(rank as usize) }, base + rank);
    }
    // SAFETY: head <= n; `body` is 16-byte aligned and holds `PER_128 * vectors + tail` elements.
    let body = unsafe { g.offset(head as usize) };
    let words = body.cast::<u32>();
    let per = T::PER_128 as u32;
    let first = base + head;
    let fold = |acc: F::Acc, w: [u32; VEC], at: u32| {
        let mut a = acc;
        for e in 0..per {
            a = F::step(a, T::from_128(w, e as usize), first + per * at + e);
        }
        a
    };
    let window = LOADS_PER_TRIP as u32 * ranks;
    let last = (LOADS_PER_TRIP as u32 - 1) * ranks;
    let stride = VEC * ranks as usize;
    let mut at = rank;
    while at + last < vectors {
        let mut v = [[0u32; VEC]; LOADS_PER_TRIP];
        // SAFETY: at < vectors.
        let trip = unsafe { words.offset(VEC * at as usize) };
        for (j, slot) in v.iter_mut().enumerate() {
            // SAFETY: at + j*ranks <= at + last < vectors; every vector of the body is aligned.
            *slot = unsafe { trip.load_v4_nc(j * stride) };
        }
        for (j, w) in v.iter().enumerate() {
            acc = fold(acc, *w, at + j as u32 * ranks);
        }
        at += window;
    }
    match last_trip {
        LastTrip::AtOnce => {
            // At most LOADS_PER_TRIP − 1 vectors are left (at + last ≥ vectors); every index
            // stays below 2^32 (at < vectors + ranks, ranks ≤ 2^29).
            let mut v = [[0u32; VEC]; LOADS_PER_TRIP - 1];
            for (j, slot) in v.iter_mut().enumerate() {
                let i = at + j as u32 * ranks;
                if i < vectors {
                    // SAFETY: i < vectors.
                    *slot = unsafe { words.load_v4_nc(VEC * i as usize) };
                }
            }
            for (j, w) in v.iter().enumerate() {
                let i = at + j as u32 * ranks;
                if i < vectors {
                    acc = fold(acc, *w, i);
                }
            }
        }
        LastTrip::OneByOne => {
            while at < vectors {
                // SAFETY: at < vectors.
                acc = fold(acc, unsafe { words.load_v4_nc(VEC * at as usize) }, at);
                at += ranks;
            }
        }
    }
    if rank < tail {
        let i = per * vectors + rank;
        // SAFETY: head + PER_128*vectors + rank < n.
        acc = F::step(acc, unsafe { body.read(i as usize) }, first + i);
    }
    acc
}

/// The aligned middle of [`thread_fold_v128`]: rank `rank` of a group of `ranks` threads folds
/// its share of `vectors` 16-byte vectors at `words` into `acc` — vector `rank`, `rank + ranks`,
/// … (four independent 128-bit loads a trip while a whole trip is left, the last trip as
/// `last_trip` says), element `e` of vector `v` passed to [`Fold::step`] with index
/// `first + PER_128·v + e`. With the group a block (`threadIdx.x`, `blockDim.x`) and `words` a
/// row's start, it is a block's share of a row whose start is 16-byte aligned and whose length is
/// a multiple of `PER_128` (`segmented_rows`): no head and no tail to read (CUB's
/// `AgentReduce::ConsumeTile` of a full tile with vectorized loads). An `AtOnce` last trip is
/// skipped where no vector is left. `thread_fold_v128` keeps its own copy of this loop: calling
/// this function from it moved one register copy in twenty segmented entries' SASS.
///
/// # Safety
/// `words` is 16-byte aligned, valid global memory for reading `vectors` 16-byte vectors that
/// no thread writes during the kernel; `rank < ranks ≤ 2^29`; `first + PER_128·vectors ≤
/// u32::MAX`.
#[inline(always)]
pub unsafe fn thread_fold_vectors<T: Element, F: Fold<T>>(
    acc: F::Acc,
    words: Global<u32>,
    vectors: u32,
    first: u32,
    rank: u32,
    ranks: u32,
    last_trip: LastTrip,
) -> F::Acc {
    let per = T::PER_128 as u32;
    let mut acc = acc;
    let fold = |acc: F::Acc, w: [u32; VEC], at: u32| {
        let mut a = acc;
        for e in 0..per {
            a = F::step(a, T::from_128(w, e as usize), first + per * at + e);
        }
        a
    };
    let window = LOADS_PER_TRIP as u32 * ranks;
    let last = (LOADS_PER_TRIP as u32 - 1) * ranks;
    let stride = VEC * ranks as usize;
    let mut at = rank;
    while at + last < vectors {
        let mut v = [[0u32; VEC]; LOADS_PER_TRIP];
        // SAFETY: at < vectors.
        let trip = unsafe { words.offset(VEC * at as usize) };
        for (j, slot) in v.iter_mut().enumerate() {
            // SAFETY: at + j*ranks <= at + last < vectors; every vector of the body is aligned.
            *slot = unsafe { trip.load_v4_nc(j * stride) };
        }
        for (j, w) in v.iter().enumerate() {
            acc = fold(acc, *w, at + j as u32 * ranks);
        }
        at += window;
    }
    match last_trip {
        // Where no vector is left (a row of whole trips), nothing more to run.
        LastTrip::AtOnce if at < vectors => {
            // At most LOADS_PER_TRIP − 1 vectors are left (at + last ≥ vectors); every index
            // stays below 2^32 (at < vectors + ranks, ranks ≤ 2^29).
            let mut v = [[0u32; VEC]; LOADS_PER_TRIP - 1];
            for (j, slot) in v.iter_mut().enumerate() {
                let i = at + j as u32 * ranks;
                if i < vectors {
                    // SAFETY: i < vectors.
                    *slot = unsafe { words.load_v4_nc(VEC * i as usize) };
                }
            }
            for (j, w) in v.iter().enumerate() {
                let i = at + j as u32 * ranks;
                if i < vectors {
                    acc = fold(acc, *w, i);
                }
            }
        }
        LastTrip::AtOnce => {}
        LastTrip::OneByOne => {
            while at < vectors {
                // SAFETY: at < vectors.
                acc = fold(acc, unsafe { words.load_v4_nc(VEC * at as usize) }, at);
                at += ranks;
            }
        }
    }
    acc
}

/// How [`thread_fold_v128`] reads a rank's last trip when fewer than [`LOADS_PER_TRIP`] vectors
/// are left to it (a segment's or a tile's end): the choice of the kernel that calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LastTrip {
    /// Up to three predicated 128-bit loads issued together, then folded: the rank waits once.
    /// More registers live at once (an argmax's value and index beside three vectors).
    AtOnce,
    /// A load and its fold at a time: a wait for each (up to three), the fewest registers.
    OneByOne,
}

/// [`thread_reduce_v128`] of transformed elements: this thread's `O::combine` over
/// `X::apply(a[i], b[i])` for its share of `i < n`, one pass, no temporary (CUB's
/// `TransformReduce`). A unary transform (`X::INPUTS == 1`, a square) never reads `b`; a binary
/// one (a product) reads both inputs with two 128-bit loads each per trip, the same 64 bytes in
/// flight per thread as the four loads of one input. Where `a` and `b` sit at different
/// offsets from a 16-byte boundary (sub-ranges of two buffers), no 128-bit load can serve both:
/// each thread then takes elements `gid, gid + threads, …` one by one (coalesced, but one
/// 32- or 64-bit load per element).
///
/// # Safety
/// `a` (and, for a binary transform, `b`) are valid, `T`-aligned global memory for reading `n`
/// elements that no thread writes during the kernel; `gridDim.x × blockDim.x ≤`
/// [`MAX_GRID_THREADS`].
#[inline(always)]
pub unsafe fn thread_transform_v128<T: Element, X: Transform<T>, O: Operator<T>>(
    a: Global<T>,
    b: Global<T>,
    n: u32,
) -> T {
    let block = block_dim_x();
    let threads = grid_dim_x() * block;
    let gid = block_idx_x() * block + thread_idx_x();
    let both = X::INPUTS == 2;
    let mut acc = O::IDENTITY;
    if both && !(a.addr() ^ b.addr()).is_multiple_of(16) {
        let mut i = gid as usize;
        while i < n as usize {
            // SAFETY: i < n.
            acc = O::combine(acc, X::apply(unsafe { a.read(i) }, unsafe { b.read(i) }));
            i += threads as usize;
        }
        return acc;
    }
    let V4Split { head, vectors, tail } = split_for_128(a.addr(), n as usize, core::mem::size_of::<T>());
    let (head, vectors, tail) = (head as u32, vectors as u32, tail as u32);
    let pick = |x: Global<T>| if both { x } else { a };
    // SAFETY: head <= n; both bodies are 16-byte aligned (the same offset from a boundary) and
    // hold `PER_128 * vectors + tail` elements.
    let (body_a, body_b) = unsafe { (a.offset(head as usize), pick(b).offset(head as usize)) };
    let (words_a, words_b) = (body_a.cast::<u32>(), body_b.cast::<u32>());
    let per = T::PER_128;
    let fold = |acc: T, wa: [u32; VEC], wb: [u32; VEC]| {
        let mut r = acc;
        for e in 0..per {
            r = O::combine(r, X::apply(T::from_128(wa, e), T::from_128(wb, e)));
        }
        r
    };
    let loads = LOADS_PER_TRIP as u32 / X::INPUTS;
    let window = loads * threads;
    let last = (loads - 1) * threads;
    let stride = VEC * threads as usize;
    let mut at = gid;
    while at + last < vectors {
        let (mut va, mut vb) = ([[0u32; VEC]; LOADS_PER_TRIP], [[0u32; VEC]; LOADS_PER_TRIP]);
        // SAFETY: at < vectors.
        let (fa, fb) = unsafe { (words_a.offset(VEC * at as usize), words_b.offset(VEC * at as usize)) };
        for j in 0..loads as usize {
            // SAFETY: at + j*threads <= at + last < vectors; every vector of a body is aligned.
            va[j] = unsafe { fa.load_v4_nc(j * stride) };
            if both {
                // SAFETY: as above, for b's body.
                vb[j] = unsafe { fb.load_v4_nc(j * stride) };
            }
        }
        for j in 0..loads as usize {
            acc = fold(acc, va[j], if both { vb[j] } else { va[j] });
        }
        at += window;
    }
    while at < vectors {
        // SAFETY: at < vectors.
        let wa = unsafe { words_a.load_v4_nc(VEC * at as usize) };
        // SAFETY: as above, for b's body (read only for a binary transform).
        let wb = if both { unsafe { words_b.load_v4_nc(VEC * at as usize) } } else { wa };
        acc = fold(acc, wa, wb);
        at += threads;
    }
    let element = |x: Global<T>, i: u32| {
        // SAFETY: the callers below pass i < n (of `a`, and of `b` where it is read).
        unsafe { x.read(i as usize) }
    };
    if gid < head {
        let x = element(a, gid);
        acc = O::combine(acc, X::apply(x, if both { element(b, gid) } else { x }));
    }
    if gid < tail {
        let i = head + per as u32 * vectors + gid;
        let x = element(a, i);
        acc = O::combine(acc, X::apply(x, if both { element(b, i) } else { x }));
    }
    acc
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
    fn split_for_128_covers_every_element_for_both_sizes() {
        for size in [4usize, 8] {
            let per = 16 / size;
            for base in (0..64usize).step_by(size) {
                for n in 0..70usize {
                    let s = split_for_128(base, n, size);
                    assert_eq!(s.head + per * s.vectors + s.tail, n, "size={size} base={base} n={n}");
                    assert!(s.head < per && s.tail < per, "size={size} base={base} n={n}: {s:?}");
                    if s.vectors > 0 {
                        assert_eq!((base + size * s.head) % 16, 0, "size={size} base={base} n={n}");
                    }
                    if size == 4 {
                        assert_eq!(s, split_for_v4(base, n));
                    }
                }
            }
        }
        assert_eq!(split_for_128(0x108, 5, 8), V4Split { head: 1, vectors: 2, tail: 0 });
        assert_eq!(split_for_128(0x100, 5, 8), V4Split { head: 0, vectors: 2, tail: 1 });
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
