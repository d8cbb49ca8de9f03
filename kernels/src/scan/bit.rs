use super::index::lowbit;
use crate::device::thread::{block_idx_x, global_idx_x, sync_threads, thread_idx_x};
use crate::{kernel, static_shared};

/// Threads per block of `bit_build` (the seed's 512): one launch completes the tree nodes of
/// `log2(512) = 9` levels.
pub const BIT_BLOCK: u32 = 512;
/// Static shared memory of [`bit_build`] per block: one `i32` node per thread, 2048 bytes.
pub const BIT_BUILD_SHARED_BYTES: u32 = BIT_BLOCK * core::mem::size_of::<i32>() as u32;

kernel! {
    /// Builds one band of levels of a Fenwick tree (binary indexed tree, BIT) of prefix sums:
    /// the seed's `gen_bit_in_one_block`. Launched repeatedly with a growing `stride`
    /// (1, 512, 512², …) until the tree of `n` elements is complete; then `bit_query` answers
    /// every prefix from the tree.
    ///
    /// # Concept
    /// **A Fenwick tree as a parallel prefix structure.** In a 1-indexed Fenwick tree, node `i`
    /// holds the sum of the `lowbit(i)` elements ending at `i` (`lowbit(i) = i & -i`): node 6
    /// holds `a5 + a6`, node 8 holds `a1 + … + a8`. Any prefix `a1 + … + ai` is then the sum
    /// of the nodes met by clearing the lowest set bit of `i` until it is 0 — at most
    /// `log2(i)` of them. Building the tree is the up-sweep of a reduction tree (node `i` adds
    /// node `i - lowbit(i)/2` at level `lowbit(i)`), done in place: `n - 1` additions.
    ///
    /// # Previous problem → fix
    /// A sequential scan is `n` dependent additions: no parallelism. The BIT exposes
    /// parallelism twice: the build is a tree (each level's additions are independent), and
    /// each element's query is independent of every other's. The price comes in `bit_query`:
    /// `n` queries of up to `log2 n` reads each is **O(n log n) work**, against the `O(n)` of
    /// a sequential scan — every element re-adds tree nodes that its neighbours also add
    /// (prefixes 5, 6 and 7 all read node 4). `blelloch` fixes that with a down-sweep that
    /// hands each node's prefix to its children once: `O(n)` work.
    ///
    /// # Execution
    /// Thread `j` of the grid owns tree position `p = (j + 1) * stride - 1` (0-indexed), the
    /// `j + 1`-th node of the level band this launch builds; the nodes of a launch at
    /// `stride` already hold the sums of `stride` elements (the previous launches built them).
    /// 1. Each thread loads its node into shared memory (`src[p]`, or 0 past the end).
    /// 2. For `d = 1, 2, 4, …, 256`: thread `t` with `(t + 1) % 2d == 0` adds node `t - d`;
    ///    then the barrier. Node `t` of the block now holds the sum of `lowbit(t + 1)` nodes.
    /// 3. Each thread writes its node to `tree[p]`.
    ///
    /// ```text
    ///  stride 1, one block of 8:   a1 a2 a3 a4 a5 a6 a7 a8
    ///  d = 1 (t = 1, 3, 5, 7)         +=    +=    +=    +=     node 2 = a1+a2, 4 = a3+a4, …
    ///  d = 2 (t = 3, 7)                     +=          +=     node 4 = a1..a4, 8 = a5..a8
    ///  d = 4 (t = 7)                                    +=     node 8 = a1..a8
    ///  next launch: stride 8, node k of it = position 8k - 1 (the sums of 8)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil((n / stride) / 512)`, block 512 (`BIT_BLOCK`), 2 KiB static shared memory
    /// ([`BIT_BUILD_SHARED_BYTES`]).
    /// The first launch has `stride = 1` and `src` = the input: it copies every element into
    /// `tree` as it builds; later launches have `src == tree` (in place). The next stride is
    /// `stride * 512` while `2 * stride * 512 <= n` (`index::bit_next_stride`).
    ///
    /// # Preconditions
    /// `src` and `tree` hold `n ≥ 1` elements; `stride` is 1 or a power of 512 with
    /// `stride <= n`; launches at smaller strides ran before on the same `tree`.
    ///
    /// # Safety
    /// The pointers are valid device memory of `n` elements; `src` is either `tree` itself or
    /// a buffer nobody writes during the launch. Every thread reaches every barrier (threads
    /// past the last node carry a 0 through the tree and write nothing).
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit c4185d4); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 24.51 µs | 326.4 | 0.40 |
    /// | 100,000,000 | 1636.0 µs | 489.0 | 0.20 |
    /// | 268,435,456 | 4532.2 µs | 473.8 | 0.19 |
    pub unsafe fn bit_build(src: *const i32, tree: *mut i32, n: u32, stride: u32) {
        let smem = static_shared!(BIT_NODES: [i32; BIT_BLOCK as usize]);
        let tid = thread_idx_x() as usize;
        let j = block_idx_x() as usize * BIT_BLOCK as usize + tid;
        // Position p = (j + 1) * stride - 1 exists when (j + 1) * stride <= n (no division:
        // `index::bit_positions` is the same count, for the host's grid).
        let end = (j + 1) * stride as usize;
        let live = stride != 0 && end <= n as usize;
        let p = end.wrapping_sub(1);

        // SAFETY: p < n when `live` (j + 1 <= n / stride); tid < BIT_BLOCK; each thread
        // writes only its own slot before the barrier.
        unsafe { smem.write(tid, if live { *src.add(p) } else { 0 }) };
        sync_threads();

        let mut d = 1usize;
        while d < BIT_BLOCK as usize {
            if (tid + 1).is_multiple_of(2 * d) {
                // SAFETY: tid >= 2d - 1 >= d, so tid - d is in bounds. Slot tid is written
                // by thread tid only; slot tid - d has (tid - d + 1) % 2d == d != 0, so no
                // thread writes it at this level.
                unsafe { smem.write(tid, smem.read(tid).wrapping_add(smem.read(tid - d))) };
            }
            sync_threads();
            d *= 2;
        }

        if live {
            // SAFETY: p < n; position p belongs to this thread alone in this launch.
            unsafe { *tree.add(p) = smem.read(tid) };
        }
    }
}

kernel! {
    /// Answers every prefix sum from a Fenwick tree built by `bit_build`: the seed's
    /// `calc_sum_using_bit`. Thread `i` computes `a1 + … + a(i+1)` (inclusive) or
    /// `a1 + … + ai` (exclusive) by walking the tree.
    ///
    /// # Concept
    /// **Independent queries: parallel, but not work-efficient.** Each thread answers its own
    /// prefix with no communication at all — no barrier, no shared memory — at the price of
    /// `popcount(i + 1)` (≤ `log2 n`) tree reads per element: `O(n log n)` work and as many
    /// scattered, mostly cached, global loads.
    ///
    /// # Previous problem → fix
    /// `bit_build` leaves only `lowbit(i)`-element partial sums; turning them into `n`
    /// prefixes is the query `sum(i) = tree[i] + sum(i - lowbit(i))`. The fix for the extra
    /// `log n` factor is `blelloch`'s down-sweep.
    ///
    /// # Execution
    /// 1. Thread `i` (global index; threads past `n` do nothing) sets `k = i + 1` (inclusive)
    ///    or `k = i` (exclusive).
    /// 2. While `k > 0`: add `tree[k - 1]` (1-indexed node `k`) and clear `k`'s lowest bit.
    /// 3. Write the sum to `output[i]`.
    ///
    /// ```text
    ///  prefix of 7 (binary 111): node 7 (a7) + node 6 (a5+a6) + node 4 (a1..a4)
    ///  prefix of 8 (binary 1000): node 8 (a1..a8) — one read
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / 512)`, block 512, no shared memory.
    ///
    /// # Preconditions
    /// `tree` holds the complete Fenwick tree of `n ≥ 1` elements; `output` holds `n`;
    /// `exclusive` is 0 (inclusive scan) or 1 (exclusive scan).
    ///
    /// # Safety
    /// The pointers are valid device memory of `n` elements, `output` does not overlap
    /// `tree`. No barrier: threads past `n` may return at once.
    ///
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit c4185d4); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 24.51 µs | 326.4 | 0.40 |
    /// | 100,000,000 | 1636.0 µs | 489.0 | 0.20 |
    /// | 268,435,456 | 4532.2 µs | 473.8 | 0.19 |
    pub unsafe fn bit_query(tree: *const i32, output: *mut i32, n: u32, exclusive: u32) {
        let i = global_idx_x();
        if i >= n as usize {
            return;
        }
        let mut k = i + 1 - (exclusive != 0) as usize;
        let mut sum = 0i32;
        while k > 0 {
            // SAFETY: 1 <= k <= i + 1 <= n, so k - 1 is in the tree.
            sum = sum.wrapping_add(unsafe { *tree.add(k - 1) });
            k -= lowbit(k);
        }
        // SAFETY: i < n.
        unsafe { *output.add(i) = sum };
    }
}
