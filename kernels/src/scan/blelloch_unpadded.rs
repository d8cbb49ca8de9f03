use super::blelloch::{BLELLOCH_BLOCK, BLELLOCH_LEAVES, BLELLOCH_TILE, load_leaf, store_leaf};
use super::index::{blelloch_pair, leaf_scan, leaf_sum};
use crate::device::global::{Global, GlobalMut};
use crate::device::shared::Shared;
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::{kernel, static_shared};

/// Static shared memory of [`blelloch_unpadded_block`] and [`blelloch_unpadded_reduce`] per
/// block: the tree of 1024 leaf sums, one word per node, no padding (4096 bytes).
pub const BLELLOCH_UNPADDED_SHARED_BYTES: u32 = BLELLOCH_LEAVES * core::mem::size_of::<i32>() as u32;

/// Up-sweep over the 1024 leaf sums in the plain tree `temp` (node `i` at word `i`): for
/// `d = 512, 256, …, 1` with `offset = 1, 2, …, 512`, a barrier, then thread `t < d` adds
/// node `a = offset(2t+1)-1` into node `b = offset(2t+2)-1`. Returns the final `offset`.
///
/// # Safety
/// `temp` holds 1024 words with the leaf sums, and every thread of the block calls this.
#[inline(always)]
unsafe fn up_sweep(temp: Shared<i32>, tid: usize) -> usize {
    let mut offset = 1usize;
    let mut d = BLELLOCH_BLOCK as usize;
    while d > 0 {
        sync_threads();
        if tid < d {
            let (a, b) = blelloch_pair(tid, offset);
            // SAFETY: a < b <= 1023; the barrier ordered the previous level's writes before
            // these reads, and the pairs of one level are disjoint.
            unsafe { temp.write(b, temp.read(b).wrapping_add(temp.read(a))) };
        }
        offset *= 2;
        d /= 2;
    }
    offset
}

/// Down-sweep over the plain tree `temp` whose root holds the prefix to hand down: for
/// `d = 1, 2, …, 512` with `offset = 512, …, 1`, a barrier, then thread `t < d` sets
/// `x[a], x[b] = x[b], x[a] + x[b]`; a last barrier.
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
    /// Work-efficient scan of one 4096-element tile, the tree stored one word per node with
    /// no padding (Blelloch 1990; GPU Gems 3 ch. 39 before its bank-conflict fix): `blelloch`
    /// without `CONFLICT_FREE_OFFSET`, kept to show what the padding buys.
    ///
    /// # Concept
    /// **Shared-memory bank conflicts.** Shared memory is 32 banks of 4-byte words: word `w`
    /// is in bank `w % 32`, and a warp's access is served in one pass (one *wavefront*) only
    /// when its lanes touch distinct banks (or the same word). Level `offset` of the tree has
    /// lane `t` touch nodes `offset(2t+1)-1` and `offset(2t+2)-1`: words `2 * offset` apart, so
    /// `2 * offset` lanes share a bank — 2-way at offset 1, 32-way from offset 16 on. The
    /// hardware serialises such an access into as many wavefronts as the most-shared bank has
    /// distinct words. The emulator counts them (`reduce --op scan --variant
    /// blelloch_unpadded --metrics`, `shared_ld_bank_conflicts`); `reduce trace` draws them.
    ///
    /// # Previous problem → fix
    /// `bit` does `O(n log n)` work: every query re-reads tree nodes that other queries also
    /// read. The up-sweep/down-sweep computes each node's prefix once and passes it down:
    /// `O(n)` work. What this version leaves is its shared memory's bank conflicts: the deep
    /// levels of both sweeps are up-to-32-way conflicts (`index::tests::
    /// padding_removes_the_bank_conflicts_of_the_tree` counts them; ncu on the H100 counts
    /// 255,917 extra load wavefronts at 2^20). `blelloch` removes them with one padding word per
    /// 32 nodes; `diff blelloch_unpadded.rs blelloch.rs` is the fix. **The counter is not the
    /// clock**: on the H100 this version is not slower (# Measured): with 4-element leaves the
    /// tree is a small part of the work, and LLVM unrolls these plain sweeps fully (21
    /// barriers inline in the PTX, against the padded version's two loops), so the GPU runs
    /// 1.53 M instructions at 2^20 against the padded kernels' 2.75 M
    /// (`docs/measurements/2026-11-25-h100/counters/scan_2e20.csv`).
    ///
    /// # Execution
    /// As `blelloch_block`, with node `i` at word `i`:
    /// 1. Thread `t` loads leaves `t` and `t + 512` of the tile (4 elements each, one 128-bit
    ///    load, 0 past `n`) and stores their sums at words `t` and `t + 512`.
    /// 2. Up-sweep (`up_sweep`): for `d = 512, …, 1` with `offset = 1, …, 512`: barrier;
    ///    thread `t < d` adds node `offset(2t+1)-1` into node `offset(2t+2)-1`.
    /// 3. Thread 0 replaces the root by the tile's offset (`offsets[blockIdx.x]`, or 0).
    /// 4. Down-sweep (`down_sweep`): for `d = 1, …, 512` with `offset = 512, …, 1`: barrier;
    ///    thread `t < d` sets `x[a], x[b] = x[b], x[a] + x[b]`; a last barrier.
    /// 5. Each thread writes its two leaves as the leaf's prefix plus a running sum.
    ///
    /// ```text
    ///  offset 16, warp 0: lane t reads word 32t+15 and 32t+31
    ///  bank:              15 15 15 … 15 (32 lanes)   → 32 wavefronts for one request
    ///  with padding:      word i + i/32 → banks 15, 16, 17, …   → 1 wavefront
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / 4096)`, block 512, 4 KiB static shared memory
    /// ([`BLELLOCH_UNPADDED_SHARED_BYTES`]). May run in place, as `blelloch_block`.
    ///
    /// # Preconditions
    /// As `blelloch_block`: `input` and `output` hold `n ≥ 1` elements, 16-byte aligned;
    /// `offsets` is null (then `gridDim.x` is 1) or holds `gridDim.x` elements, the exclusive
    /// scan of the tile totals; `exclusive` is 0 or 1.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths; `offsets` overlaps neither
    /// tile array. Every thread reaches every barrier (threads past `n` carry zeros).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, `scripts/gpu/padding.sh`: this scan and `blelloch` in interleaved rounds, each row the median of 20 timed runs, every output element checked (`docs/measurements/2026-11-25-h100/padding.csv`, commit c23f134); median over the rounds [min, max], and the per-round ratio:
    ///
    /// | n | kind | rounds | blelloch_unpadded | blelloch | unpadded / padded |
    /// |---|---|---|---|---|---|
    /// | 2^20 | inclusive | 5 | 14.72 µs [14.59 µs, 14.98 µs] | 15.30 µs [15.02 µs, 15.65 µs] | 0.967 [0.933, 0.987] |
    /// | 2^20 | exclusive | 5 | 14.70 µs [14.56 µs, 14.94 µs] | 15.28 µs [15.01 µs, 15.60 µs] | 0.965 [0.933, 0.989] |
    /// | 2^24 | inclusive | 4 | 94.86 µs [94.58 µs, 95.07 µs] | 94.52 µs [94.10 µs, 94.85 µs] | 1.005 [0.997, 1.007] |
    /// | 2^24 | exclusive | 4 | 94.03 µs [93.81 µs, 94.26 µs] | 93.15 µs [92.74 µs, 93.55 µs] | 1.009 [1.003, 1.016] |
    /// | 2^28 | inclusive | 3 | 1241.7 µs [1239.3 µs, 1242.8 µs] | 1267.9 µs [1265.3 µs, 1270.0 µs] | 0.979 [0.978, 0.980] |
    /// | 2^28 | exclusive | 3 | 1242.5 µs [1240.8 µs, 1242.8 µs] | 1267.9 µs [1266.8 µs, 1268.3 µs] | 0.980 [0.979, 0.980] |
    pub unsafe fn blelloch_unpadded_block(input: Global<i32>, output: GlobalMut<i32>, offsets: Global<i32>, n: u32, exclusive: u32) {
        let temp = static_shared!(BLELLOCH_UNPADDED_TEMP: [i32; BLELLOCH_LEAVES as usize]);
        let tid = thread_idx_x() as usize;
        let half = BLELLOCH_BLOCK as usize;
        let base = block_idx_x() as usize * BLELLOCH_TILE as usize;
        let n = n as usize;
        let (la, lb) = (tid, tid + half);
        // SAFETY: input holds n elements, aligned (preconditions); in place, each thread
        // reads only its own leaves, before it writes them.
        let (xa, xb) = unsafe { (load_leaf::<false>(input, base, la, n), load_leaf::<false>(input, base, lb, n)) };
        // SAFETY: la, lb < 1024 (the same holds for every shared access below); each thread
        // writes its own two nodes, read after a barrier.
        unsafe {
            temp.write(la, leaf_sum(xa));
            temp.write(lb, leaf_sum(xb));
        }
        // SAFETY: every thread of the block calls it; temp holds the leaf sums.
        let offset = unsafe { up_sweep(temp, tid) };

        if tid == 0 {
            let b = block_idx_x() as usize;
            // SAFETY: offsets, when not null, holds gridDim.x elements; only thread 0 touches
            // the root between the two sweeps, and it wrote the root last itself.
            unsafe {
                let seed = if offsets.is_null() { 0 } else { offsets.read(b) };
                temp.write(BLELLOCH_LEAVES as usize - 1, seed);
            }
        }
        // SAFETY: every thread calls it, after the up-sweep, with the root seeded.
        unsafe { down_sweep(temp, tid, offset) };

        let excl = exclusive != 0;
        // SAFETY: in bounds; the down-sweep's last barrier ordered its writes before these
        // reads; output holds n aligned elements, and these leaves are this thread's alone.
        unsafe {
            store_leaf(output, base, la, n, leaf_scan(temp.read(la), xa, excl));
            store_leaf(output, base, lb, n, leaf_scan(temp.read(lb), xb, excl));
        }
    }
}

kernel! {
    /// The tile totals, for reduce-then-scan: the up-sweep of `blelloch_unpadded_block` alone
    /// (no padding), writing each tile's total to `sums[blockIdx.x]`.
    ///
    /// # Concept
    /// **Bank conflicts in a reduction tree.** The up-sweep is a reduction whose partial sums
    /// stay in place: level `offset` reads words `2 * offset` apart, so its lanes pile into
    /// ever fewer banks. See `blelloch_unpadded_block`.
    ///
    /// # Previous problem → fix
    /// The first step of `bit` builds a Fenwick tree in `O(n log n)` work across launches;
    /// this up-sweep builds the tile's totals in `O(n)`, with the up-to-32-way conflicts that
    /// `blelloch_reduce`'s padding removes.
    ///
    /// # Execution
    /// 1. Thread `t` loads leaves `t` and `t + 512` of tile `blockIdx.x` (0 past `n`) and
    ///    stores their sums at words `t` and `t + 512`.
    /// 2. Up-sweep (`up_sweep`): 10 levels, a barrier before each.
    /// 3. Thread 0 writes the root, the tile's total, to `sums[blockIdx.x]`.
    ///
    /// # Launch
    /// Grid `ceil(n / 4096)`, block 512, 4 KiB static shared memory
    /// ([`BLELLOCH_UNPADDED_SHARED_BYTES`]).
    ///
    /// # Preconditions
    /// `input` holds `n ≥ 1` elements and is 16-byte aligned; `sums` holds `gridDim.x`.
    ///
    /// # Safety
    /// The pointers are valid device memory of those lengths and do not overlap; nobody
    /// writes `input` during the launch (it is read through the non-coherent path). Every
    /// thread reaches every barrier.
    ///
    /// # Measured
    /// Timed together with `blelloch_unpadded_block` (a scan launches both): see its table.
    pub unsafe fn blelloch_unpadded_reduce(input: Global<i32>, sums: GlobalMut<i32>, n: u32) {
        let temp = static_shared!(BLELLOCH_UNPADDED_UP: [i32; BLELLOCH_LEAVES as usize]);
        let tid = thread_idx_x() as usize;
        let base = block_idx_x() as usize * BLELLOCH_TILE as usize;
        let n = n as usize;
        let (la, lb) = (tid, tid + BLELLOCH_BLOCK as usize);
        // SAFETY: input holds n aligned elements that nobody writes during the launch.
        let (xa, xb) = unsafe { (load_leaf::<true>(input, base, la, n), load_leaf::<true>(input, base, lb, n)) };
        // SAFETY: la, lb < 1024; each thread writes its own two nodes.
        unsafe {
            temp.write(la, leaf_sum(xa));
            temp.write(lb, leaf_sum(xb));
        }
        // SAFETY: every thread of the block calls it; temp holds the leaf sums.
        unsafe { up_sweep(temp, tid) };
        if tid == 0 {
            // SAFETY: sums holds gridDim.x elements; thread 0 wrote the root last itself.
            unsafe { sums.write(block_idx_x() as usize, temp.read(BLELLOCH_LEAVES as usize - 1)) };
        }
    }
}
