//! Exercise 24: `lookback`, from `lookback` with each tile re-reading the input before it. `./x learn 24` says what to change and why,
//! and checks this file; `./x learn 24 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
//!
//! This file is `lookback` for `i32` sums, written out plainly: one block of 256 threads per
//! tile of 9216 elements, the tile in shared memory, loaded and stored in 16-byte chunks with
//! plain loads and stores. (The project's kernel is generic over the element type and the
//! operator, and copies the tile with `cp.async`: read it with `T = i32` and `O::combine` = `+`.)
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::{shfl_up_sync, shfl_xor_sync};
use kernels::device::{FULL_MASK, WARP_SIZE, trap};
use kernels::scan::index::{blocked_chunk, striped_chunk};
use kernels::scan::{LOOKBACK_ITEMS, LOOKBACK_THREADS, LOOKBACK_TILE};
use kernels::{kernel, static_shared};

/// Threads per block (the host launches exactly this many).
const THREADS: usize = LOOKBACK_THREADS as usize;
/// Elements per thread: 9 chunks of 4.
const ITEMS: usize = LOOKBACK_ITEMS as usize;
/// 16-byte chunks per thread.
const ROWS: usize = ITEMS / 4;
/// Elements per tile: the host launches one block per tile.
const TILE: usize = LOOKBACK_TILE as usize;
/// Warps per block.
const WARPS: usize = THREADS / WARP_SIZE as usize;
/// The shared slot, after the tile and the warps' totals, that carries the tile's prefix.
const PREFIX_SLOT: usize = TILE + WARPS;

/// The sum of `x` over lanes `0..=lane` of a full warp (Hillis–Steele, 5 shuffles).
#[inline(always)]
fn warp_inclusive_scan(mut x: i32, lane: u32) -> i32 {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = shfl_up_sync(FULL_MASK, x, d);
        if lane >= d {
            x = x.wrapping_add(y);
        }
        d *= 2;
    }
    x
}

/// The sum of `x` over a full warp, in every lane (butterfly, 5 shuffles).
#[inline(always)]
fn warp_sum(mut x: i32) -> i32 {
    let mut m = 16;
    while m > 0 {
        x = x.wrapping_add(shfl_xor_sync(FULL_MASK, x, m));
        m /= 2;
    }
    x
}

/// The sum of every element before tile `tile`, in every lane of the warp that calls it: the
/// warp reads them all again.
///
/// # Safety
/// `input` holds at least `tile * TILE` elements; called by all 32 lanes of one warp.
#[inline(always)]
unsafe fn sum_before(input: Global<i32>, tile: usize, lane: u32) -> i32 {
    let mut sum = 0i32;
    let mut i = lane as usize;
    while i < tile * TILE {
        // SAFETY: i < tile * TILE, which the input holds.
        sum = sum.wrapping_add(unsafe { input.read(i) });
        i += WARP_SIZE as usize;
    }
    warp_sum(sum)
}

kernel! {
    pub unsafe fn lookback(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        let smem = static_shared!(LOOKBACK_TILE_WORDS: [i32; TILE + WARPS + 4]);
        if block_dim_x() as usize != THREADS {
            trap("lookback launched with a block size other than LOOKBACK_THREADS");
        }
        let (tid, n) = (thread_idx_x() as usize, n as usize);
        let (lane, warp) = (thread_idx_x() % WARP_SIZE, tid / WARP_SIZE as usize);
        let tile = block_idx_x() as usize;
        let base = tile * TILE;
        let full = base + TILE <= n;

        // 1. Load the tile, striped: chunk r of thread tid is elements (r * THREADS + tid) * 4 ..
        //    + 4 (a warp reads 512 consecutive bytes); in the last, partial tile one element at a
        //    time, 0 past n.
        for r in 0..ROWS {
            let c = striped_chunk(tid, r, THREADS);
            let x = if full {
                // SAFETY: base + c + 4 <= n; 16-byte aligned (an aligned input, c a multiple of 4).
                unsafe { input.load_v4(base + c) }
            } else {
                // SAFETY: each element read is below n.
                let at = |k: usize| if base + c + k < n { unsafe { input.read(base + c + k) } } else { 0 };
                [at(0), at(1), at(2), at(3)]
            };
            // SAFETY: c + 4 <= TILE; this thread's chunk.
            unsafe { smem.write_v4(c, x) };
        }
        sync_threads();

        // 2. Reduce, blocked: thread tid sums its ITEMS consecutive elements (from tid * ITEMS);
        //    an inclusive scan of the threads' sums in each warp; lane 31 leaves the warp's
        //    total after the tile.
        let mut own = 0i32;
        for r in 0..ROWS {
            // SAFETY: in the tile, written before the barrier.
            let x = unsafe { smem.read_v4(blocked_chunk(tid, r, ITEMS)) };
            own = own.wrapping_add(x[0]).wrapping_add(x[1]).wrapping_add(x[2]).wrapping_add(x[3]);
        }
        let incl = warp_inclusive_scan(own, lane);
        if lane == WARP_SIZE - 1 {
            // SAFETY: TILE + warp < PREFIX_SLOT; this warp's slot.
            unsafe { smem.write(TILE + warp, incl) };
        }
        sync_threads();

        // 3. The tile's aggregate (the sum of its elements), and the sum of the warps before
        //    this thread's.
        let (mut aggregate, mut warp_offset) = (0i32, 0i32);
        for w in 0..WARPS {
            // SAFETY: written before the barrier.
            let x = unsafe { smem.read(TILE + w) };
            if w < warp {
                warp_offset = warp_offset.wrapping_add(x);
            }
            aggregate = aggregate.wrapping_add(x);
        }

        // 4. Scan in place: each thread rewrites its elements with their sums within the tile.
        let mut run = warp_offset.wrapping_add(incl.wrapping_sub(own));
        for r in 0..ROWS {
            let at = blocked_chunk(tid, r, ITEMS);
            // SAFETY: this thread's own chunk.
            let x = unsafe { smem.read_v4(at) };
            let mut out = [0i32; 4];
            for k in 0..4 {
                let before = run;
                run = run.wrapping_add(x[k]);
                out[k] = if exclusive != 0 { before } else { run };
            }
            // SAFETY: as above; other threads read it only after the next barrier.
            unsafe { smem.write_v4(at, out) };
        }

        // 5. The tile's prefix: the sum of every element before the tile, from warp 0 to every
        //    thread through the shared slot.
        // EXERCISE 24: publish this tile's aggregate in `status` as soon as step 3 has it, and look back at what the tiles before it published instead of re-reading their input; then publish the tile's inclusive prefix.
        if warp == 0 {
            // SAFETY: the input holds the tiles before this one; the whole warp calls it.
            let prefix = if tile == 0 { 0 } else { unsafe { sum_before(input, tile, lane) } };
            if lane == 0 {
                // SAFETY: read only after the barrier below.
                unsafe { smem.write(PREFIX_SLOT, prefix) };
            }
        }
        sync_threads();
        // SAFETY: written before the barrier.
        let prefix = unsafe { smem.read(PREFIX_SLOT) };

        // 6. Store, striped: each element plus the prefix.
        for r in 0..ROWS {
            let c = striped_chunk(tid, r, THREADS);
            // SAFETY: written before the barrier.
            let v = unsafe { smem.read_v4(c) };
            let out = [v[0].wrapping_add(prefix), v[1].wrapping_add(prefix), v[2].wrapping_add(prefix), v[3].wrapping_add(prefix)];
            if full {
                // SAFETY: base + c + 4 <= n; 16-byte aligned; this thread's chunk.
                unsafe { output.store_v4(base + c, out) };
            } else {
                for (k, &x) in out.iter().enumerate() {
                    if base + c + k < n {
                        // SAFETY: below n; this thread's element.
                        unsafe { output.write(base + c + k, x) };
                    }
                }
            }
        }
    }
}
