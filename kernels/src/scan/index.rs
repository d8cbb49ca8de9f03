//! Index arithmetic and status-word encoding of the scan kernels, as plain functions
//! unit-tested on the host (the host launchers use the same functions to size their grids).

// ---------------------------------------------------------------------------------------
// Fenwick tree (binary indexed tree)

/// The lowest set bit of `i` (`i & -i`): in a 1-indexed Fenwick tree, node `i` holds the sum
/// of the `lowbit(i)` elements ending at `i`, that is of `a[i - lowbit(i) + 1 ..= i]`.
///
/// ```
/// use reduce_scan_kernels::scan::index::lowbit;
/// assert_eq!((lowbit(1), lowbit(6), lowbit(8), lowbit(12)), (1, 2, 8, 4));
/// ```
#[inline(always)]
pub const fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

/// How many tree positions a `bit_build` launch at `stride` visits in an array of `n`: the
/// positions `(j + 1) * stride - 1 < n` (0-indexed), one per thread `j`.
///
/// ```
/// use reduce_scan_kernels::scan::index::bit_positions;
/// assert_eq!(bit_positions(1000, 1), 1000);
/// assert_eq!(bit_positions(1000, 512), 1);
/// assert_eq!(bit_positions(1023, 1024), 0);
/// ```
#[inline(always)]
pub const fn bit_positions(n: usize, stride: usize) -> usize {
    n / stride
}

/// The stride of the `bit_build` launch after the one at `stride`, or `None` when the tree of
/// `n` elements is complete. A launch at `stride` over blocks of `block` positions completes
/// every node whose `lowbit` is at most `block * stride`; a node with a larger `lowbit` is a
/// multiple of `2 * block * stride`, so one exists only when `2 * block * stride <= n`.
///
/// ```
/// use reduce_scan_kernels::scan::index::bit_next_stride;
/// assert_eq!(bit_next_stride(1023, 1, 512), None);
/// assert_eq!(bit_next_stride(1024, 1, 512), Some(512));
/// assert_eq!(bit_next_stride(1 << 20, 512, 512), Some(1 << 18));
/// ```
#[inline(always)]
pub const fn bit_next_stride(n: usize, stride: usize, block: usize) -> Option<usize> {
    let next = stride * block;
    if 2 * next <= n { Some(next) } else { None }
}

/// The Fenwick nodes of 4 consecutive elements `x` whose first is at a 1-indexed position
/// `≡ 1 (mod 4)`, built in registers: node `4u+1` = `x0`, `4u+2` = `x0+x1`, `4u+3` = `x2`,
/// `4u+4` = `x0+x1+x2+x3` (its sum of 4; the tree above it adds more where `lowbit > 4`).
///
/// ```
/// use reduce_scan_kernels::scan::index::fenwick4;
/// assert_eq!(fenwick4([1, 2, 3, 4]), [1, 3, 3, 10]);
/// ```
#[inline(always)]
pub const fn fenwick4(x: [i32; 4]) -> [i32; 4] {
    let s01 = x[0].wrapping_add(x[1]);
    [x[0], s01, x[2], s01.wrapping_add(x[2].wrapping_add(x[3]))]
}

/// The `j`-th node a Fenwick query of prefix `k` visits: `k` with its `j` lowest set bits
/// cleared (0 once all are: the query has ended). The nodes of one query are independent
/// of each other's values, so 32 lanes of a warp can read the ≤ 32 nodes of one query at
/// once, lane `j` the `j`-th.
///
/// ```
/// use reduce_scan_kernels::scan::index::fenwick_walk;
/// assert_eq!((fenwick_walk(7, 0), fenwick_walk(7, 1), fenwick_walk(7, 2), fenwick_walk(7, 3)), (7, 6, 4, 0));
/// assert_eq!(fenwick_walk(8, 1), 0);
/// ```
#[inline(always)]
pub const fn fenwick_walk(mut k: usize, j: u32) -> usize {
    let mut s = 0;
    while s < j && k > 0 {
        k -= lowbit(k);
        s += 1;
    }
    k
}

/// The in-tile part of two Fenwick queries, walked once: for thread `t` of a `bit_query`
/// block (queries at tile offsets `4t .. 4t + 4`), the sum of the tile's nodes on the path
/// of `4t` (`node(m)` is the node at tile offset `m`, `1 ≤ m < 4t + 1`), and the sum of the
/// part of that path that the query of `4t + 4` shares: the path of `4t + 4` is node
/// `4t + 4`, then the path of `4t` past its first `trailing_ones(t)` nodes.
///
/// ```
/// use reduce_scan_kernels::scan::index::fenwick_tile_walk;
/// // node(m) = m: path of 12 is 12, 8 (20); t = 3 has two trailing ones: 16's path past
/// // node 16 is empty (0).
/// assert_eq!(fenwick_tile_walk(3, |m| m as i32), (20, 0));
/// // t = 5 (101b): path of 20 is 20, 16 (36); path of 24 is 24, then 16 (16).
/// assert_eq!(fenwick_tile_walk(5, |m| m as i32), (36, 16));
/// ```
#[inline(always)]
pub fn fenwick_tile_walk(t: usize, node: impl Fn(usize) -> i32) -> (i32, i32) {
    let skip = (t as u32).trailing_ones();
    let (mut k, mut step) = (4 * t, 0u32);
    let (mut all, mut shared) = (0i32, 0i32);
    while k > 0 {
        let v = node(k);
        all = all.wrapping_add(v);
        if step >= skip {
            shared = shared.wrapping_add(v);
        }
        k -= lowbit(k);
        step += 1;
    }
    (all, shared)
}

// ---------------------------------------------------------------------------------------
// Blelloch scan in shared memory

/// log2 of the number of shared-memory banks (32 four-byte banks since Fermi).
pub const LOG_NUM_BANKS: u32 = 5;

/// `CONFLICT_FREE_OFFSET(i)` of GPU Gems 3, ch. 39: the padding word inserted before element
/// `i` of the shared array, one per 32 elements, so that element `i` lives at word
/// `i + (i >> 5)`. Two indices that are a multiple of 32 apart (the same bank without
/// padding) then land one bank apart per 32 words.
///
/// ```
/// use reduce_scan_kernels::scan::index::{conflict_free_offset, padded};
/// assert_eq!(conflict_free_offset(31), 0);
/// assert_eq!(conflict_free_offset(32), 1);
/// assert_eq!(padded(1023), 1023 + 31);
/// ```
#[inline(always)]
pub const fn conflict_free_offset(i: usize) -> usize {
    i >> LOG_NUM_BANKS
}

/// Where element `i` of a Blelloch tile lives in the padded shared array.
#[inline(always)]
pub const fn padded(i: usize) -> usize {
    i + conflict_free_offset(i)
}

/// Words of the padded shared array for a tile of `tile` elements.
#[inline(always)]
pub const fn padded_len(tile: usize) -> usize {
    padded(tile - 1) + 1
}

/// The two tree nodes thread `tid` combines at the level where the nodes are `offset`
/// elements apart (up-sweep: `x[b] += x[a]`; down-sweep: swap-and-add): `a = offset*(2tid+1)-1`,
/// `b = offset*(2tid+2)-1` — the last elements of two neighbouring subtrees of `offset`
/// leaves. Before padding.
///
/// ```
/// use reduce_scan_kernels::scan::index::blelloch_pair;
/// assert_eq!(blelloch_pair(0, 1), (0, 1));
/// assert_eq!(blelloch_pair(3, 4), (27, 31));
/// ```
#[inline(always)]
pub const fn blelloch_pair(tid: usize, offset: usize) -> (usize, usize) {
    (offset * (2 * tid + 1) - 1, offset * (2 * tid + 2) - 1)
}

/// The scan of one 4-element leaf of a Blelloch tile (or of one thread's 4 Fenwick queries),
/// given the sum of everything before it: each thread's serial part, in registers. Exclusive
/// gives `[p, p+x0, p+x0+x1, p+x0+x1+x2]`, inclusive `[p+x0, …, p+x0+x1+x2+x3]`.
///
/// ```
/// use reduce_scan_kernels::scan::index::leaf_scan;
/// assert_eq!(leaf_scan(10, [1, 2, 3, 4], true), [10, 11, 13, 16]);
/// assert_eq!(leaf_scan(10, [1, 2, 3, 4], false), [11, 13, 16, 20]);
/// ```
#[inline(always)]
pub const fn leaf_scan(prefix: i32, x: [i32; 4], exclusive: bool) -> [i32; 4] {
    let s1 = prefix.wrapping_add(x[0]);
    let s2 = s1.wrapping_add(x[1]);
    let s3 = s2.wrapping_add(x[2]);
    if exclusive { [prefix, s1, s2, s3] } else { [s1, s2, s3, s3.wrapping_add(x[3])] }
}

/// The sum of a leaf's 4 elements (wrapping): the value a leaf brings to the tree.
#[inline(always)]
pub const fn leaf_sum(x: [i32; 4]) -> i32 {
    x[0].wrapping_add(x[1]).wrapping_add(x[2].wrapping_add(x[3]))
}

// ---------------------------------------------------------------------------------------
// Decoupled look-back: the per-tile status word

/// Status flag: nothing published yet for this tile in this launch (`X` in the paper).
pub const FLAG_INVALID: u32 = 0;
/// Status flag: the tile's own sum (its *aggregate*) is published (`A`).
pub const FLAG_AGGREGATE: u32 = 1;
/// Status flag: the sum of every element up to and including the tile (its *inclusive
/// prefix*) is published (`P`).
pub const FLAG_PREFIX: u32 = 2;

/// Bits of the launch epoch in a status word.
pub const EPOCH_BITS: u32 = 30;
/// The largest epoch; the host starts again from 1 (after zeroing the status array) past it.
pub const MAX_EPOCH: u32 = (1 << EPOCH_BITS) - 1;

/// Packs a tile's status into one 64-bit word, written and read with single 64-bit atomic
/// accesses so that a reader never sees a flag without its value:
///
/// ```text
///  63            34 33  32 31                              0
/// +----------------+------+---------------------------------+
/// |  epoch (30 b)  | flag |  value (i32 bits)               |
/// +----------------+------+---------------------------------+
/// ```
///
/// The epoch is the launch's number (1, 2, 3, … from the host): a word left over from an
/// earlier launch carries another epoch and reads as [`FLAG_INVALID`], so the array needs
/// no zeroing between launches.
///
/// ```
/// use reduce_scan_kernels::scan::index::*;
/// let w = pack_status(7, FLAG_PREFIX, -5);
/// assert_eq!((status_flag(w, 7), status_value(w)), (FLAG_PREFIX, -5));
/// assert_eq!(status_flag(w, 8), FLAG_INVALID);
/// ```
#[inline(always)]
pub const fn pack_status(epoch: u32, flag: u32, value: i32) -> u64 {
    ((epoch as u64) << 34) | ((flag as u64 & 3) << 32) | value as u32 as u64
}

/// The flag of status word `word` as seen by the launch numbered `epoch`:
/// [`FLAG_INVALID`] for a word another launch wrote.
#[inline(always)]
pub const fn status_flag(word: u64, epoch: u32) -> u32 {
    if (word >> 34) as u32 == epoch { ((word >> 32) & 3) as u32 } else { FLAG_INVALID }
}

/// The value of status word `word`.
#[inline(always)]
pub const fn status_value(word: u64) -> i32 {
    word as u32 as i32
}

/// Index, in the value array of the generic look-back scan's **split** status layout (64-bit
/// elements), of the value that tile `tile` publishes with `flag`: `2·tile` for its aggregate
/// ([`FLAG_AGGREGATE`]), `2·tile + 1` for its inclusive prefix ([`FLAG_PREFIX`]). Two slots
/// per tile, so that a value a reader has seen flagged is never overwritten during the launch.
///
/// ```
/// use reduce_scan_kernels::scan::index::{FLAG_AGGREGATE, FLAG_PREFIX, value_slot};
/// assert_eq!((value_slot(5, FLAG_AGGREGATE), value_slot(5, FLAG_PREFIX)), (10, 11));
/// ```
#[inline(always)]
pub const fn value_slot(tile: usize, flag: u32) -> usize {
    2 * tile + (flag == FLAG_PREFIX) as usize
}

/// A 64-bit value's status in the **halves** layout (the warp-specialized scan's 64-bit types):
/// two status words `pack_status(epoch, flag, half)`, its low then its high 32 bits, each
/// written and read as one 64-bit atomic, so that each half carries the flag it belongs to.
#[inline(always)]
pub const fn pack_halves(epoch: u32, flag: u32, [lo, hi]: [u32; 2]) -> [u64; 2] {
    [pack_status(epoch, flag, lo as i32), pack_status(epoch, flag, hi as i32)]
}

/// Do two words read for one tile in the halves layout belong to the same publication (the
/// same epoch and flag)? A reader that finds them apart (one half of an aggregate, one of the
/// prefix that replaced it, or of another launch) reads again.
#[inline(always)]
pub const fn halves_agree(lo: u64, hi: u64) -> bool {
    lo >> 32 == hi >> 32
}

/// The value's two 32-bit halves from its two words in the halves layout (low, high).
#[inline(always)]
pub const fn unpack_halves(lo: u64, hi: u64) -> [u32; 2] {
    [lo as u32, hi as u32]
}

/// Word offset, within a look-back tile held in shared memory, of the 16-byte chunk `row`
/// of thread `tid` in the **striped** layout: chunk `row * threads + tid`. Consecutive
/// threads take consecutive chunks, so a warp's 128-bit global load or store of one row
/// covers 512 contiguous bytes (fully coalesced), and its 128-bit shared access touches
/// consecutive chunks (no bank conflict). The tile's loads and stores use this layout.
///
/// ```text
///  tile (threads = 4, 2 rows):  row 0: t0 t1 t2 t3 | row 1: t0 t1 t2 t3     (each 4 words)
/// ```
///
/// ```
/// use reduce_scan_kernels::scan::index::striped_chunk;
/// assert_eq!(striped_chunk(0, 1, 256), 1024);
/// assert_eq!(striped_chunk(3, 2, 256), (2 * 256 + 3) * 4);
/// ```
#[inline(always)]
pub const fn striped_chunk(tid: usize, row: usize, threads: usize) -> usize {
    (row * threads + tid) * 4
}

/// Word offset, within a look-back tile held in shared memory, of the 16-byte chunk `row`
/// of thread `tid` in the **blocked** layout: thread `tid` owns the `items` consecutive
/// elements `tid * items ..`, so it scans them sequentially, with no shuffle. A quarter warp
/// (8 lanes) is one shared-memory wavefront of 128-bit accesses; its 8 chunks are `items / 4`
/// chunks apart, which puts them in 8 distinct groups of 4 banks exactly when `items / 4` is
/// odd (`blocked_is_conflict_free`; `lookback` requires it).
///
/// ```
/// use reduce_scan_kernels::scan::index::blocked_chunk;
/// assert_eq!(blocked_chunk(0, 2, 36), 8);
/// assert_eq!(blocked_chunk(5, 1, 36), 5 * 36 + 4);
/// ```
#[inline(always)]
pub const fn blocked_chunk(tid: usize, row: usize, items: usize) -> usize {
    tid * items + row * 4
}

/// Are the blocked layout's 128-bit shared accesses free of bank conflicts for `items`
/// elements per thread (a multiple of 4)? True when `items / 4` is odd.
///
/// ```
/// use reduce_scan_kernels::scan::index::blocked_is_conflict_free;
/// assert!(blocked_is_conflict_free(36) && blocked_is_conflict_free(44));
/// assert!(!blocked_is_conflict_free(32) && !blocked_is_conflict_free(24));
/// ```
#[inline(always)]
pub const fn blocked_is_conflict_free(items: usize) -> bool {
    items.is_multiple_of(4) && !(items / 4).is_multiple_of(2)
}

/// The flag of `lookback_bulk`'s ticket counter word (status words use the other three).
pub const FLAG_TICKET: u32 = 3;

/// The tile a ticket counter's old value `old` gives a block of launch `epoch`, or `None` when
/// the word is not this launch's counter (`lookback_bulk`'s tile tickets). The counter is a
/// status word with flag [`FLAG_TICKET`] and the number of tickets drawn as its value
/// (`pack_status(epoch, FLAG_TICKET, drawn)`), so that, like the status words, it never needs
/// zeroing between launches: the first block of a launch to find anything else there (a zero,
/// an earlier launch's counter, or a tile's status word when the array is reused for a smaller
/// input) restarts it at [`ticket_restart`] with a compare-and-swap.
///
/// ```
/// use reduce_scan_kernels::scan::index::*;
/// assert_eq!(ticket_of(pack_status(7, FLAG_TICKET, 41), 7), Some(41));
/// assert_eq!(ticket_of(pack_status(6, FLAG_TICKET, 41), 7), None); // an earlier launch's
/// assert_eq!(ticket_of(pack_status(7, FLAG_PREFIX, 41), 7), None); // a status word
/// assert_eq!(ticket_of(ticket_restart(7), 7), Some(1)); // the restarter took ticket 0
/// ```
pub const fn ticket_of(old: u64, epoch: u32) -> Option<u32> {
    if (old >> 32) == ((epoch as u64) << 2 | FLAG_TICKET as u64) { Some(old as u32) } else { None }
}

/// The counter word after the block that restarts it for launch `epoch` took ticket 0.
pub const fn ticket_restart(epoch: u32) -> u64 {
    pack_status(epoch, FLAG_TICKET, 1)
}

/// The stage (shared buffer) of a block's `k`-th tile, and the parity of that stage's
/// `mbarrier` phase it waits for: a ring of `stages` buffers, each use of a buffer one phase
/// of its barrier (parity 0, 1, 0, …).
///
/// ```
/// use reduce_scan_kernels::scan::index::stage_of;
/// assert_eq!((0..5).map(|k| stage_of(k, 2)).collect::<Vec<_>>(), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 0)]);
/// ```
pub const fn stage_of(k: usize, stages: usize) -> (usize, u32) {
    (k % stages, ((k / stages) % 2) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_carry_their_flag_and_agree_only_within_one_publication() {
        let v = 0xDEAD_BEEF_0123_4567u64;
        let halves = [v as u32, (v >> 32) as u32];
        let [lo, hi] = pack_halves(7, FLAG_AGGREGATE, halves);
        assert!(halves_agree(lo, hi));
        assert_eq!(unpack_halves(lo, hi), halves);
        assert_eq!((status_flag(lo, 7), status_flag(hi, 7)), (FLAG_AGGREGATE, FLAG_AGGREGATE));
        // The prefix that replaces the aggregate, half of it seen: not taken.
        let [plo, phi] = pack_halves(7, FLAG_PREFIX, [1, 2]);
        assert!(halves_agree(plo, phi));
        assert!(!halves_agree(plo, hi) && !halves_agree(lo, phi));
        // Another launch's half: not taken either; and (0, 0), what a reader makes of halves
        // apart, reads as not published for any launch (epochs start at 1).
        let [old, _] = pack_halves(6, FLAG_AGGREGATE, halves);
        assert!(!halves_agree(old, hi));
        assert_eq!(status_flag(0, 1), FLAG_INVALID);
    }
    use std::vec;
    use std::vec::Vec;

    fn prefix(a: &[i32]) -> Vec<i32> {
        let mut s = 0i32;
        a.iter()
            .map(|&x| {
                s = s.wrapping_add(x);
                s
            })
            .collect()
    }

    /// The Fenwick build exactly as `bit_build` does it (blocks of `block` threads of 4 nodes
    /// each, `fenwick4` in registers, then the shared tree over the sums of 4, a growing
    /// stride), then the queries as `bit_query` answers them (tiles of `4 * block`, the
    /// prefix of the tile's start once, in-tile walks with `fenwick_tile_walk`, 4 queries per
    /// thread): must equal a sequential scan, inclusive and exclusive.
    #[test]
    fn fenwick_build_and_query_match_sequential_scan() {
        for n in [1usize, 2, 3, 7, 8, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 1000, 1023, 1024, 1025, 5000] {
            for block in [2usize, 4, 8, 512] {
                let span = 4 * block;
                let a: Vec<i32> = (0..n).map(|i| (i as i32).wrapping_mul(2_654_435_761u32 as i32) ^ 0x55).collect();
                let mut tree = a.clone();
                let mut stride = Some(1);
                while let Some(s) = stride {
                    let count = bit_positions(n, s);
                    let pos = |j: usize| (j < count).then(|| (j + 1) * s - 1);
                    for b in 0..count.div_ceil(span) {
                        let mut smem = vec![0i32; block];
                        let mut nodes = vec![[0i32; 4]; block];
                        for t in 0..block {
                            let j0 = (b * block + t) * 4;
                            let x = [0, 1, 2, 3].map(|r| pos(j0 + r).map_or(0, |p| tree[p]));
                            nodes[t] = fenwick4(x);
                            smem[t] = nodes[t][3];
                        }
                        let mut d = 1;
                        while d < block {
                            for t in 0..block {
                                if (t + 1) % (2 * d) == 0 {
                                    smem[t] = smem[t].wrapping_add(smem[t - d]);
                                }
                            }
                            d *= 2;
                        }
                        for t in 0..block {
                            nodes[t][3] = smem[t];
                            for r in 0..4 {
                                if let Some(p) = pos((b * block + t) * 4 + r) {
                                    tree[p] = nodes[t][r];
                                }
                            }
                        }
                    }
                    stride = bit_next_stride(n, s, span);
                }
                // Every node i (1-indexed) holds the sum of a[i - lowbit(i) .. i).
                for i in 1..=n {
                    let want = a[i - lowbit(i)..i].iter().fold(0i32, |x, &y| x.wrapping_add(y));
                    assert_eq!(tree[i - 1], want, "node {i}, n={n}, block={block}");
                }
                let query = |k: usize| {
                    (0..32).fold(0i32, |s, j| match fenwick_walk(k, j) {
                        0 => s,
                        v => s.wrapping_add(tree[v - 1]),
                    })
                };
                let node = |k: usize| if k <= n { tree[k - 1] } else { 0 };
                let (inclusive, exclusive) = (prefix(&a), {
                    let mut e = vec![0];
                    e.extend_from_slice(&prefix(&a)[..n - 1]);
                    e
                });
                for base in (0..n).step_by(span) {
                    let p = query(base);
                    let p2 = if base + span <= n { query(base + span) } else { 0 };
                    for t in 0..block {
                        let own = [1, 2, 3, 4].map(|r| node(base + 4 * t + r));
                        let (local, tail) = fenwick_tile_walk(t, |m| node(base + m));
                        let e0 = p.wrapping_add(local);
                        let e2 = e0.wrapping_add(own[1]);
                        let e3 = e2.wrapping_add(own[2]);
                        let e4 = if 4 * t + 4 < span { p.wrapping_add(own[3]).wrapping_add(tail) } else { p2 };
                        let e = [e0, e0.wrapping_add(own[0]), e2, e3, e4];
                        for r in 0..4 {
                            let i = base + 4 * t + r;
                            if i < n {
                                assert_eq!(e[r], exclusive[i], "exclusive {i}, n={n}, block={block}");
                                assert_eq!(e[r + 1], inclusive[i], "inclusive {i}, n={n}, block={block}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn leaf_helpers_agree_with_sequential_sums() {
        let x = [5, -3, i32::MAX, 7];
        let incl = leaf_scan(11, x, false);
        let excl = leaf_scan(11, x, true);
        let mut s = 11i32;
        for r in 0..4 {
            assert_eq!(excl[r], s);
            s = s.wrapping_add(x[r]);
            assert_eq!(incl[r], s);
        }
        assert_eq!(leaf_sum(x), s.wrapping_sub(11));
        assert_eq!(fenwick4(x), [5, 2, i32::MAX, leaf_sum(x)]);
    }

    /// Bank of each access, for counting conflicts: the worst number of distinct words of one
    /// bank that the 32 lanes of a warp touch in one access.
    fn worst_conflict(words: impl Iterator<Item = usize>) -> usize {
        let mut per_bank: [Vec<usize>; 32] = Default::default();
        for w in words {
            if !per_bank[w % 32].contains(&w) {
                per_bank[w % 32].push(w);
            }
        }
        per_bank.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Every level of the up- and down-sweep of a 1024-element tile, every warp, both nodes
    /// of the pair: how many ways a warp's access conflicts without padding and with
    /// `CONFLICT_FREE_OFFSET`. The nodes are `2 * offset` words apart, so without padding a
    /// warp-wide access is `min(2 * offset, 32, active lanes)`-way; with it, never.
    #[test]
    fn padding_removes_the_bank_conflicts_of_the_tree() {
        let tile = 1024usize;
        let (mut offset, mut d) = (1usize, tile / 2);
        let mut worst_plain = 0;
        while d > 0 {
            for warp in 0..d.div_ceil(32) {
                let lanes = (warp * 32..(warp * 32 + 32).min(d)).collect::<Vec<_>>();
                for side in 0..2 {
                    let node =
                        |t: usize| if side == 0 { blelloch_pair(t, offset).0 } else { blelloch_pair(t, offset).1 };
                    let plain = worst_conflict(lanes.iter().map(|&t| node(t)));
                    let pad = worst_conflict(lanes.iter().map(|&t| padded(node(t))));
                    assert_eq!(plain, (2 * offset).min(32).min(lanes.len()), "offset {offset}");
                    assert_eq!(pad, 1, "offset {offset} warp {warp}: {pad}-way with padding");
                    worst_plain = worst_plain.max(plain);
                }
            }
            offset *= 2;
            d /= 2;
        }
        assert_eq!(worst_plain, 32, "without padding, offset 16 puts a whole warp in one bank");
    }

    #[test]
    fn padded_indices_are_distinct_and_fit() {
        let tile = 1024;
        let mut seen = vec![false; padded_len(tile)];
        for i in 0..tile {
            assert!(!seen[padded(i)]);
            seen[padded(i)] = true;
        }
        assert_eq!(padded_len(tile), 1024 + 31);
    }

    #[test]
    fn status_words_round_trip_and_reject_other_epochs() {
        for epoch in [1u32, 2, 12345, MAX_EPOCH] {
            for flag in [FLAG_INVALID, FLAG_AGGREGATE, FLAG_PREFIX] {
                for value in [0i32, 1, -1, i32::MIN, i32::MAX] {
                    let w = pack_status(epoch, flag, value);
                    assert_eq!(status_flag(w, epoch), flag);
                    assert_eq!(status_value(w), value);
                    assert_eq!(status_flag(w, epoch ^ 1), FLAG_INVALID);
                }
            }
        }
        // A zeroed array is invalid for every epoch the host uses (1..=MAX_EPOCH).
        assert_eq!(status_flag(0, 1), FLAG_INVALID);
        assert_eq!(status_flag(0, MAX_EPOCH), FLAG_INVALID);
    }

    #[test]
    fn value_slots_are_distinct_per_tile_and_flag() {
        let mut seen = [false; 200];
        for tile in 0..100 {
            for flag in [FLAG_AGGREGATE, FLAG_PREFIX] {
                let s = value_slot(tile, flag);
                assert!(!seen[s], "tile {tile} flag {flag}: slot {s} used twice");
                seen[s] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn both_tile_layouts_cover_a_tile_once() {
        for (threads, items) in [(128usize, 44usize), (256, 36), (256, 28), (64, 4)] {
            let tile = threads * items;
            let mut striped = vec![0u8; tile];
            let mut blocked = vec![0u8; tile];
            for tid in 0..threads {
                for row in 0..items / 4 {
                    for (seen, i) in [
                        (&mut striped, striped_chunk(tid, row, threads)),
                        (&mut blocked, blocked_chunk(tid, row, items)),
                    ] {
                        assert_eq!(i % 4, 0, "16-byte aligned chunks");
                        for k in 0..4 {
                            seen[i + k] += 1;
                        }
                    }
                }
            }
            assert!(striped.iter().all(|&c| c == 1), "striped: threads {threads} items {items}");
            assert!(blocked.iter().all(|&c| c == 1), "blocked: threads {threads} items {items}");
        }
    }

    /// The worst number of distinct 16-byte chunks that share a group of 4 banks within one
    /// quarter warp (the unit in which shared memory serves 128-bit accesses).
    fn worst_v4_conflict(chunk_words: impl Fn(usize) -> usize) -> usize {
        (0..4)
            .map(|q| {
                let mut per_group = [0usize; 8];
                for lane in q * 8..q * 8 + 8 {
                    per_group[(chunk_words(lane) / 4) % 8] += 1;
                }
                per_group.into_iter().max().unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn blocked_reads_are_conflict_free_exactly_for_odd_chunk_counts() {
        for items in (4..=64).step_by(4) {
            for row in 0..items / 4 {
                let worst = worst_v4_conflict(|lane| blocked_chunk(lane, row, items));
                assert_eq!(worst == 1, blocked_is_conflict_free(items), "items {items}: {worst}-way");
            }
        }
        for row in 0..9 {
            assert_eq!(worst_v4_conflict(|lane| striped_chunk(lane, row, 256)), 1);
        }
    }
}
