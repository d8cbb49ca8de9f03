//! The kernel of `examples/my_kernel.rs`: a kernel crate of its own, as yours would be (the
//! README's "Your kernel, your crate" makes one outside this repository the same way). The root
//! package's `build.rs` compiles it to PTX with `reduce-scan-build`; the example launches it with
//! `reduce_scan::module!` on the GPU, or on the emulator where there is none.
//!
//! Change it, run `cargo run --example my_kernel`, and see whether it still agrees with the CPU,
//! what the emulator counted, and (on a GPU) how long it took.
#![no_std]

use reduce_scan_collective::prelude::*;

kernel! {
    /// Block `b` sums the `2 × blockDim` elements from `2 × b × blockDim` (two loads per thread,
    /// a block apart, as `unroll2` does), reduces them with the collective layer's block sum (as
    /// `warp_shuffle` does), and thread 0 writes the block's sum into `partials[b]`. Integers wrap.
    ///
    /// Launch: a grid of `ceil(n / (2 × blockDim))` blocks, a block of whole warps; `partials`
    /// holds a slot per block. No `unsafe`: reads past the input are `None`, and each block's slot
    /// is written by its leader alone.
    pub fn two_loads(input: Slice<i32>, partials: PerBlock<i32>) {
        let (tid, block) = (thread_idx_x() as usize, block_dim_x() as usize);
        let start = block_idx_x() as usize * 2 * block;
        let mut v = 0i32;
        for i in [start + tid, start + block + tid] {
            v = v.wrapping_add(input.get(i).unwrap_or(0));
        }
        if let Some(total) = BlockReduce::new(block_slots!(TWO_LOADS_SLOTS: i32)).sum(v)
            && let Some(leader) = BlockLeader::get()
        {
            partials.set(leader, total);
        }
    }
}

/// Bins of [`hist256()`] and the other forms of it below.
pub const BINS: usize = 256;

/// Values a thread reads in one step of [`hist256()`] before its atomics: sixteen loads in
/// flight a thread.
pub const HIST256_STEP: usize = 16;

kernel! {
    /// `bins[b]` gains the count of values of `input` whose low byte is `b` (a 256-bin
    /// histogram, added into what `bins` holds). Each block counts into a histogram of its own
    /// in shared memory (`atomicAdd` on shared memory, `red_add`: only the block's threads
    /// contend for a bin, and no thread waits for an old value), kept in 32 columns, one for each lane of a warp: lane `l` counts bin `b` in word
    /// `32 b + l`, which is in bank `l`, so a warp's 32 atomics never queue for a bank. Then it
    /// adds each bin's 32 columns into `bins` (`atomicAdd` on global memory: one a bin and
    /// block, not one an element). A block reads `HIST256_STEP` × its threads values a step,
    /// each thread `HIST256_STEP` of them a block's width apart (each load coalesced across the
    /// warp), all in flight before its atomics. Any grid and block.
    pub fn hist256(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let step = HIST256_STEP * threads;
        for base in (block_idx_x() as usize * step..input.len()).step_by(grid_dim_x() as usize * step) {
            let values: [Option<u32>; HIST256_STEP] = core::array::from_fn(|k| input.get(base + k * threads + t));
            // A loop of a fixed count, unrolled: the values stay in registers, none in memory.
            for k in 0..HIST256_STEP {
                if let Some(v) = values[k] {
                    // SAFETY: the word is below 256 × 32; in this barrier interval every access
                    // to the array is atomic.
                    unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
                }
            }
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            let mut count = 0u32;
            for k in 0..32 {
                // Column (b + k) % 32: a warp's 32 bins read 32 banks at once.
                // SAFETY: the word is below 256 × 32; after the barrier no thread writes.
                count = count.wrapping_add(unsafe { local.read(32 * b + (b + k) % 32) });
            }
            if count > 0 {
                bins.atomic_add(b, count);
            }
        }
    }
}

kernel! {
    /// As [`hist256()`], with 16-byte loads (`ld.global.v4.u32`, CUDA C's `uint4`): four of them
    /// a thread and step, each coalesced across the warp, sixteen values in flight; the values
    /// past the last whole four read one by one.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_v4(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_V4_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let whole = input.len() / 4;
        let step = 4 * threads;
        for base in (block_idx_x() as usize * step..whole).step_by(grid_dim_x() as usize * step) {
            let mut quads = [[0u32; 4]; 4];
            let mut live = [false; 4];
            for k in 0..4 {
                let q = base + k * threads + t;
                if q < whole {
                    // SAFETY: elements 4q .. 4q + 4 are in the input, and element 4q is 16-byte
                    // aligned (the input's start is, by the caller's promise).
                    quads[k] = unsafe { input.as_global().load_v4(4 * q) };
                    live[k] = true;
                }
            }
            for k in 0..4 {
                for j in 0..4 {
                    if live[k] {
                        // SAFETY: the word is below 256 × 32; every access to the array is atomic.
                        unsafe { local.red_add(32 * (quads[k][j] & 0xff) as usize + lane, 1) };
                    }
                }
            }
        }
        for i in ThreadIndex::grid_stride(input.len() - 4 * whole) {
            let v = input.at(4 * whole + i.get());
            // SAFETY: as above.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        }
        sync_threads();
        merge_columns(local, bins);
    }
}

/// Each bin's 32 columns added into `bins`, after the block's barrier (the merge of the
/// column-per-lane forms but `hist256`, which spells it out).
#[inline(always)]
fn merge_columns(local: Shared<u32>, bins: AtomicSlice<u32>) {
    let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
    for b in (t..256).step_by(threads) {
        let mut count = 0u32;
        for k in 0..32 {
            // SAFETY: the word is below 256 × 32 (the caller's array); after the barrier no
            // thread writes.
            count = count.wrapping_add(unsafe { local.read(32 * b + (b + k) % 32) });
        }
        if count > 0 {
            bins.atomic_add(b, count);
        }
    }
}

/// Block `block` of `blocks`' share of `n` elements, `start .. end`: contiguous, in block
/// order, the shares differing by at most one element, all of them together `0 .. n`.
pub const fn share(n: usize, block: usize, blocks: usize) -> (usize, usize) {
    (n * block / blocks, n * (block + 1) / blocks)
}

kernel! {
    /// As [`hist256()`], with the memory kept busy while the block is not counting: each block
    /// reads a contiguous share of the input ([`share()`]: no block has a step more than
    /// another), its first `HIST256_STEP` loads a thread are issued before it zeroes its
    /// histogram, and each step's loads are issued before the previous step's atomics.
    pub fn hist256_prefetch(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_PREFETCH_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        let (start, end) = share(input.len(), block_idx_x() as usize, grid_dim_x() as usize);
        let step = HIST256_STEP * threads;
        let load = |base: usize| -> [Option<u32>; HIST256_STEP] {
            core::array::from_fn(|k| {
                let i = base + k * threads + t;
                if i < end { input.get(i) } else { None }
            })
        };
        let mut values = load(start);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let mut base = start;
        while base < end {
            let next = load(base + step);
            for k in 0..HIST256_STEP {
                if let Some(v) = values[k] {
                    // SAFETY: the word is below 256 × 32; in this barrier interval every access
                    // to the array is atomic.
                    unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
                }
            }
            values = next;
            base += step;
        }
        sync_threads();
        merge_columns(local, bins);
    }
}

kernel! {
    /// As [`hist256_v4()`], with one bounds check a step: while a thread's four 16-byte loads of
    /// a step are all in the input, none is checked; then the quads left one by one, and the
    /// last `n % 4` values.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_lean(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_LEAN_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let (quads, g) = (input.len() / 4, input.as_global());
        let stride = grid_dim_x() as usize * 4 * threads;
        let mut q = block_idx_x() as usize * 4 * threads + t;
        let count = |v: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        };
        while q + 3 * threads < quads {
            // SAFETY: quads q + k·threads (k < 4) are below `quads`: their four elements are in
            // the input, and element 4q is 16-byte aligned (the input's start is).
            let v: [[u32; 4]; 4] = core::array::from_fn(|k| unsafe { g.load_v4(4 * (q + k * threads)) });
            v.iter().flatten().for_each(|&x| count(x));
            q += stride;
        }
        for k in 0..4 {
            if q + k * threads < quads {
                // SAFETY: as above, for one quad below `quads`.
                let v = unsafe { g.load_v4(4 * (q + k * threads)) };
                v.iter().for_each(|&x| count(x));
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(v);
        }
        sync_threads();
        merge_columns(local, bins);
    }
}

/// The body of the `hist256_lean*` forms: `LOADS` 16-byte loads a thread and step (`NC`: through
/// the read-only path, `ld.global.nc`), one bounds check a step, a column of bins a lane.
///
/// # Safety
/// `input` starts 16-byte aligned; no thread writes it while the kernel runs.
#[inline(always)]
unsafe fn lean_body<const LOADS: usize, const NC: bool>(input: Slice<u32>, bins: AtomicSlice<u32>, local: Shared<u32>) {
    let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
    for w in (t..256 * 32).step_by(threads) {
        // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
        unsafe { local.write(w, 0) };
    }
    sync_threads();
    let (quads, g) = (input.len() / 4, input.as_global());
    let stride = grid_dim_x() as usize * LOADS * threads;
    let mut q = block_idx_x() as usize * LOADS * threads + t;
    let count = |v: u32| {
        // SAFETY: the word is below 256 × 32; every access to the array here is atomic.
        unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
    };
    // SAFETY (both loads): the quad is below `quads`, its start 16-byte aligned, and unwritten.
    let load = |q: usize| unsafe { if NC { g.load_v4_nc(4 * q) } else { g.load_v4(4 * q) } };
    while q + (LOADS - 1) * threads < quads {
        // In fours: an array of more than sixteen values is kept in local memory.
        let v: [[u32; 4]; 4] = core::array::from_fn(|k| if k < LOADS { load(q + k * threads) } else { [0; 4] });
        let w: [[u32; 4]; 4] = core::array::from_fn(|k| if LOADS > 4 { load(q + (4 + k) * threads) } else { [0; 4] });
        for k in 0..4.min(LOADS) {
            for j in 0..4 {
                count(v[k][j]);
            }
        }
        for k in 0..LOADS.saturating_sub(4) {
            for j in 0..4 {
                count(w[k][j]);
            }
        }
        q += stride;
    }
    for k in 0..LOADS {
        if q + k * threads < quads {
            load(q + k * threads).iter().for_each(|&x| count(x));
        }
    }
    if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
        count(v);
    }
    sync_threads();
    merge_columns(local, bins);
}

kernel! {
    /// As [`hist256_lean()`], with the loads a step ahead: a thread's first four 16-byte loads
    /// are issued before the block zeroes its histogram, and each step's loads before the
    /// previous step's atomics; one check a load, not a value.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_pipelined(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_PIPELINED_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        let (quads, g) = (input.len() / 4, input.as_global());
        let stride = grid_dim_x() as usize * 4 * threads;
        let mut q = block_idx_x() as usize * 4 * threads + t;
        let fetch = |q: usize| -> [[u32; 4]; 4] {
            core::array::from_fn(|k| {
                // SAFETY: the quad is below `quads`, its start 16-byte aligned (the input's is).
                if q + k * threads < quads { unsafe { g.load_v4(4 * (q + k * threads)) } } else { [0; 4] }
            })
        };
        let mut v = fetch(q);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let count = |x: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (x & 0xff) as usize + lane, 1) };
        };
        while q < quads {
            let next = fetch(q + stride);
            for k in 0..4 {
                if q + k * threads < quads {
                    for j in 0..4 {
                        count(v[k][j]);
                    }
                }
            }
            v = next;
            q += stride;
        }
        if let Some(x) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(x);
        }
        sync_threads();
        merge_columns(local, bins);
    }
}

kernel! {
    /// As [`hist256_lean()`], with a thread's first four loads issued before the block zeroes
    /// its histogram, and the histogram zeroed and merged 16 bytes at a time.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_first(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_FIRST_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        let (quads, g) = (input.len() / 4, input.as_global());
        let stride = grid_dim_x() as usize * 4 * threads;
        let mut q = block_idx_x() as usize * 4 * threads + t;
        // SAFETY: the quad is below `quads`, its start 16-byte aligned (the input's is).
        let load = |q: usize| unsafe { g.load_v4(4 * q) };
        let first: [[u32; 4]; 4] =
            core::array::from_fn(|k| if q + k * threads < quads { load(q + k * threads) } else { [0; 4] });
        for w in (4 * t..256 * 32).step_by(4 * threads) {
            // SAFETY: w + 4 ≤ 256 × 32 and w is a multiple of 4; each thread zeroes words of its own.
            unsafe { local.write_v4(w, [0; 4]) };
        }
        sync_threads();
        let count = |v: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        };
        for k in 0..4 {
            if q + k * threads < quads {
                for j in 0..4 {
                    count(first[k][j]);
                }
            }
        }
        q += stride;
        while q + 3 * threads < quads {
            let v: [[u32; 4]; 4] = core::array::from_fn(|k| load(q + k * threads));
            for k in 0..4 {
                for j in 0..4 {
                    count(v[k][j]);
                }
            }
            q += stride;
        }
        for k in 0..4 {
            if q + k * threads < quads {
                load(q + k * threads).iter().for_each(|&x| count(x));
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(v);
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            let mut total = 0u32;
            for k in 0..8 {
                // Quad (b + k) % 8 of the bin's eight: eight lanes' loads fall in eight groups of
                // banks. SAFETY: in the array, 16-byte aligned; after the barrier no thread writes.
                let quad = unsafe { local.read_v4(32 * b + 4 * ((b + k) % 8)) };
                total = quad.iter().fold(total, |s, &c| s.wrapping_add(c));
            }
            if total > 0 {
                bins.atomic_add(b, total);
            }
        }
    }
}

kernel! {
    /// As [`hist256_lean()`], each block reading a contiguous share of the input's 16-byte
    /// quads ([`share()`]: the shares differ by one quad at most, so every block ends its last
    /// step at the same time, where a grid-stride loop leaves some blocks a step more).
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_even(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_EVEN_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let (quads, g) = (input.len() / 4, input.as_global());
        let (mut q, end) = share(quads, block_idx_x() as usize, grid_dim_x() as usize);
        q += t;
        let count = |v: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        };
        // SAFETY: the quad is below `end` ≤ `quads`, its start 16-byte aligned (the input's is).
        let load = |q: usize| unsafe { g.load_v4(4 * q) };
        while q + 3 * threads < end {
            let v: [[u32; 4]; 4] = core::array::from_fn(|k| load(q + k * threads));
            for k in 0..4 {
                for j in 0..4 {
                    count(v[k][j]);
                }
            }
            q += 4 * threads;
        }
        for k in 0..4 {
            if q + k * threads < end {
                load(q + k * threads).iter().for_each(|&x| count(x));
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(v);
        }
        sync_threads();
        merge_columns(local, bins);
    }
}

kernel! {
    /// [`hist256_lean()`] with eight loads a thread and step.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned.
    pub unsafe fn hist256_lean8(input: Slice<u32>, bins: AtomicSlice<u32>) {
        // SAFETY: the caller's promise.
        unsafe { lean_body::<8, false>(input, bins, static_shared!(HIST256_LEAN8_COLUMNS: [u32; 256 * 32])) }
    }
}

kernel! {
    /// [`hist256_lean()`] through the read-only path.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned.
    pub unsafe fn hist256_lean_nc(input: Slice<u32>, bins: AtomicSlice<u32>) {
        // SAFETY: the caller's promise.
        unsafe { lean_body::<4, true>(input, bins, static_shared!(HIST256_LEAN_NC_COLUMNS: [u32; 256 * 32])) }
    }
}

kernel! {
    /// [`hist256_lean8()`] through the read-only path.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned.
    pub unsafe fn hist256_lean8_nc(input: Slice<u32>, bins: AtomicSlice<u32>) {
        // SAFETY: the caller's promise.
        unsafe { lean_body::<8, true>(input, bins, static_shared!(HIST256_LEAN8_NC_COLUMNS: [u32; 256 * 32])) }
    }
}

kernel! {
    /// [`hist256_lean()`] with two loads a thread and step.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned.
    pub unsafe fn hist256_lean2(input: Slice<u32>, bins: AtomicSlice<u32>) {
        // SAFETY: the caller's promise.
        unsafe { lean_body::<2, false>(input, bins, static_shared!(HIST256_LEAN2_COLUMNS: [u32; 256 * 32])) }
    }
}

kernel! {
    /// The loads of [`hist256_lean()`] and no histogram: `bins[0]` gains the count of values read,
    /// `bins[1]` the sum of their low bytes (wrapping). The floor that the histogram's loads set.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_loads_only(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
        let (quads, g) = (input.len() / 4, input.as_global());
        let stride = grid_dim_x() as usize * 4 * threads;
        let mut q = block_idx_x() as usize * 4 * threads + t;
        let (mut seen, mut low) = (0u32, 0u32);
        while q + 3 * threads < quads {
            // SAFETY: as in hist256_lean.
            let v: [[u32; 4]; 4] = core::array::from_fn(|k| unsafe { g.load_v4(4 * (q + k * threads)) });
            v.iter().flatten().for_each(|&x| low = low.wrapping_add(x & 0xff));
            seen += 16;
            q += stride;
        }
        for k in 0..4 {
            if q + k * threads < quads {
                // SAFETY: as in hist256_lean.
                let v = unsafe { g.load_v4(4 * (q + k * threads)) };
                v.iter().for_each(|&x| low = low.wrapping_add(x & 0xff));
                seen += 4;
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            low = low.wrapping_add(v & 0xff);
            seen += 1;
        }
        bins.atomic_add(0, seen);
        bins.atomic_add(1, low);
    }
}

kernel! {
    /// As [`hist256()`], counting with `atomic_add` (`atom.shared.add`, whose old value comes
    /// back to the thread) rather than `red_add`.
    pub fn hist256_atomic(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_ATOMIC_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let step = HIST256_STEP * threads;
        for base in (block_idx_x() as usize * step..input.len()).step_by(grid_dim_x() as usize * step) {
            let values: [Option<u32>; HIST256_STEP] = core::array::from_fn(|k| input.get(base + k * threads + t));
            for k in 0..values.len() {
                if let Some(v) = values[k] {
                    // SAFETY: the word is below 256 × 32; in this barrier interval every access to
                    // the array is atomic.
                    unsafe { local.atomic_add(32 * (v & 0xff) as usize + lane, 1) };
                }
            }
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            let mut count = 0u32;
            for k in 0..32 {
                // Column (b + k) % 32: a warp's 32 bins read 32 banks at once.
                // SAFETY: the word is below 256 × 32; after the barrier no thread writes.
                count = count.wrapping_add(unsafe { local.read(32 * b + (b + k) % 32) });
            }
            if count > 0 {
                bins.atomic_add(b, count);
            }
        }
    }
}

kernel! {
    /// As [`hist256()`] with one column of 256 bins a block: a warp's 32 atomics on random bins
    /// land in fewer than 32 banks, and the lanes that share a bank wait for each other (the
    /// emulator counts them as `shared_atom_bank_conflicts`).
    pub fn hist256_one_column(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_ONE_COLUMN: [u32; 256]);
        let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
        for b in (t..256).step_by(threads) {
            // SAFETY: b < 256, the array's length; each thread zeroes bins of its own.
            unsafe { local.write(b, 0) };
        }
        sync_threads();
        for i in ThreadIndex::grid_stride(input.len().div_ceil(4)) {
            let values = [0, 1, 2, 3].map(|k| input.get(4 * i.get() + k));
            for k in 0..values.len() {
                if let Some(v) = values[k] {
                    // SAFETY: the bin is below 256; in this barrier interval every access to the
                    // bins is atomic.
                    unsafe { local.atomic_add((v & 0xff) as usize, 1) };
                }
            }
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            // SAFETY: b < 256; after the barrier no thread writes the bins.
            let count = unsafe { local.read(b) };
            if count > 0 {
                bins.atomic_add(b, count);
            }
        }
    }
}

kernel! {
    /// As [`hist256_one_column()`], counting with `red_add`: ptxas may count the lanes of a warp
    /// that add 1 to one word in one operation (`ATOMS.POPC.INC`).
    pub fn hist256_red_one_column(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_RED_ONE_COLUMN: [u32; 256]);
        let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
        for b in (t..256).step_by(threads) {
            // SAFETY: b < 256, the array's length; each thread zeroes bins of its own.
            unsafe { local.write(b, 0) };
        }
        sync_threads();
        for i in ThreadIndex::grid_stride(input.len().div_ceil(4)) {
            let values = [0, 1, 2, 3].map(|k| input.get(4 * i.get() + k));
            for k in 0..values.len() {
                if let Some(v) = values[k] {
                    // SAFETY: the bin is below 256; in this barrier interval every access to the
                    // bins is atomic.
                    unsafe { local.red_add((v & 0xff) as usize, 1) };
                }
            }
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            // SAFETY: b < 256; after the barrier no thread writes the bins.
            let count = unsafe { local.read(b) };
            if count > 0 {
                bins.atomic_add(b, count);
            }
        }
    }
}

kernel! {
    /// The same histogram without shared-memory atomics, as it had to be written before the
    /// device layer had them: every bin has one writer, a lane of the warp, which keeps bins
    /// `lane + 32k` (k < 8) in registers. A warp reads 32 values a step, and 32 shuffles hand
    /// each value to every lane, whose owner counts it; at the end each lane adds its eight
    /// counts into `bins` with global `atomicAdd`. Any grid, blocks of whole warps.
    pub fn hist256_shuffles(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let lane = lane_id();
        let mut mine = [0u32; 8];
        let warps = (grid_dim_x() as usize * block_dim_x() as usize) / 32;
        let chunks = input.len().div_ceil(32);
        let mut chunk = global_idx_x() / 32;
        while chunk < chunks {
            // 256: no value (past the end), which no lane owns.
            let v = input.get(chunk * 32 + lane as usize).map_or(256, |x| x & 0xff);
            for j in 0..32 {
                let b = shfl_sync(FULL_MASK, v, j);
                if b % 32 == lane {
                    // Registers, not an indexed array: eight compares, one add.
                    for (k, count) in mine.iter_mut().enumerate() {
                        *count += u32::from(b / 32 == k as u32);
                    }
                }
            }
            chunk += warps;
        }
        for (k, &count) in mine.iter().enumerate() {
            if count > 0 {
                bins.atomic_add(lane as usize + 32 * k, count);
            }
        }
    }
}
