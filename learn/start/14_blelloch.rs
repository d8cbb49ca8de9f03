//! Exercise 14: `blelloch`, from `blelloch_unpadded`. `./x learn 14` says what to change and why,
//! and checks this file; `./x learn 14 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
use helpers::{load_leaf, store_leaf};
use kernels::device::global::{Global, GlobalMut};
use kernels::device::shared::Shared;
use kernels::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use kernels::scan::index::{blelloch_pair, leaf_scan, leaf_sum};
use kernels::scan::{BLELLOCH_BLOCK, BLELLOCH_LEAVES, BLELLOCH_TILE};
use kernels::{kernel, static_shared};

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
    pub unsafe fn blelloch_block(input: Global<i32>, output: GlobalMut<i32>, offsets: Global<i32>, n: u32, exclusive: u32) {
        // EXERCISE 14: pad the tree: node i at padded(i), in an array of padded_len(BLELLOCH_LEAVES as usize) words, wherever the tree is indexed (the leaves, the sweeps, the root), here and in blelloch_reduce.
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
    pub unsafe fn blelloch_reduce(input: Global<i32>, sums: GlobalMut<i32>, n: u32) {
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
