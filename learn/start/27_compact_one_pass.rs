//! Exercise 27: `compact_one_pass`, from `compact_flags`, `compact_offsets` and `compact_scatter`: three launches. `./x learn 27` says what to change and why,
//! and checks this file; `./x learn 27 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
//!
//! Kept: the positive elements (`x > 0`), in order. A tile is a block; thread `t` of tile `b`
//! reads the ITEMS_PER_THREAD elements from `ITEMS_PER_THREAD (b · blockDim + t)`, in 16-byte
//! loads (`load_items`).
use kernels::collective::block::BlockScan;
use kernels::collective::block_slots;
use kernels::collective::warp::warp_reduce_shfl;
use kernels::device::atomic::load_relaxed_u64;
use kernels::device::global::GlobalMut;
use kernels::device::kernel;
use kernels::device::slice::Slice;
use kernels::device::thread::{block_dim_x, block_idx_x, lane_id, sync_threads, thread_idx_x};
use kernels::device::warp::{all_sync, ballot_sync};
use kernels::device::{FULL_MASK, WARP_SIZE};
use kernels::scan::index::{FLAG_INVALID, FLAG_PREFIX, pack_status, status_flag, status_value};
use kernels::static_shared;
use kernels::types::Sum;

/// Elements each thread reads (the host launches one block per ITEMS_PER_THREAD × blockDim).
pub const ITEMS_PER_THREAD: usize = 4;

/// Shared words where a tile's kept elements are packed before they are written out: a tile of
/// the largest block.
pub const STAGE: usize = ITEMS_PER_THREAD * 1024;

/// false: the check launches compact_flags, compact_offsets and compact_scatter; true: it
/// launches compact_one_pass alone.
// EXERCISE 27: write compact_one_pass below, then set ONE_PASS to true.
pub const ONE_PASS: bool = false;

/// Elements `first .. first + ITEMS_PER_THREAD` of `input` (0 past its end): `ITEMS_PER_THREAD / 4` 16-byte loads
/// where all are there, one element at a time in the last, short group.
///
/// # Safety
/// `input` starts 16-byte aligned and `first` is a multiple of `ITEMS_PER_THREAD`.
#[inline(always)]
unsafe fn load_items(input: Slice<i32>, first: usize) -> [i32; ITEMS_PER_THREAD] {
    const { assert!(ITEMS_PER_THREAD.is_multiple_of(4), "whole 16-byte loads") };
    let mut x = [0i32; ITEMS_PER_THREAD];
    if first + ITEMS_PER_THREAD <= input.len() {
        for q in 0..ITEMS_PER_THREAD / 4 {
            // SAFETY: the four elements are in the input; 16-byte aligned (the caller's promise).
            let v = unsafe { input.as_global().load_v4(first + 4 * q) };
            x[4 * q..4 * q + 4].copy_from_slice(&v);
        }
    } else {
        for (k, slot) in x.iter_mut().enumerate() {
            *slot = input.get(first + k).unwrap_or(0);
        }
    }
    x
}

kernel! {
    /// Launch 1 of 3: counts[tile] = how many elements the tile keeps.
    pub unsafe fn compact_flags(input: Slice<i32>, counts: GlobalMut<u32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_FLAGS_SLOTS: u32));
        let first = (block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize) * ITEMS_PER_THREAD;
        // SAFETY: the input starts 16-byte aligned (a precondition); first is a multiple of ITEMS_PER_THREAD.
        let x = unsafe { load_items(input, first) };
        let mut mine = 0u32;
        for &v in &x {
            mine += (v > 0) as u32;
        }
        let (_, total) = scan.exclusive::<Sum>(mine);
        if thread_idx_x() == 0 {
            // SAFETY: counts holds one word per block (the caller's promise); this block's own.
            unsafe { counts.write(block_idx_x() as usize, total) };
        }
    }
}

kernel! {
    /// Launch 2 of 3 (one block): the exclusive scan of the counts, in place (each tile's place in
    /// the output), and their total in count[0].
    pub unsafe fn compact_offsets(counts: GlobalMut<u32>, tiles: u32, count: GlobalMut<u32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_OFFSETS_SLOTS: u32));
        let (t, width) = (thread_idx_x() as usize, block_dim_x() as usize);
        let mut carry = 0u32;
        let mut chunk = 0;
        while chunk < tiles as usize {
            let i = chunk + t;
            // SAFETY: i < tiles, which counts holds; this thread's word alone.
            let mine = if i < tiles as usize { unsafe { counts.as_const().read(i) } } else { 0 };
            let (before, total) = scan.exclusive::<Sum>(mine);
            if i < tiles as usize {
                // SAFETY: as above.
                unsafe { counts.write(i, carry + before) };
            }
            carry += total;
            chunk += width;
        }
        if t == 0 {
            // SAFETY: count holds one word; thread 0 alone writes it.
            unsafe { count.write(0, carry) };
        }
    }
}

kernel! {
    /// Launch 3 of 3: each tile reads its elements again and writes the kept ones from its place,
    /// each thread's from place + its rank among the tile's kept elements.
    pub unsafe fn compact_scatter(input: Slice<i32>, offsets: GlobalMut<u32>, output: GlobalMut<i32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_SCATTER_SLOTS: u32));
        let place_slot = static_shared!(COMPACT_SCATTER_PLACE: [u32; 1]);
        let stage = static_shared!(COMPACT_SCATTER_STAGE: [i32; STAGE]);
        let first = (block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize) * ITEMS_PER_THREAD;
        // SAFETY: as in compact_flags.
        let x = unsafe { load_items(input, first) };
        let mut mine = 0u32;
        for &v in &x {
            mine += (v > 0) as u32;
        }
        if thread_idx_x() == 0 {
            // SAFETY: offsets holds one word per block (launch 2's), which nobody writes now;
            // the slot is one word, written by thread 0 alone and read after the scan's barriers.
            unsafe { place_slot.write(0, offsets.as_const().read(block_idx_x() as usize)) };
        }
        let (rank, kept) = scan.exclusive::<Sum>(mine);
        // Pack the kept elements in shared memory, tile order, then write them out together.
        let mut at = rank;
        for &v in &x {
            if v > 0 {
                // SAFETY: rank + its kept ones < the tile's count ≤ the tile's elements ≤
                // STAGE; a slot of this thread's own (the scan's ranks are disjoint).
                unsafe { stage.write(at as usize, v) };
            }
            at += (v > 0) as u32;
        }
        sync_threads();
        // SAFETY: written before the scan's barriers.
        let place = unsafe { place_slot.read(0) };
        let mut i = thread_idx_x() as usize;
        while i < kept as usize {
            // SAFETY: i < the tile's count, a slot written before the barrier; place + i is
            // below the total kept (the Safety section).
            unsafe { output.write(place as usize + i, stage.read(i)) };
            i += block_dim_x() as usize;
        }
    }
}

/// The number of elements kept before tile `tile`, in lane 0 of the warp that calls it: the
/// decoupled look-back of exercise 24, a lane per predecessor, 32 at once. Each
/// lane loads its tile's word until every lane's is valid; the nearest prefix ends the walk
/// (the lanes from it on are added), else the 32 aggregates are added and the window moves 32
/// tiles back. A lane before tile 0 reads a prefix of 0.
///
/// # Safety
/// `status` holds a word per tile below `tile`; all 32 lanes of one warp call it.
#[inline(always)]
unsafe fn look_back(status: GlobalMut<u64>, tile: usize, epoch: u32) -> u32 {
    let lane = lane_id();
    let mut before = 0u32;
    let mut end = tile as isize;
    loop {
        let t = end - WARP_SIZE as isize + lane as isize;
        let load = || {
            if t < 0 {
                pack_status(epoch, FLAG_PREFIX, 0)
            } else {
                // SAFETY: 0 ≤ t < tile, a word of the buffer; flag and count in one atomic load.
                unsafe { load_relaxed_u64(status.as_const().offset(t as usize)) }
            }
        };
        let mut word = load();
        while !all_sync(FULL_MASK, status_flag(word, epoch) != FLAG_INVALID) {
            if status_flag(word, epoch) == FLAG_INVALID {
                word = load();
            }
        }
        let (flag, count) = (status_flag(word, epoch), status_value(word) as u32);
        let prefixes = ballot_sync(FULL_MASK, flag == FLAG_PREFIX);
        if prefixes != 0 {
            let nearest = 31 - prefixes.leading_zeros();
            return before + warp_reduce_shfl::<u32, Sum>(if lane >= nearest { count } else { 0 });
        }
        before += warp_reduce_shfl::<u32, Sum>(count);
        end -= WARP_SIZE as isize;
    }
}

kernel! {
    /// The three launches in one: each element read once.
    pub unsafe fn compact_one_pass(
        input: Slice<i32>,
        output: GlobalMut<i32>,
        count: GlobalMut<u32>,
        status: GlobalMut<u64>,
        epoch: u32
    ) {
        // EXERCISE 27: read, count and rank as compact_scatter does; warp 0 publishes the tile's count in status and looks back for its place (look_back above); then scatter; the last tile writes count[0].
        let _ = (input, output, count, status, epoch);
    }
}
