use super::index::{blelloch_pair, padded, padded_len};
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::{kernel, static_shared};

/// Threads per block of the Blelloch kernels; each thread owns two elements.
pub const BLELLOCH_BLOCK: u32 = 512;
/// Elements per tile (one block's share): `2 * BLELLOCH_BLOCK`.
pub const BLELLOCH_TILE: u32 = 2 * BLELLOCH_BLOCK;
/// Static shared memory of [`blelloch_block`] per block: the tile padded against bank
/// conflicts (`index::padded_len`: 1055 `i32`, 4220 bytes), in an array that
/// `static_shared!` aligns to 16 bytes, so the block takes 4224.
pub const BLELLOCH_BLOCK_SHARED_BYTES: u32 =
    (padded_len(BLELLOCH_TILE as usize) * core::mem::size_of::<i32>()).next_multiple_of(16) as u32;

kernel! {
    /// Work-efficient scan of one 1024-element tile in shared memory (Blelloch 1990, as in
    /// GPU Gems 3 ch. 39): up-sweep, clear the root, down-sweep, with bank-conflict-avoiding
    /// padding; writes the tile's scan and the tile's total to `sums[blockIdx.x]`. The first
    /// step of the reduce-then-scan method: the host scans `sums` the same way (recursively),
    /// then `blelloch_add` adds each tile's offset.
    ///
    /// # Concept
    /// **Work efficiency, and shared-memory banks.** The up-sweep builds partial sums up a
    /// balanced tree (`n - 1` additions); clearing the root and sweeping back down — each node
    /// passes its prefix to its left child and `prefix + left sum` to its right child — hands
    /// every element its exclusive prefix in another `n - 1` additions: `O(n)` work, like the
    /// sequential scan. Shared memory is 32 banks of 4-byte words (word `w` is in bank
    /// `w % 32`); when two lanes of a warp touch different words of one bank, the accesses
    /// are serialised. The tree's accesses are `2 * offset` words apart, so from offset 16 on
    /// every lane of a warp hits the same bank: a 32-way conflict. Inserting one padding word
    /// per 32 (`CONFLICT_FREE_OFFSET(i) = i >> LOG_NUM_BANKS`, element `i` at word
    /// `i + (i >> 5)`) shifts each group of 32 by one bank, spreading those accesses over
    /// distinct banks: `index::tests::padding_removes_the_bank_conflicts_of_the_tree` counts,
    /// for every level and warp of a 1024-element tile, up to 32-way conflicts without the
    /// padding and none with it.
    ///
    /// # Previous problem → fix
    /// `bit` does `O(n log n)` work: every query re-reads tree nodes that other queries also
    /// read. The down-sweep computes each node's prefix once and passes it down: `O(n)`.
    /// Without the padding, the same tree in shared memory spends most of its deep levels in
    /// bank conflicts; the padding costs 32 extra words per tile.
    ///
    /// # Execution
    /// Thread `t` owns elements `t` and `t + 512` of the tile (coalesced loads and stores).
    /// 1. Load both elements (0 past `n`) into the padded shared array.
    /// 2. Up-sweep: for `d = 512, 256, …, 1` with `offset = 1, 2, …, 512`: barrier; thread
    ///    `t < d` adds node `a = offset(2t+1)-1` into node `b = offset(2t+2)-1`.
    /// 3. Thread 0 writes the root (the tile's total) to `sums[blockIdx.x]` and clears it.
    /// 4. Down-sweep: for `d = 1, 2, …, 512` with `offset = 512, …, 1`: barrier; thread
    ///    `t < d` sets `x[a], x[b] = x[b], x[a] + x[b]`.
    /// 5. Barrier; each thread writes its two exclusive prefixes (plus its own element for an
    ///    inclusive scan) to `output`.
    ///
    /// ```text
    ///  x:          3  1  7  0  4  1  6  3
    ///  up-sweep:   3  4  7 11  4  5  6 25     (b += a, offsets 1, 2, 4)
    ///  clear root: 3  4  7 11  4  5  6  0
    ///  down-sweep: 0  3  4 11 11 15 16 22     (a, b = b, a + b, offsets 4, 2, 1)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / 1024)`, block 512 (`BLELLOCH_BLOCK`), 4.1 KiB static shared memory
    /// ([`BLELLOCH_BLOCK_SHARED_BYTES`])
    /// (1024 + 31 words). May run **in place** (`input == output`, for the block-sums levels):
    /// each element is read and written by the same thread, its read before its write.
    ///
    /// # Preconditions
    /// `input` and `output` hold `n ≥ 1` elements, `sums` holds `gridDim.x`; `exclusive` is 0
    /// (inclusive scan) or 1 (exclusive).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `sums` overlaps neither tile
    /// array. Every thread reaches every barrier (threads past `n` carry zeros).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit c4185d4); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 19.81 µs | 403.9 | 0.49 |
    /// | 100,000,000 | 1118.2 µs | 715.4 | 0.30 |
    /// | 268,435,456 | 2971.9 µs | 722.6 | 0.29 |
    pub unsafe fn blelloch_block(input: *const i32, output: *mut i32, sums: *mut i32, n: u32, exclusive: u32) {
        let temp = static_shared!(BLELLOCH_TEMP: [i32; padded_len(BLELLOCH_TILE as usize)]);
        let tid = thread_idx_x() as usize;
        let half = BLELLOCH_BLOCK as usize;
        let tile = BLELLOCH_TILE as usize;
        let base = block_idx_x() as usize * tile;
        let n = n as usize;
        let (ai, bi) = (tid, tid + half);
        let load = |i: usize| if base + i < n {
            // SAFETY: base + i < n.
            unsafe { *input.add(base + i) }
        } else {
            0
        };
        let (xa, xb) = (load(ai), load(bi));
        // SAFETY: indices are padded(i) for i < 1024, below padded_len(1024) (the same holds for
        // every shared access below); the barriers order every write before the reads of it,
        // and within one level the pairs (a, b) of different threads are disjoint.
        unsafe {
            temp.write(padded(ai), xa);
            temp.write(padded(bi), xb);
        }

        // Up-sweep (reduce): build the sums tree in place.
        let mut offset = 1usize;
        let mut d = half;
        while d > 0 {
            sync_threads();
            if tid < d {
                let (a, b) = blelloch_pair(tid, offset);
                let (a, b) = (padded(a), padded(b));
                // SAFETY: a < b < padded_len; no other thread touches a or b at this level.
                unsafe { temp.write(b, temp.read(b).wrapping_add(temp.read(a))) };
            }
            offset *= 2;
            d /= 2;
        }

        // The root holds the tile's total: publish it, and clear it for the down-sweep.
        if tid == 0 {
            let root = padded(tile - 1);
            // SAFETY: sums holds gridDim.x elements; the root is in bounds and, between the
            // up-sweep's last barrier and the down-sweep's first, only thread 0 touches it.
            unsafe {
                *sums.add(block_idx_x() as usize) = temp.read(root);
                temp.write(root, 0);
            }
        }

        // Down-sweep: each node hands its prefix to its left child, prefix + left to its right.
        let mut d = 1usize;
        while d < tile {
            offset /= 2;
            sync_threads();
            if tid < d {
                let (a, b) = blelloch_pair(tid, offset);
                let (a, b) = (padded(a), padded(b));
                // SAFETY: as in the up-sweep: in bounds, and the pairs of a level are disjoint.
                unsafe {
                    let t = temp.read(a);
                    temp.write(a, temp.read(b));
                    temp.write(b, temp.read(b).wrapping_add(t));
                }
            }
            d *= 2;
        }
        sync_threads();

        let inclusive = exclusive == 0;
        // SAFETY: in bounds; the last barrier ordered the down-sweep's writes before these reads.
        let (ea, eb) = unsafe { (temp.read(padded(ai)), temp.read(padded(bi))) };
        if base + ai < n {
            // SAFETY: base + ai < n; element base + ai is this thread's alone.
            unsafe { *output.add(base + ai) = if inclusive { ea.wrapping_add(xa) } else { ea } };
        }
        if base + bi < n {
            // SAFETY: as above.
            unsafe { *output.add(base + bi) = if inclusive { eb.wrapping_add(xb) } else { eb } };
        }
    }
}

kernel! {
    /// Adds each tile's offset (the exclusive scan of the tile totals) to the tile's scan:
    /// the last step of reduce-then-scan.
    ///
    /// # Concept
    /// **Reduce-then-scan across blocks.** Blocks cannot wait for each other inside one
    /// launch (nothing guarantees that an earlier block is even running), so the scan of a
    /// long array takes several launches: scan the tiles independently (`blelloch_block`,
    /// which also writes each tile's total), scan the totals (the same kernel, recursively,
    /// until one tile holds them), then add each tile's offset. The element data crosses
    /// memory twice for reading and twice for writing — what `lookback` avoids.
    ///
    /// # Previous problem → fix
    /// `blelloch_block` scans each tile as if it were the whole array; this adds the sum of all
    /// earlier tiles to every element of tile `b`.
    ///
    /// # Execution
    /// 1. Thread `t` of block `b` reads `offsets[b]` (the exclusive scan of the tile totals).
    /// 2. It adds it to elements `t` and `t + 512` of tile `b`, where they exist.
    ///
    /// # Launch
    /// Grid `ceil(n / 1024)` (the tiles of the level being fixed up), block 512, no shared
    /// memory.
    ///
    /// # Preconditions
    /// `data` holds `n ≥ 1` elements and `offsets` holds `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths and do not overlap. No barrier.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit c4185d4); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 19.81 µs | 403.9 | 0.49 |
    /// | 100,000,000 | 1118.2 µs | 715.4 | 0.30 |
    /// | 268,435,456 | 2971.9 µs | 722.6 | 0.29 |
    pub unsafe fn blelloch_add(data: *mut i32, offsets: *const i32, n: u32) {
        let b = block_idx_x() as usize;
        let tid = thread_idx_x() as usize;
        let base = b * BLELLOCH_TILE as usize;
        // SAFETY: offsets holds gridDim.x elements.
        let offset = unsafe { *offsets.add(b) };
        for i in [base + tid, base + tid + BLELLOCH_BLOCK as usize] {
            if i < n as usize {
                // SAFETY: i < n; element i belongs to this thread alone.
                unsafe { *data.add(i) = (*data.add(i)).wrapping_add(offset) };
            }
        }
    }
}
