use crate::collective::block::BlockScan;
use crate::collective::block_slots;
use crate::device::atomic::{load_relaxed_u64, store_relaxed_u64};
use crate::device::global::GlobalMut;
use crate::device::kernel;
use crate::device::slice::Slice;
use crate::device::thread::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use crate::scan::index::{FLAG_AGGREGATE, FLAG_INVALID, FLAG_PREFIX, pack_status, status_flag, status_value};
use crate::static_shared;
use crate::types::Sum;

kernel! {
    /// Stream compaction in one pass: the positive elements of `input`, in order, into
    /// `output`, and their number into `count[0]`; each tile learns its place in the output
    /// from the tiles before it by the decoupled look-back (CUB's `DeviceSelect::If`, whose
    /// select is built the same way).
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
    /// input twice (the flags to count, then again to scatter), with a wait between launches.
    /// Here one launch flags, counts, finds its place and scatters: one read of the input (the
    /// lesson's counter, passes over the input, goes from 2 to 1).
    ///
    /// # Execution
    /// 1. Thread `t` of block `b` (tile `b`) flags element `b · blockDim + t` (kept: `x > 0`);
    ///    its rank among the tile's kept elements and the tile's count: the block's exclusive
    ///    scan of the flags (`BlockScan`).
    /// 2. Thread 0: tile 0 publishes its count as an inclusive prefix (`FLAG_PREFIX`) and its
    ///    place is 0; any other tile publishes it as an aggregate (`FLAG_AGGREGATE`), then looks
    ///    back from `b − 1`: waits for each word to be valid, adds its value, stops at a prefix;
    ///    then publishes its own prefix (place + count), and puts its place in shared memory.
    /// 3. Barrier; each kept element goes to `output[place + rank]`; the last tile's thread 0
    ///    stores place + count in `count[0]`.
    ///
    /// ```text
    ///  tile 0: flags, scan ─► status[0] = PREFIX(c0) ─────────────► scatter from 0
    ///  tile 1: flags, scan ─► status[1] = AGGREGATE(c1) ─ look back: PREFIX(c0) ─► status[1] = PREFIX(c0 + c1) ─► scatter from c0
    /// ```
    ///
    /// # Launch
    /// One block per `blockDim` elements; blocks of whole warps (32 to 1024 threads); 132 bytes
    /// of static shared memory (the scan's slots and the place).
    ///
    /// # Preconditions
    /// `status` holds one word per block, none of them written by a launch of this `epoch`
    /// (zeroed words, or an earlier epoch's: the tags of `kernels::scan::index`); `output`
    /// holds as many elements as are kept; `count` one word.
    ///
    /// # Safety
    /// Tiles publish before they look back, and look back only at lower tiles, so every wait
    /// ends (blocks start in order, as on the GPU); a tile's place is the number of kept
    /// elements before it, so every kept element has a place of its own below the total kept.
    ///
    /// # Measured
    /// Not measured on a GPU: the lesson of `./x learn 27`, whose counter is the emulator's
    /// passes over the input (1.00 at the check's shape, against 2).
    pub unsafe fn compact_one_pass(
        input: Slice<i32>,
        output: GlobalMut<i32>,
        count: GlobalMut<u32>,
        status: GlobalMut<u64>,
        epoch: u32
    ) {
        let scan = BlockScan::new(block_slots!(COMPACT_ONE_PASS_SLOTS: u32));
        let place_slot = static_shared!(COMPACT_ONE_PASS_PLACE: [u32; 1]);
        let tile = block_idx_x() as usize;
        let x = input.get(tile * block_dim_x() as usize + thread_idx_x() as usize).unwrap_or(0);
        let (rank, aggregate) = scan.exclusive::<Sum>((x > 0) as u32);
        if thread_idx_x() == 0 {
            let mut place = 0u32;
            if tile == 0 {
                // SAFETY: status holds one word per block; this tile's own.
                unsafe { store_relaxed_u64(status.offset(0), pack_status(epoch, FLAG_PREFIX, aggregate as i32)) };
            } else {
                // SAFETY: as above.
                unsafe { store_relaxed_u64(status.offset(tile), pack_status(epoch, FLAG_AGGREGATE, aggregate as i32)) };
                let mut t = tile - 1;
                loop {
                    // SAFETY: t < tile, a word of the buffer; flag and value in one atomic load.
                    let word = unsafe { load_relaxed_u64(status.as_const().offset(t)) };
                    let flag = status_flag(word, epoch);
                    if flag == FLAG_INVALID {
                        continue;
                    }
                    place += status_value(word) as u32;
                    if flag == FLAG_PREFIX {
                        break;
                    }
                    t -= 1;
                }
                // SAFETY: this tile's own word.
                unsafe { store_relaxed_u64(status.offset(tile), pack_status(epoch, FLAG_PREFIX, (place + aggregate) as i32)) };
            }
            // SAFETY: one word; thread 0 alone writes it, the others read it after the barrier.
            unsafe { place_slot.write(0, place) };
        }
        sync_threads();
        // SAFETY: written before the barrier.
        let place = unsafe { place_slot.read(0) };
        if x > 0 {
            // SAFETY: a place of its own below the total kept (the Safety section).
            unsafe { output.write((place + rank) as usize, x) };
        }
        if thread_idx_x() == 0 && tile + 1 == grid_dim_x() as usize {
            // SAFETY: count holds one word; the last tile's thread 0 alone writes it.
            unsafe { count.write(0, place + aggregate) };
        }
    }
}
