//! Exercise 27: `compact_one_pass`, from `compact_flags`, `compact_offsets` and `compact_scatter`: three launches. `./x learn 27` says what to change and why,
//! and checks this file; `./x learn 27 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
//!
//! Kept: the positive elements (`x > 0`), in order. A tile is a block, one element a thread.
use kernels::collective::block::BlockScan;
use kernels::collective::block_slots;
use kernels::device::global::GlobalMut;
use kernels::device::kernel;
use kernels::device::slice::Slice;
use kernels::device::thread::{block_dim_x, block_idx_x, thread_idx_x};
use kernels::static_shared;
use kernels::types::Sum;

/// false: the check launches compact_flags, compact_offsets and compact_scatter; true: it
/// launches compact_one_pass alone.
// EXERCISE 27: write compact_one_pass below, then set ONE_PASS to true.
pub const ONE_PASS: bool = false;

kernel! {
    /// Launch 1 of 3: counts[tile] = how many elements the tile keeps.
    pub unsafe fn compact_flags(input: Slice<i32>, counts: GlobalMut<u32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_FLAGS_SLOTS: u32));
        let i = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
        let kept = input.get(i).is_some_and(|x| x > 0);
        let (_, total) = scan.exclusive::<Sum>(kept as u32);
        if thread_idx_x() == 0 {
            // SAFETY: counts holds one word per block; this block's own.
            unsafe { counts.write(block_idx_x() as usize, total) };
        }
    }
}

kernel! {
    /// Launch 2 of 3 (one block): the exclusive scan of the counts, in place (each tile's
    /// place in the output), and their total in count[0].
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
    /// Launch 3 of 3: each tile reads its elements again and writes the kept ones from its
    /// place, each at place + its rank among the tile's kept elements.
    pub unsafe fn compact_scatter(input: Slice<i32>, offsets: GlobalMut<u32>, output: GlobalMut<i32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_SCATTER_SLOTS: u32));
        let place_slot = static_shared!(COMPACT_SCATTER_PLACE: [u32; 1]);
        let i = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
        let x = input.get(i).unwrap_or(0);
        if thread_idx_x() == 0 {
            // SAFETY: offsets holds one word per block, which nobody writes now; the slot is
            // one word, written by thread 0 alone and read after the scan's barriers.
            unsafe { place_slot.write(0, offsets.as_const().read(block_idx_x() as usize)) };
        }
        let (rank, _) = scan.exclusive::<Sum>((x > 0) as u32);
        if x > 0 {
            // SAFETY: written before the scan's barriers.
            let place = unsafe { place_slot.read(0) } + rank;
            // SAFETY: a place of its own below the total kept.
            unsafe { output.write(place as usize, x) };
        }
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
        // EXERCISE 27: flag and rank as compact_scatter does, publish the tile's count in status and look back for its place, then scatter; the last tile writes count[0].
        let _ = (input, output, count, status, epoch);
    }
}
