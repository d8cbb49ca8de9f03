//! Stream compaction as three launches (the lesson's start, `./x learn 27`): flags, a scan, a
//! scatter. Kept: the positive elements, in order.

use crate::collective::block::BlockScan;
use crate::collective::block_slots;
use crate::device::global::GlobalMut;
use crate::device::kernel;
use crate::device::slice::Slice;
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::static_shared;
use crate::types::Sum;

use super::{COMPACT_ITEMS_PER_THREAD as ITEMS, COMPACT_STAGE as STAGE};

/// Elements `first .. first + ITEMS` of `input` (0 past its end): `ITEMS / 4` 16-byte loads
/// where all are there, one element at a time in the last, short group.
///
/// # Safety
/// `input` starts 16-byte aligned and `first` is a multiple of `ITEMS`.
#[inline(always)]
unsafe fn load_items(input: Slice<i32>, first: usize) -> [i32; ITEMS] {
    const { assert!(ITEMS.is_multiple_of(4), "whole 16-byte loads") };
    let mut x = [0i32; ITEMS];
    if first + ITEMS <= input.len() {
        for q in 0..ITEMS / 4 {
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
    /// Launch 1 of 3: how many elements each tile keeps (one tile per block, four consecutive
    /// elements a thread: `COMPACT_ITEMS_PER_THREAD`; kept: `x > 0`), into `counts[tile]`.
    ///
    /// # Concept
    /// **Compaction is a scan.** Where kept element `i` goes is the number of kept elements
    /// before it: an exclusive scan of the 0/1 flags. Done by tiles, that is three steps:
    /// count each tile's kept elements, scan the counts (each tile's place in the output), and
    /// scatter each tile's kept elements from its place. This launch is the first.
    ///
    /// # Previous problem → fix
    /// The first kernel of the compaction lesson: it starts from what a scan gives (the
    /// look-back scan, `lookback`), and spends three launches where `compact_one_pass` spends
    /// one.
    ///
    /// # Execution
    /// 1. Thread `t` of block `b` reads its 4 elements, from `4 (b · blockDim + t)`, in
    ///    one 16-byte load (one at a time in the last, short group), and counts the kept ones.
    /// 2. The block sums the counts (`BlockScan`, CUB's `BlockScan`); thread 0 stores the total
    ///    in `counts[b]`.
    ///
    /// # Launch
    /// One block per `4 × blockDim` elements; blocks of whole warps (32 to 1024 threads); 128
    /// bytes of static shared memory (the scan's slots).
    ///
    /// # Preconditions
    /// `input` starts 16-byte aligned; `counts` holds one word per block.
    ///
    /// # Safety
    /// `counts` holds one word per block of the launch; thread 0 of block `b` alone writes
    /// word `b`.
    ///
    /// # Measured
    /// The three launches together, `./x learn 27 --gpu` with them as the learner's file, NVIDIA
    /// H200, 2^24 `i32`, block 512 (`docs/measurements/2026-11-30-h200/learn-gpu-00ff4ce/learn-gpu.txt`, commit 00ff4ce; two rounds, each the median of 10
    /// timed runs): 96.0 and 96.1 µs; `compact_one_pass` 86.2 and 87.0. The lesson's counter,
    /// the emulator's passes over the input: 2 (this launch and the scatter each read it).
    pub unsafe fn compact_flags(input: Slice<i32>, counts: GlobalMut<u32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_FLAGS_SLOTS: u32));
        let first = (block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize) * ITEMS;
        // SAFETY: the input starts 16-byte aligned (a precondition); first is a multiple of ITEMS.
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
    /// Launch 2 of 3: the exclusive scan of the `tiles` counts of launch 1, in place (each
    /// tile's first place in the output), and their total in `count[0]`; one block.
    ///
    /// # Concept
    /// **The scan in the middle.** The tiles' places are the exclusive scan of their counts,
    /// which is small (one word a tile): one block walks it in chunks of its width, carrying
    /// the sum of the chunks before.
    ///
    /// # Previous problem → fix
    /// Launch 1 left one count a tile; the scatter needs each tile's place.
    ///
    /// # Execution
    /// 1. For each chunk of `blockDim` counts: thread `t` scans its count within the chunk
    ///    (`BlockScan`), adds the carry, and writes its place over its count.
    /// 2. The carry grows by the chunk's total; after the last chunk thread 0 stores it in
    ///    `count[0]`.
    ///
    /// # Launch
    /// One block of whole warps; 128 bytes of static shared memory.
    ///
    /// # Preconditions
    /// `counts` holds `tiles` words, `count` one.
    ///
    /// # Safety
    /// Each thread writes only its own counts (below `tiles`), and thread 0 alone `count[0]`.
    ///
    /// # Measured
    /// With the other two launches: `compact_flags`' section.
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
    /// Launch 3 of 3: each tile reads its elements again and writes the kept ones in order,
    /// from its place (`offsets[tile]`, launch 2's).
    ///
    /// # Concept
    /// **Scatter by rank.** A kept element's place is its tile's place plus its rank among the
    /// tile's kept elements: the exclusive scan of the threads' counts, then its rank among its
    /// thread's.
    ///
    /// # Previous problem → fix
    /// Launches 1 and 2 gave every tile its place; this launch reads the input a second time to
    /// write the kept elements.
    ///
    /// # Execution
    /// 1. Thread `t` of block `b` reads its 4 elements again and counts the kept ones; thread 0
    ///    puts the tile's place, `offsets[b]`, in shared memory.
    /// 2. The thread's rank: the block's exclusive scan of the counts (`BlockScan`, whose
    ///    barriers also order the place's write before its reads).
    /// 3. Its kept elements go to `stage[rank]`, `stage[rank + 1]`, … in shared memory: the
    ///    tile's kept elements, packed in order; a barrier.
    /// 4. Thread `t` copies `stage[t]`, `stage[t + blockDim]`, … below the tile's count to
    ///    `output[place + …]`: consecutive threads to consecutive places.
    ///
    /// # Launch
    /// As `compact_flags`: one block per `4 × blockDim` elements, whole warps; 16 KiB and 132
    /// bytes of static shared memory (the stage, `COMPACT_STAGE` words; the scan's slots and the
    /// place).
    ///
    /// # Preconditions
    /// `input` starts 16-byte aligned; `offsets` holds launch 2's places, one a block;
    /// `output` holds as many elements as are kept.
    ///
    /// # Safety
    /// The places are the exclusive scan of the kept counts, so every kept element has a place
    /// of its own below the total kept, which `output` holds.
    ///
    /// # Measured
    /// With the other two launches: `compact_flags`' section.
    pub unsafe fn compact_scatter(input: Slice<i32>, offsets: GlobalMut<u32>, output: GlobalMut<i32>) {
        let scan = BlockScan::new(block_slots!(COMPACT_SCATTER_SLOTS: u32));
        let place_slot = static_shared!(COMPACT_SCATTER_PLACE: [u32; 1]);
        let stage = static_shared!(COMPACT_SCATTER_STAGE: [i32; STAGE]);
        let first = (block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize) * ITEMS;
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
