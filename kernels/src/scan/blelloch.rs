use super::index::{blelloch_pair, leaf_scan, leaf_sum, padded, padded_len};
use super::lookback::{load_chunk_guarded, store_chunk_guarded};
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::{kernel, static_shared};

/// Threads per block of the Blelloch kernels; each thread owns two leaves of the tree.
pub const BLELLOCH_BLOCK: u32 = 512;
/// Elements per leaf of the tree: four consecutive elements, one 128-bit load, summed (and
/// later scanned) serially in registers by the thread that owns the leaf.
pub const BLELLOCH_LEAF: u32 = 4;
/// Leaves per tile, the size of the shared-memory tree: `2 * BLELLOCH_BLOCK` (1024).
pub const BLELLOCH_LEAVES: u32 = 2 * BLELLOCH_BLOCK;
/// Elements per tile (one block's share): `BLELLOCH_LEAVES * BLELLOCH_LEAF` (4096).
pub const BLELLOCH_TILE: u32 = BLELLOCH_LEAVES * BLELLOCH_LEAF;
/// Static shared memory of [`blelloch_block`] and of [`blelloch_reduce`] per block: the
/// tree of 1024 leaf sums padded against bank conflicts (`index::padded_len`: 1055 `i32`,
/// 4220 bytes), in an array that `static_shared!` aligns to 16 bytes, so the block takes 4224.
pub const BLELLOCH_BLOCK_SHARED_BYTES: u32 =
    (padded_len(BLELLOCH_LEAVES as usize) * core::mem::size_of::<i32>()).next_multiple_of(16) as u32;
/// Static shared memory of [`blelloch_reduce`] per block: the same padded tree.
pub const BLELLOCH_REDUCE_SHARED_BYTES: u32 = BLELLOCH_BLOCK_SHARED_BYTES;

/// Leaf `leaf` of the tile starting at element `base`: its 4 elements (zeros past `n`), with
/// one 128-bit load where the leaf is whole. `NC` loads through the read-only path (for an
/// input nobody writes during the launch).
///
/// # Safety
/// `input` holds `n` elements and is 16-byte aligned (`base` is a multiple of the tile).
#[inline(always)]
pub(super) unsafe fn load_leaf<const NC: bool>(input: Global<i32>, base: usize, leaf: usize, n: usize) -> [i32; 4] {
    let p = base + leaf * BLELLOCH_LEAF as usize;
    if p + 4 <= n {
        // SAFETY: p + 3 < n; p is a multiple of 4 from an aligned start; if NC, nobody writes
        // the input during the launch (the caller's promise).
        unsafe { if NC { input.load_v4_nc(p) } else { input.load_v4(p) } }
    } else {
        // SAFETY: input holds n elements.
        unsafe { load_chunk_guarded(input, p, n) }
    }
}

/// Writes the 4 outputs `out` of leaf `leaf` of the tile at `base` (those below `n`), with
/// one 128-bit store where the leaf is whole.
///
/// # Safety
/// `output` holds `n` elements and is 16-byte aligned; nobody else accesses the leaf meanwhile.
#[inline(always)]
pub(super) unsafe fn store_leaf(output: GlobalMut<i32>, base: usize, leaf: usize, n: usize, out: [i32; 4]) {
    let p = base + leaf * BLELLOCH_LEAF as usize;
    if p + 4 <= n {
        // SAFETY: p + 3 < n, 16-byte aligned; these elements are the caller's alone.
        unsafe { output.store_v4(p, out) };
    } else {
        // SAFETY: output holds n elements; these elements are the caller's alone.
        unsafe { store_chunk_guarded(output, p, n, out) };
    }
}

/// Up-sweep (reduce) over the 1024 leaf sums in the padded tree `temp`: for
/// `d = 512, 256, …, 1` with `offset = 1, 2, …, 512`, a barrier, then thread `t < d` adds
/// node `a = offset(2t+1)-1` into node `b = offset(2t+2)-1`. Leaves the tile's total in the
/// root (`padded(1023)`), written last by thread 0. Returns the final `offset` (1024).
///
/// # Safety
/// `temp` holds `padded_len(1024)` words with the leaf sums at `padded(leaf)`, and every thread
/// of the block calls this (it contains barriers).
#[inline(always)]
unsafe fn up_sweep(temp: Shared<i32>, tid: usize) -> usize {
    let mut offset = 1usize;
    let mut d = BLELLOCH_BLOCK as usize;
    while d > 0 {
        sync_threads();
        if tid < d {
            let (a, b) = blelloch_pair(tid, offset);
            let (a, b) = (padded(a), padded(b));
            // SAFETY: a < b <= padded(1023) < padded_len; the barrier ordered the previous
            // level's writes before these reads, and the pairs of one level are disjoint.
            unsafe { temp.write(b, temp.read(b).wrapping_add(temp.read(a))) };
        }
        offset *= 2;
        d /= 2;
    }
    offset
}

/// Down-sweep over the padded tree `temp` whose root holds the prefix to hand down: for
/// `d = 1, 2, …, 512` with `offset = 512, …, 1`, a barrier, then thread `t < d` sets
/// `x[a], x[b] = x[b], x[a] + x[b]`. Ends with a barrier: every leaf then holds the sum of the
/// root's value and of every leaf before it, readable by any thread.
///
/// # Safety
/// As for [`up_sweep`], after it, with the root set by one thread before the call.
#[inline(always)]
unsafe fn down_sweep(temp: Shared<i32>, tid: usize, mut offset: usize) {
    let mut d = 1usize;
    while d < BLELLOCH_LEAVES as usize {
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
}

kernel! {
    /// Work-efficient scan of one 4096-element tile (Blelloch 1990, as in GPU Gems 3
    /// ch. 39): each thread sums its two 4-element leaves in registers, the block runs the
    /// up-sweep, seeds the root with the tile's offset and runs the down-sweep over the
    /// 1024 leaf sums in bank-conflict-free padded shared memory, and each thread finishes
    /// its leaves serially. The second step of reduce-then-scan: `blelloch_reduce` wrote
    /// every tile's total, the host scanned the totals (with this same kernel, recursively)
    /// into `offsets`, and this launch writes the final scan.
    ///
    /// # Concept
    /// **Work efficiency, and shared-memory banks.** The up-sweep builds partial sums up a
    /// balanced tree (`n - 1` additions); clearing the root and sweeping back down — each node
    /// passes its prefix to its left child and `prefix + left sum` to its right child — hands
    /// every leaf its exclusive prefix in another `n - 1` additions: `O(n)` work, like the
    /// sequential scan. Put a value other than 0 in the root and the down-sweep adds it to
    /// every prefix: the tile's offset enters for free. Shared memory is 32 banks of 4-byte
    /// words (word `w` is in bank `w % 32`); when two lanes of a warp touch different words
    /// of one bank, the accesses are serialised. The tree's accesses are `2 * offset` words
    /// apart, so from offset 16 on every lane of a warp hits the same bank: a 32-way
    /// conflict. Inserting one padding word per 32 (`CONFLICT_FREE_OFFSET(i) = i >>
    /// LOG_NUM_BANKS`, node `i` at word `i + (i >> 5)`) shifts each group of 32 by one bank,
    /// spreading those accesses over distinct banks:
    /// `index::tests::padding_removes_the_bank_conflicts_of_the_tree` counts, for every level
    /// and warp of the 1024-node tree, up to 32-way conflicts without the padding and none
    /// with it. **Leaves of several elements** (Brent's theorem, as in every fast scan): a
    /// thread scans a few consecutive elements sequentially — `O(1)` work each, no barrier —
    /// and only the per-leaf sums go through the tree.
    ///
    /// # Previous problem → fix
    /// `bit` does `O(n log n)` work: every query re-reads tree nodes that other queries also
    /// read. The down-sweep computes each node's prefix once and passes it down: `O(n)`.
    /// Without the padding, the same tree in shared memory spends most of its deep levels in
    /// bank conflicts; the padding costs 32 extra words per tile. The first version of this
    /// kernel had one element per leaf (1024-element tiles, 2 elements per thread): 21
    /// barriers per 1024 elements, and at 2^28 262,144 blocks that spend their life waiting
    /// at barriers (about 4 blocks of 512 threads fit an SM), then a separate
    /// `blelloch_add` pass re-read and re-wrote the whole output to add the tile offsets
    /// (4 words of traffic per element). Now a leaf is 4 elements loaded with one 128-bit
    /// load: the same tree covers 4096 elements (4× fewer barriers and blocks per element),
    /// and the offset is the root's seed, so the data crosses memory 3 times (`blelloch_reduce`
    /// reads it, this kernel reads and writes it) instead of 4.
    ///
    /// # Execution
    /// Thread `t` owns leaves `t` and `t + 512` of the tile, elements `4t .. 4t + 4` and
    /// `2048 + 4t .. 2048 + 4t + 4` (a warp's 128-bit loads cover 512 contiguous bytes).
    /// 1. Load both leaves (0 past `n`) and store their sums at `padded(t)`,
    ///    `padded(t + 512)` of the shared tree.
    /// 2. Up-sweep (`up_sweep`): for `d = 512, 256, …, 1` with `offset = 1, 2, …, 512`:
    ///    barrier; thread `t < d` adds node `a = offset(2t+1)-1` into node `b = offset(2t+2)-1`.
    /// 3. Thread 0 replaces the root (the tile's total) by the tile's offset:
    ///    `offsets[blockIdx.x]`, or 0 when `offsets` is null (a single tile, the top level).
    /// 4. Down-sweep (`down_sweep`): for `d = 1, 2, …, 512` with `offset = 512, …, 1`:
    ///    barrier; thread `t < d` sets `x[a], x[b] = x[b], x[a] + x[b]`; a last barrier.
    /// 5. Each thread reads its two leaf prefixes and writes each leaf's 4 outputs as the
    ///    prefix plus a serial running sum (`index::leaf_scan`, inclusive or exclusive), one
    ///    128-bit store per leaf.
    ///
    /// ```text
    ///  elements:   3 1 7 0 | 4 1 6 3 | …      leaves of 4, summed in registers
    ///  leaf sums:  11      | 14      | 5  | 9   (tree of 4 leaves here, 1024 in a tile)
    ///  up-sweep:   11  25  5  39               (b += a, offsets 1, 2)
    ///  root := offset of the tile (say 100)
    ///  down-sweep: 100 111 125 130             (a, b = b, a + b, offsets 2, 1)
    ///  leaf 1, exclusive: 111 115 116 122     (prefix + running sum of 4 1 6 3)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / 4096)`, block 512 (`BLELLOCH_BLOCK`), 4.1 KiB static shared memory
    /// ([`BLELLOCH_BLOCK_SHARED_BYTES`]) (1024 + 31 words). 21 barriers per 4096 elements.
    /// May run **in place** (`input == output`, for the block-sums levels): each element is
    /// read and written by the same thread, its read before its write.
    ///
    /// # Preconditions
    /// `input` and `output` hold `n ≥ 1` elements and are 16-byte aligned; `offsets` is
    /// null (then `gridDim.x` is 1) or holds `gridDim.x` elements, the exclusive scan of the
    /// tile totals; `exclusive` is 0 (inclusive scan) or 1 (exclusive).
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `offsets` overlaps neither
    /// tile array. Every thread reaches every barrier (threads past `n` carry zeros).
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-25-h100/scans.csv`, commit e032fa9); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 15.20 µs | 526.3 | 0.65 |
    /// | 100,000,000 | 493.5 µs | 1621.0 | 0.67 |
    /// | 268,435,456 | 1275.6 µs | 1683.6 | 0.69 |
    pub unsafe fn blelloch_block(input: Global<i32>, output: GlobalMut<i32>, offsets: Global<i32>, n: u32, exclusive: u32) {
        let temp = static_shared!(BLELLOCH_TEMP: [i32; padded_len(BLELLOCH_LEAVES as usize)]);
        let tid = thread_idx_x() as usize;
        let half = BLELLOCH_BLOCK as usize;
        let base = block_idx_x() as usize * BLELLOCH_TILE as usize;
        let n = n as usize;
        let (la, lb) = (tid, tid + half);
        // SAFETY: input holds n elements, aligned (preconditions); in place, each thread
        // reads only its own leaves, before it writes them.
        let (xa, xb) = unsafe { (load_leaf::<false>(input, base, la, n), load_leaf::<false>(input, base, lb, n)) };
        // SAFETY: padded(leaf) < padded_len(1024) for both leaves (the same holds for every
        // shared access below); each thread writes its own two nodes, read after a barrier.
        unsafe {
            temp.write(padded(la), leaf_sum(xa));
            temp.write(padded(lb), leaf_sum(xb));
        }
        // SAFETY: every thread of the block calls it; temp holds the leaf sums.
        let offset = unsafe { up_sweep(temp, tid) };

        // The root holds the tile's total: replace it by the tile's offset, which the
        // down-sweep then adds to every leaf's prefix.
        if tid == 0 {
            let b = block_idx_x() as usize;
            // SAFETY: offsets, when not null, holds gridDim.x elements; between the up-sweep's
            // last barrier and the down-sweep's first only thread 0 touches the root (and it
            // wrote the root last itself).
            unsafe {
                let seed = if offsets.is_null() { 0 } else { offsets.read(b) };
                temp.write(padded(BLELLOCH_LEAVES as usize - 1), seed);
            }
        }
        // SAFETY: every thread calls it, after the up-sweep, with the root seeded.
        unsafe { down_sweep(temp, tid, offset) };

        let excl = exclusive != 0;
        // SAFETY: in bounds; the down-sweep's last barrier ordered its writes before these
        // reads; output holds n aligned elements, and these leaves are this thread's alone.
        unsafe {
            store_leaf(output, base, la, n, leaf_scan(temp.read(padded(la)), xa, excl));
            store_leaf(output, base, lb, n, leaf_scan(temp.read(padded(lb)), xb, excl));
        }
    }
}

kernel! {
    /// The tile totals, for reduce-then-scan: the up-sweep of `blelloch_block` alone, over the
    /// same 4096-element tiles (4-element leaves, 1024-leaf padded tree), writing each tile's
    /// total to `sums[blockIdx.x]`. The first step of the scan across blocks.
    ///
    /// # Concept
    /// **Reduce-then-scan across blocks.** Blocks cannot wait for each other inside one
    /// launch (nothing guarantees that an earlier block is even running), so the scan of a
    /// long array takes several launches: reduce every tile to its total (this kernel), scan
    /// the totals (`blelloch_block`, recursively, until one tile holds them), then scan every
    /// tile with its offset as the root of the down-sweep (`blelloch_block`). The up-sweep
    /// *is* a reduction: its root is the tile's sum. The element data crosses memory 3 times
    /// (read here, read and written by the scan) — what `lookback` cuts to 2.
    ///
    /// # Previous problem → fix
    /// The first version scanned every tile first and fixed it up afterwards: `blelloch_block`
    /// wrote the tile's scan and its total, and a `blelloch_add` pass re-read and re-wrote
    /// every element to add the tile's offset — 2 reads and 2 writes per element. Reducing
    /// first (one read, no write) lets the scan start every tile from its final offset: one
    /// write per element fewer. Each thread loads its two 4-element leaves with 128-bit loads
    /// through the read-only path and sums them in registers, so the tree (10 barriers)
    /// covers 4096 elements.
    ///
    /// # Execution
    /// 1. Thread `t` loads leaves `t` and `t + 512` of tile `blockIdx.x` (0 past `n`) and
    ///    stores their sums at `padded(t)`, `padded(t + 512)`.
    /// 2. Up-sweep (`up_sweep`, as in `blelloch_block`): 10 levels, a barrier before each.
    /// 3. Thread 0 writes the root, the tile's total, to `sums[blockIdx.x]`.
    ///
    /// # Launch
    /// Grid `ceil(n / 4096)`, block 512, 4.1 KiB static shared memory
    /// ([`BLELLOCH_REDUCE_SHARED_BYTES`]).
    ///
    /// # Preconditions
    /// `input` holds `n ≥ 1` elements and is 16-byte aligned; `sums` holds `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths and do not overlap; nobody
    /// writes `input` during the launch (it is read through the non-coherent path). Every
    /// thread reaches every barrier.
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit dd72e83); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 14.99 µs | 533.6 | 0.64 |
    /// | 100,000,000 | 488.4 µs | 1638.1 | 0.68 |
    /// | 268,435,456 | 1265.8 µs | 1696.6 | 0.69 |
    pub unsafe fn blelloch_reduce(input: Global<i32>, sums: GlobalMut<i32>, n: u32) {
        let temp = static_shared!(BLELLOCH_UP: [i32; padded_len(BLELLOCH_LEAVES as usize)]);
        let tid = thread_idx_x() as usize;
        let base = block_idx_x() as usize * BLELLOCH_TILE as usize;
        let n = n as usize;
        let (la, lb) = (tid, tid + BLELLOCH_BLOCK as usize);
        // SAFETY: input holds n aligned elements that nobody writes during the launch.
        let (xa, xb) = unsafe { (load_leaf::<true>(input, base, la, n), load_leaf::<true>(input, base, lb, n)) };
        // SAFETY: padded(leaf) < padded_len(1024); each thread writes its own two nodes.
        unsafe {
            temp.write(padded(la), leaf_sum(xa));
            temp.write(padded(lb), leaf_sum(xb));
        }
        // SAFETY: every thread of the block calls it; temp holds the leaf sums.
        unsafe { up_sweep(temp, tid) };
        if tid == 0 {
            // SAFETY: sums holds gridDim.x elements; thread 0 wrote the root last itself.
            unsafe { sums.write(block_idx_x() as usize, temp.read(padded(BLELLOCH_LEAVES as usize - 1)))};
        }
    }
}
