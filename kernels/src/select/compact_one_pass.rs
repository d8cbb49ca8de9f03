use crate::collective::block::BlockScan;
use crate::collective::block_slots;
use crate::collective::warp::warp_reduce_shfl;
use crate::device::atomic::{load_relaxed_u64, store_relaxed_u64};
use crate::device::global::GlobalMut;
use crate::device::kernel;
use crate::device::slice::Slice;
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, lane_id, sync_threads, thread_idx_x};
use crate::device::warp::{all_sync, ballot_sync};
use crate::device::{FULL_MASK, WARP_SIZE};
use crate::scan::index::{FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, pack_status, status_flag, status_value};
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

/// The number of elements kept before tile `tile`, in lane 0 of the warp that calls it: the
/// decoupled look-back of `lookback` (`./x learn 24`), a lane per predecessor, 32 at once. Each
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
    /// Stream compaction in one pass: the positive elements of `input`, in order, into
    /// `output`, and their number into `count[0]`; each tile learns its place in the output
    /// from the tiles before it by the decoupled look-back (CUB's `DeviceSelect::If` is built
    /// the same way).
    ///
    /// # Concept
    /// **A scan's look-back, used for a scatter.** Compaction needs each tile's place: the
    /// number of kept elements before it, a scan of the tiles' counts. The decoupled look-back
    /// (`lookback`, `./x learn 24`) gives a tile that scan while the tile still holds its
    /// elements: it publishes its count, reads what the tiles before it published, and then
    /// writes its kept elements. The input is read once.
    ///
    /// # Previous problem → fix
    /// `compact_flags`, `compact_offsets` and `compact_scatter` take three launches and read the
    /// input twice (to count, then again to scatter), with a wait between launches. Here one
    /// launch counts, finds its place and scatters: one read of the input (the lesson's
    /// counter, passes over the input, goes from 2 to 1).
    ///
    /// # Execution
    /// 1. Thread `t` of block `b` (tile `b`) reads its 4 elements, from `4 (b · blockDim + t)`,
    ///    in one 16-byte load (`COMPACT_ITEMS_PER_THREAD`), and counts the kept ones (`x > 0`);
    ///    its rank among the tile's kept elements and the tile's count: the block's exclusive
    ///    scan of the counts (`BlockScan`).
    /// 2. Warp 0: tile 0 publishes its count as an inclusive prefix (`FLAG_PREFIX`), its place
    ///    0; any other tile publishes it as an aggregate (`FLAG_AGGREGATE`), looks back for its
    ///    place (32 predecessors at a time, to the nearest prefix), and publishes place + count
    ///    as its prefix. Lane 0 puts the place in shared memory.
    /// 3. Meanwhile each thread puts its kept elements at `stage[rank]`, … in shared memory (the
    ///    tile's kept elements, packed in order); a barrier; thread `t` copies `stage[t]`,
    ///    `stage[t + blockDim]`, … below the tile's count to `output[place + …]` (consecutive
    ///    threads to consecutive places); the last tile's thread 0 stores place + count in
    ///    `count[0]`.
    ///
    /// ```text
    ///  tile 0: read, count, scan ─► status[0] = PREFIX(c0) ───────────────────► scatter from 0
    ///  tile 1: read, count, scan ─► status[1] = AGGREGATE(c1)
    ///          look back: status[0] = PREFIX(c0) ─► status[1] = PREFIX(c0 + c1) ─► scatter from c0
    /// ```
    ///
    /// # Launch
    /// One block per `4 × blockDim` elements; blocks of whole warps (32 to 1024 threads); 16 KiB
    /// and 132 bytes of static shared memory (the stage, `COMPACT_STAGE` words; the scan's
    /// slots and the place).
    ///
    /// # Preconditions
    /// `input` starts 16-byte aligned; `status` holds one word per block, none of them written
    /// by a launch of this `epoch` (zeroed words, or an earlier epoch's: the tags of
    /// `kernels::scan::index`); `output` holds as many elements as are kept; `count` one word.
    ///
    /// # Safety
    /// Tiles publish before they look back, and look back only at lower tiles, so every wait
    /// ends (blocks start in order, as on the GPU); a tile's place is the number of kept
    /// elements before it, so every kept element has a place of its own below the total kept.
    ///
    /// # Measured
    /// `./x learn 27 --gpu`, NVIDIA H200, 2^24 `i32` (half of them kept), block 512
    /// (`docs/measurements/2026-11-30-h200/learn-gpu-00ff4ce/learn-gpu.txt`, commit 00ff4ce; two rounds, each the median of 10 timed runs): 86.2 and 87.0 µs,
    /// against the three launches' 96.0 and 96.1 (1.10×). Both are far from the bandwidth
    /// bound: tiles of 2048 elements keep each block waiting on its loads, barriers and
    /// look-back more than it moves data (the library's `select` kernel: 7168 a tile, copied by
    /// `cp.async`). The lesson's counter, the emulator's passes over the input: 1.02 at the
    /// check's shape, against 2.
    pub unsafe fn compact_one_pass(
        input: Slice<i32>,
        output: GlobalMut<i32>,
        count: GlobalMut<u32>,
        status: GlobalMut<u64>,
        epoch: u32
    ) {
        let scan = BlockScan::new(block_slots!(COMPACT_ONE_PASS_SLOTS: u32));
        let place_slot = static_shared!(COMPACT_ONE_PASS_PLACE: [u32; 1]);
        let stage = static_shared!(COMPACT_ONE_PASS_STAGE: [i32; STAGE]);
        let tile = block_idx_x() as usize;
        let first = (tile * block_dim_x() as usize + thread_idx_x() as usize) * ITEMS;
        // SAFETY: the input starts 16-byte aligned (a precondition); first is a multiple of ITEMS.
        let x = unsafe { load_items(input, first) };
        let mut mine = 0u32;
        for &v in &x {
            mine += (v > 0) as u32;
        }
        let (rank, kept) = scan.exclusive::<Sum>(mine);
        if thread_idx_x() < WARP_SIZE {
            let lane0 = thread_idx_x() == 0;
            let mut place = 0u32;
            if tile == 0 {
                if lane0 {
                    // SAFETY: status holds one word per tile; this tile's own.
                    unsafe { store_relaxed_u64(status.offset(0), pack_status(epoch, FLAG_PREFIX, kept as i32)) };
                }
            } else {
                if lane0 {
                    // SAFETY: as above.
                    unsafe { store_relaxed_u64(status.offset(tile), pack_status(epoch, FLAG_AGGREGATE, kept as i32)) };
                }
                // SAFETY: the words below `tile` are the buffer's; the whole warp calls it.
                place = unsafe { look_back(status, tile, epoch) };
                if lane0 {
                    // SAFETY: this tile's own word.
                    unsafe { store_relaxed_u64(status.offset(tile), pack_status(epoch, FLAG_PREFIX, (place + kept) as i32)) };
                }
            }
            if lane0 {
                // SAFETY: one word; thread 0 alone writes it, the others read it after the barrier.
                unsafe { place_slot.write(0, place) };
            }
        }
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
        // SAFETY: written before the barrier.
        let place = unsafe { place_slot.read(0) };
        let mut i = thread_idx_x() as usize;
        while i < kept as usize {
            // SAFETY: i < the tile's count, a slot written before the barrier; place + i is
            // below the total kept (the Safety section).
            unsafe { output.write(place as usize + i, stage.read(i)) };
            i += block_dim_x() as usize;
        }
        if thread_idx_x() == 0 && tile + 1 == grid_dim_x() as usize {
            // SAFETY: count holds one word; the last tile's thread 0 alone writes it.
            unsafe { count.write(0, place + kept) };
        }
    }
}
