use super::index::{fenwick_tile_walk, fenwick_walk, fenwick4};
use super::lookback::{load_chunk_guarded, store_chunk_guarded};
use crate::collective::warp::warp_sum_shfl;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::{kernel, static_shared};

/// Threads per block of `bit_build` and `bit_query` (the seed's 512).
pub const BIT_BLOCK: u32 = 512;
/// Consecutive tree nodes (or queries) per thread: 4, one 128-bit load or store.
pub const BIT_ITEMS: u32 = 4;
/// Tree positions per block, `BIT_BLOCK * BIT_ITEMS` (2048): one `bit_build` launch completes
/// the nodes of `log2(2048) = 11` levels, and a `bit_query` block answers 2048 prefixes.
pub const BIT_SPAN: u32 = BIT_BLOCK * BIT_ITEMS;
/// Static shared memory of [`bit_build`] per block: one `i32` node per thread (the sum of
/// its 4), 2048 bytes.
pub const BIT_BUILD_SHARED_BYTES: u32 = BIT_BLOCK * core::mem::size_of::<i32>() as u32;
/// Shared words of [`bit_query`] past the tile's nodes: the tile's two common prefixes,
/// padded to 16 bytes.
const QUERY_CTRL: usize = 4;
/// Static shared memory of [`bit_query`] per block: the tile's 2048 nodes and 4 control
/// words, 8208 bytes.
pub const BIT_QUERY_SHARED_BYTES: u32 = (BIT_SPAN as usize + QUERY_CTRL) as u32 * core::mem::size_of::<i32>() as u32;

/// The 4 tree positions of band nodes `j0 .. j0 + 4` at `stride` (position
/// `(j + 1) * stride - 1`, where `j < count`), read from `src` (0 where absent). At stride 1
/// they are consecutive: one 128-bit load where all 4 exist.
///
/// # Safety
/// `src` holds `n` elements, 16-byte aligned; `count = n / stride`.
#[inline(always)]
unsafe fn load_band(src: Global<i32>, j0: usize, stride: usize, count: usize, n: usize) -> [i32; 4] {
    if stride == 1 {
        if j0 + 4 <= n {
            // SAFETY: j0 + 3 < n; j0 is a multiple of 4 from an aligned start.
            return unsafe { src.load_v4(j0) };
        }
        // SAFETY: src holds n elements.
        return unsafe { load_chunk_guarded(src, j0, n) };
    }
    let at = |j: usize| {
        if j < count {
            // SAFETY: (j + 1) * stride - 1 < n whenever j < count = n / stride.
            unsafe { src.read((j + 1) * stride - 1) }
        } else {
            0
        }
    };
    [at(j0), at(j0 + 1), at(j0 + 2), at(j0 + 3)]
}

/// Writes the band nodes `j0 .. j0 + 4` that exist back to `tree` (see [`load_band`]).
///
/// # Safety
/// As for [`load_band`]; these positions are the caller's alone in this launch.
#[inline(always)]
unsafe fn store_band(tree: GlobalMut<i32>, j0: usize, stride: usize, count: usize, n: usize, v: [i32; 4]) {
    if stride == 1 {
        if j0 + 4 <= n {
            // SAFETY: j0 + 3 < n, aligned; the caller's elements.
            unsafe { tree.store_v4(j0, v) };
        } else {
            // SAFETY: tree holds n elements.
            unsafe { store_chunk_guarded(tree, j0, n, v) };
        }
        return;
    }
    for (r, &x) in v.iter().enumerate() {
        if j0 + r < count {
            // SAFETY: position (j + 1) * stride - 1 < n; the caller's alone.
            unsafe { tree.write((j0 + r + 1) * stride - 1, x) };
        }
    }
}

kernel! {
    /// Builds one band of levels of a Fenwick tree (binary indexed tree, BIT) of prefix sums:
    /// the seed's `gen_bit_in_one_block`, with 4 nodes per thread. Launched repeatedly with a
    /// growing `stride` (1, 2048, 2048², …) until the tree of `n` elements is complete; then
    /// `bit_query` answers every prefix from the tree.
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
    /// each element's query is independent of every other's. The price comes in `bit_query`
    /// (its doc counts the work). The first version of this kernel gave each thread one node:
    /// at stride 1 (all of the data) a block of 512 threads ran 10 barriers for 512
    /// elements, with 4-byte loads. Now the lowest two levels are built in registers
    /// (`index::fenwick4`: nodes `4u+2` and `4u+4` of a thread's 4 consecutive nodes) from
    /// one 128-bit load, and only each thread's sum of 4 goes through the shared-memory tree:
    /// 10 barriers per 2048 elements, 4× fewer, and 16 bytes per memory instruction.
    ///
    /// # Execution
    /// Thread `t` of block `b` owns the band nodes `j = 4(512b + t) .. + 4`, at tree positions
    /// `p = (j + 1) * stride - 1` (0-indexed); the nodes of a launch at `stride` already hold
    /// the sums of `stride` elements (the previous launches built them).
    /// 1. Each thread loads its 4 nodes (`src[p]`, or 0 past the end; at stride 1 one
    ///    128-bit load) and builds their two lowest levels in registers (`fenwick4`).
    /// 2. It puts its fourth node, the sum of its 4, in shared slot `t`; barrier.
    /// 3. For `d = 1, 2, 4, …, 256`: thread `t` with `(t + 1) % 2d == 0` adds slot `t - d`;
    ///    then the barrier. Slot `t` now holds the sum of `lowbit(t + 1)` sums of 4.
    /// 4. Each thread takes slot `t` back as its fourth node and writes its 4 nodes to
    ///    `tree` (at stride 1 one 128-bit store).
    ///
    /// ```text
    ///  stride 1, 2 threads:  a1 a2 a3 a4 | a5 a6 a7 a8
    ///  registers (fenwick4): a1 a1+a2 a3 a1..a4 | a5 a5+a6 a7 a5..a8
    ///  shared, d = 1 (t = 1):               slot 1 += slot 0: node 8 = a1..a8
    ///  next launch: stride 2048, band node k = position 2048k - 1 (the sums of 2048)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil((n / stride) / 2048)`, block 512 (`BIT_BLOCK`), 2 KiB static shared memory
    /// ([`BIT_BUILD_SHARED_BYTES`]).
    /// The first launch has `stride = 1` and `src` = the input: it copies every element into
    /// `tree` as it builds; later launches have `src == tree` (in place). The next stride is
    /// `stride * 2048` while `2 * stride * 2048 <= n` (`index::bit_next_stride`).
    ///
    /// # Preconditions
    /// `src` and `tree` hold `n ≥ 1` elements and are 16-byte aligned; `stride` is 1 or a
    /// power of 2048 with `stride <= n`; launches at smaller strides ran before on the same
    /// `tree`.
    ///
    /// # Safety
    /// The pointers are valid device memory of `n` elements; `src` is either `tree` itself or
    /// a buffer nobody writes during the launch. Every thread reaches every barrier (threads
    /// past the last node carry zeros through the tree and write nothing).
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-25-h100/scans.csv`, commit e032fa9); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 13.28 µs | 602.4 | 0.74 |
    /// | 100,000,000 | 573.8 µs | 1394.2 | 0.58 |
    /// | 268,435,456 | 1510.5 µs | 1421.7 | 0.58 |
    pub unsafe fn bit_build(src: Global<i32>, tree: GlobalMut<i32>, n: u32, stride: u32) {
        let smem = static_shared!(BIT_NODES: [i32; BIT_BLOCK as usize]);
        let tid = thread_idx_x() as usize;
        let j0 = (block_idx_x() as usize * BIT_BLOCK as usize + tid) * BIT_ITEMS as usize;
        let (n, stride) = (n as usize, stride.max(1) as usize);
        // Band nodes j < count exist (`index::bit_positions`, the host's grid, is the same).
        let count = n / stride;

        // SAFETY: src holds n aligned elements (preconditions).
        let mut nodes = fenwick4(unsafe { load_band(src, j0, stride, count, n) });
        // SAFETY: tid < BIT_BLOCK; each thread writes only its own slot before the barrier.
        unsafe { smem.write(tid, nodes[3]) };
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

        // SAFETY: slot tid is this thread's; the last barrier ordered every write before.
        nodes[3] = unsafe { smem.read(tid) };
        // SAFETY: tree holds n aligned elements; these positions are this thread's alone.
        unsafe { store_band(tree, j0, stride, count, n, nodes) };
    }
}

/// The Fenwick query of prefix `k` (`tree[0] + … ` over its ≤ 32 nodes) by one full warp:
/// lane `j` reads the `j`-th node of the path (`index::fenwick_walk`), and the warp sums
/// them. Complete in lane 0.
///
/// # Safety
/// `k` is at most the tree's length; every lane of the warp calls it with the same `k`.
#[inline(always)]
unsafe fn warp_query(tree: Global<i32>, k: usize) -> i32 {
    let node = fenwick_walk(k, lane_id());
    // SAFETY: 1 <= node <= k <= the tree's length.
    let v = if node > 0 { unsafe { tree.read(node - 1) } } else { 0 };
    warp_sum_shfl(v)
}

kernel! {
    /// Answers every prefix sum from a Fenwick tree built by `bit_build`: the seed's
    /// `calc_sum_using_bit`, by tiles. Block `b` answers the 2048 prefixes of tile
    /// `[2048b, 2048b + 2048)`: the part of every query above the tile once per block, the
    /// part inside from the tile's nodes in shared memory, and 4 consecutive queries per
    /// thread from one walk.
    ///
    /// # Concept
    /// **Independent queries: parallel, but not work-efficient — and sharing what they
    /// share.** Each prefix is a walk over `popcount(k)` (≤ `log2 n`) tree nodes, with no
    /// communication between queries. Queries of one aligned tile of 2048 prefixes all end
    /// their walk on the same path (the prefix of the tile's start `base`: clearing the
    /// low bits of `base + m` reaches `base`), so `prefix(base + m) = prefix(base) +
    /// local(m)`, where `local(m)` walks only the tile's own nodes. And neighbouring queries
    /// share most of their walk: `4t + 1`, `4t + 2`, `4t + 3` are `4t`'s walk plus one
    /// or two of the thread's own nodes, and `4t + 4`'s walk is its own node plus the end of
    /// `4t`'s (`index::fenwick_tile_walk`).
    ///
    /// # Previous problem → fix
    /// `bit_build` leaves only `lowbit(i)`-element partial sums; turning them into `n`
    /// prefixes is the query `sum(i) = tree[i] + sum(i - lowbit(i))`. The first version gave
    /// each thread one element and its whole walk in global memory: about `log2(n) / 2`
    /// scattered 4-byte reads per element (14 at 2^28), `O(n log n)` reads through L1/L2.
    /// Now the walk above the tile is read once per 2048 prefixes (by a warp, one node per
    /// lane), the tree is read from global memory once (128-bit loads) and the in-tile walks
    /// read shared memory: per 4 elements one walk of `popcount(t) ≤ 9` shared reads. The
    /// work is `O(n log T + (n / T) log n)` for tiles of `T = 2048`: still a logarithm per
    /// element, of the tile's size, served from shared memory (the first step of the walk
    /// has up to 4-way bank conflicts: lanes read words 4 apart). `blelloch`'s down-sweep
    /// removes the logarithm: `O(n)`.
    ///
    /// # Execution
    /// With `base = 2048b` and `node(m) = tree[base + m - 1]` (1-indexed node `base + m`):
    /// 1. Thread `t` loads nodes `4t + 1 .. 4t + 4` (one 128-bit load; 0 past `n`) and
    ///    stores them to shared memory.
    /// 2. Warp 0 computes `P = prefix(base)`, warp 1 `P2 = prefix(base + 2048)` (0 past `n`),
    ///    one node per lane (`warp_query`); lane 0 puts them in shared memory; barrier.
    /// 3. Thread `t` walks `4t` over the tile's nodes in shared memory (`fenwick_tile_walk`):
    ///    `E0 = P + local(4t)`, `E1 = E0 + node(4t+1)`, `E2 = E0 + node(4t+2)`,
    ///    `E3 = E2 + node(4t+3)`, `E4 = P + node(4t+4) + (end of 4t's walk)` (`P2` for
    ///    `t = 511`: node 2048 of the tile reaches beyond it).
    /// 4. It writes `E0..E3` (exclusive) or `E1..E4` (inclusive) to `output[base + 4t ..]`,
    ///    one 128-bit store.
    ///
    /// ```text
    ///  prefix of 7 (binary 111): node 7 (a7) + node 6 (a5+a6) + node 4 (a1..a4)
    ///  tile of 8 at base 8, t = 1: E0 = P(8) + node(12), E1 = E0 + node(13),
    ///  E2 = E0 + node(14), E3 = E2 + node(15), E4 = P(8) + node(16)... = prefix(16)
    /// ```
    ///
    /// # Launch
    /// Grid `ceil(n / 2048)`, block 512, 8.0 KiB static shared memory
    /// ([`BIT_QUERY_SHARED_BYTES`]), one barrier.
    ///
    /// # Preconditions
    /// `tree` holds the complete Fenwick tree of `n ≥ 1` elements; `output` holds `n`; both
    /// are 16-byte aligned; `exclusive` is 0 (inclusive scan) or 1 (exclusive scan).
    ///
    /// # Safety
    /// The pointers are valid device memory of `n` elements, `output` does not overlap
    /// `tree`, and nobody writes `tree` during the launch (read-only loads). Every thread
    /// reaches the barrier; warps 0 and 1 run their warp queries whole.
    /// # Measured
    /// NVIDIA H100 80GB HBM3, inclusive scan, median of 10 timed runs, every output element of every run checked (`docs/measurements/2026-11-22-h100/scans.csv`, commit dd72e83); × CUB = CUB's time / ours:
    ///
    /// | n | time | GB/s (read + write) | × CUB |
    /// |---|---|---|---|
    /// | 1,000,000 | 13.01 µs | 615.0 | 0.74 |
    /// | 100,000,000 | 573.4 µs | 1395.2 | 0.58 |
    /// | 268,435,456 | 1510.3 µs | 1421.9 | 0.58 |
    pub unsafe fn bit_query(tree: Global<i32>, output: GlobalMut<i32>, n: u32, exclusive: u32) {
        let smem = static_shared!(BIT_TILE: [i32; BIT_SPAN as usize + QUERY_CTRL]);
        let span = BIT_SPAN as usize;
        let tid = thread_idx_x() as usize;
        let base = block_idx_x() as usize * span;
        let (n, m0) = (n as usize, 4 * tid);
        let own = if base + m0 + 4 <= n {
            // SAFETY: base + m0 + 3 < n, aligned; nobody writes the tree during the launch.
            unsafe { tree.load_v4_nc(base + m0 ) }
        } else {
            // SAFETY: tree holds n elements.
            unsafe { load_chunk_guarded(tree, base + m0, n) }
        };
        // SAFETY: m0 + 4 <= 2048, 16-byte aligned; each thread writes its own 4 words.
        unsafe { smem.write_v4(m0, own) };
        let warp = warp_id() as usize;
        if warp < 2 {
            let k = base + warp * span;
            // SAFETY: k <= n (base < n; base + 2048 only where it is at most n); the whole warp.
            let p = if k <= n { unsafe { warp_query(tree, k) } } else { 0 };
            if lane_id() == 0 {
                // SAFETY: slots 2048 and 2049 are below the array's length; read after the barrier.
                unsafe { smem.write(span + warp, p) };
            }
        }
        sync_threads();

        // SAFETY: every index is below 2048 + 2; the barrier ordered all writes before.
        let (p, p2) = unsafe { (smem.read(span), smem.read(span + 1)) };
        // SAFETY: the walk reads nodes m < 4t + 1 <= 2048, at words m - 1 < 2048.
        let (local, tail) = fenwick_tile_walk(tid, |m| unsafe { smem.read(m - 1) });
        let e0 = p.wrapping_add(local);
        let e2 = e0.wrapping_add(own[1]);
        let e3 = e2.wrapping_add(own[2]);
        let e4 = if m0 + 4 < span { p.wrapping_add(own[3]).wrapping_add(tail) } else { p2 };
        let out = if exclusive != 0 { [e0, e0.wrapping_add(own[0]), e2, e3] } else { [e0.wrapping_add(own[0]), e2, e3, e4] };
        if base + m0 + 4 <= n {
            // SAFETY: base + m0 + 3 < n, aligned; these outputs are this thread's alone.
            unsafe { output.store_v4(base + m0 , out) };
        } else {
            // SAFETY: output holds n elements; these outputs are this thread's alone.
            unsafe { store_chunk_guarded(output, base + m0, n, out) };
        }
    }
}
