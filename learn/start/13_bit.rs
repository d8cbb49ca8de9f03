//! Exercise 13: `bit`, from `bit` with its tree levels in global memory. `./x learn 13` says what to change and why,
//! and checks this file; `./x learn 13 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use helpers::{load_chunk_guarded, store_chunk_guarded};
use kernels::collective::warp::warp_sum_shfl;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use kernels::scan::index::{fenwick_tile_walk, fenwick_walk, fenwick4};
use kernels::{kernel, static_shared};

pub const BIT_BLOCK: u32 = 512;
pub const BIT_ITEMS: u32 = 4;
pub const BIT_SPAN: u32 = BIT_BLOCK * BIT_ITEMS;
const QUERY_CTRL: usize = 4;

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
    pub unsafe fn bit_build(src: Global<i32>, tree: GlobalMut<i32>, n: u32, stride: u32) {
        let tid = thread_idx_x() as usize;
        let j0 = (block_idx_x() as usize * BIT_BLOCK as usize + tid) * BIT_ITEMS as usize;
        let (n, stride) = (n as usize, stride.max(1) as usize);
        // Band nodes j < count exist (`index::bit_positions`, the host's grid, is the same).
        let count = n / stride;

        // SAFETY: src holds n aligned elements (preconditions).
        let nodes = fenwick4(unsafe { load_band(src, j0, stride, count, n) });
        // SAFETY: tree holds n aligned elements; these positions are this thread's alone.
        unsafe { store_band(tree, j0, stride, count, n, nodes) };

        // EXERCISE 13: build the levels in a shared array of BIT_BLOCK words (static_shared!): each thread puts its top node there, the levels add in shared memory, and each thread stores its band once at the end.
        // Thread t's top node is band node 4(first + t) + 3, at tree position top(t); it exists
        // when that node is below `count`.
        let first = block_idx_x() as usize * BIT_BLOCK as usize;
        let items = BIT_ITEMS as usize;
        let top = |t: usize| ((first + t) * items + items) * stride - 1;
        let exists = (first + tid) * items + items - 1 < count;
        let mut d = 1usize;
        while d < BIT_BLOCK as usize {
            sync_threads();
            if (tid + 1).is_multiple_of(2 * d) && exists {
                // SAFETY: top(tid) < n, as the node exists, and so does the node of tid - d < tid.
                // Only thread tid writes top(tid) at this level; top(tid - d) has
                // (tid - d + 1) % 2d == d != 0, so no thread writes it at this level.
                unsafe { tree.write(top(tid), tree.read(top(tid)).wrapping_add(tree.read(top(tid - d)))) };
            }
            d *= 2;
        }
    }
}

#[inline(always)]
unsafe fn warp_query(tree: Global<i32>, k: usize) -> i32 {
    let node = fenwick_walk(k, lane_id());
    // SAFETY: 1 <= node <= k <= the tree's length.
    let v = if node > 0 { unsafe { tree.read(node - 1) } } else { 0 };
    warp_sum_shfl(v)
}

kernel! {
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

// Helpers of kernels/src/scan/ (blelloch.rs, lookback.rs), copied so that this file compiles on its own:
mod helpers {
    use kernels::device::global::{Global, GlobalMut};
    use kernels::scan::BLELLOCH_LEAF;

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

    #[inline(always)]
    pub(super) unsafe fn load_chunk_guarded(input: Global<i32>, p: usize, n: usize) -> [i32; 4] {
        let at = |i: usize| {
            if i < n {
                // SAFETY: i < n.
                unsafe { input.read(i) }
            } else {
                0
            }
        };
        [at(p), at(p + 1), at(p + 2), at(p + 3)]
    }

    #[inline(always)]
    pub(super) unsafe fn store_chunk_guarded(output: GlobalMut<i32>, p: usize, n: usize, chunk: [i32; 4]) {
        for (k, &x) in chunk.iter().enumerate() {
            if p + k < n {
                // SAFETY: p + k < n; this thread's element.
                unsafe { output.write(p + k, x) };
            }
        }
    }
}
