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

/// 16-byte loads in half a step of `hist256`: a thread has one half in flight while it counts the
/// other. On an H200 (2^24 `u32`, blocks of 1024), halves of two quads, loaded half a step ahead,
/// were 1–2 % faster than four quads loaded together, which were faster than two or eight.
pub const HIST256_HALF: usize = 2;

kernel! {
    /// `bins[b]` gains the count of values of `input` whose low byte is `b` (a 256-bin
    /// histogram, added into what `bins` holds). Each block counts into a histogram of its own
    /// in shared memory (`atomicAdd` on shared memory, `red_add`: only the block's threads
    /// contend for a bin, and no thread waits for an old value), kept in 32 columns, one for
    /// each lane of a warp: lane `l` counts bin `b` in word `32 b + l`, which is in bank `l`, so
    /// a warp's 32 atomics never queue for a bank. Then it adds each bin's 32 columns into
    /// `bins` (`atomicAdd` on global memory: one a bin and block, not one an element).
    ///
    /// A thread reads quads of four values with 16-byte loads (CUDA C's `uint4`), a block's
    /// width apart (each load coalesced across the warp), a step of two halves at a time, and
    /// checks the bounds once a step. The loads run half a step ahead of the counting (software
    /// pipelining): while a thread counts one half, the other is in flight. The quads of the
    /// last step one by one, then block 0 the last `n % 4` values. The loops over the shared
    /// words are `while` loops: a `step_by` over a range divides its length by the step, a
    /// 64-bit division routine at every thread's start. Any grid and block; fastest with one
    /// block of 1024 threads an SM.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        let mut w = t;
        while w < 256 * 32 {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
            w += threads;
        }
        sync_threads();
        let count = |v: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        };
        let (quads, g) = (input.len() / 4, input.as_global());
        // SAFETY: the quad is below `quads` (so in the input), and its first value is 16-byte
        // aligned (the input's start is, by the caller's promise).
        let load = |q: usize| unsafe { g.load_v4(4 * q) };
        let half = |q: usize| -> [[u32; 4]; HIST256_HALF] { core::array::from_fn(|k| load(q + k * threads)) };
        // A step is the quads q, q + threads, …, q + (2 HIST256_HALF - 1) threads; it is whole
        // when its last quad is below `quads`.
        let whole = |q: usize| q + (2 * HIST256_HALF - 1) * threads < quads;
        let step = grid_dim_x() as usize * 2 * HIST256_HALF * threads;
        let mut q = block_idx_x() as usize * 2 * HIST256_HALF * threads + t;
        if whole(q) {
            let mut first = half(q);
            loop {
                let second = half(q + HIST256_HALF * threads);
                // Loops of a fixed count, unrolled: the values stay in registers, none in memory.
                for quad in first {
                    quad.into_iter().for_each(count);
                }
                let more = whole(q + step);
                if more {
                    first = half(q + step); // the next step's first half, in flight from here
                }
                for quad in second {
                    quad.into_iter().for_each(count);
                }
                q += step;
                if !more {
                    break;
                }
            }
        }
        for k in 0..2 * HIST256_HALF {
            if q + k * threads < quads {
                load(q + k * threads).into_iter().for_each(count);
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(v);
        }
        sync_threads();
        let mut b = t;
        while b < 256 {
            let mut total = 0u32;
            for k in 0..32 {
                // Column (b + k) % 32: a warp's 32 bins read 32 banks at once.
                // SAFETY: the word is below 256 × 32; after the barrier no thread writes.
                total = total.wrapping_add(unsafe { local.read(32 * b + (b + k) % 32) });
            }
            if total > 0 {
                bins.atomic_add(b, total);
            }
            b += threads;
        }
    }
}

/// 16-byte loads a thread issues in one step of [`hist256_quads()`], all in flight before its
/// atomics. On an H200 at a block of 1024 (2^24 `u32`): four 19.6–20.2 µs, eight 20.3–20.5,
/// two 20.4–21.1 (`docs/measurements/2026-11-29-h200/hist-lean-e9ce01c/`).
pub const HIST256_QUADS_LOADS: usize = 4;

kernel! {
    /// The README's `hist256` before session 36: four quads loaded together a step, `step_by`
    /// loops over the shared words. `bins[b]` gains the count of values of `input` whose low
    /// byte is `b`. Each block counts into a histogram of its own
    /// in shared memory (`atomicAdd` on shared memory, `red_add`: only the block's threads
    /// contend for a bin, and no thread waits for an old value), kept in 32 columns, one for
    /// each lane of a warp: lane `l` counts bin `b` in word `32 b + l`, which is in bank `l`, so
    /// a warp's 32 atomics never queue for a bank. Then it adds each bin's 32 columns into
    /// `bins` (`atomicAdd` on global memory: one a bin and block, not one an element).
    ///
    /// A thread reads `HIST256_QUADS_LOADS` quads of four values a step with 16-byte loads (CUDA C's
    /// `uint4`), a block's width apart (each load coalesced across the warp), and checks the
    /// bounds once a step, not once a value: the values' atomics are then all the step does.
    /// The quads of the last step one by one, then block 0 the last `n % 4` values. Any grid
    /// and block; fastest with one block of 1024 threads an SM.
    ///
    /// # Safety
    /// `input` starts 16-byte aligned (a whole device buffer does).
    pub unsafe fn hist256_quads(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_QUADS_COLUMNS: [u32; 256 * 32]);
        let (t, threads, lane) = (thread_idx_x() as usize, block_dim_x() as usize, lane_id() as usize);
        for w in (t..256 * 32).step_by(threads) {
            // SAFETY: w < 256 × 32, the array's length; each thread zeroes words of its own.
            unsafe { local.write(w, 0) };
        }
        sync_threads();
        let count = |v: u32| {
            // SAFETY: the word is below 256 × 32; in this barrier interval every access to the
            // array is atomic.
            unsafe { local.red_add(32 * (v & 0xff) as usize + lane, 1) };
        };
        let (quads, g) = (input.len() / 4, input.as_global());
        // SAFETY: the quad is below `quads` (so in the input), and its first value is 16-byte
        // aligned (the input's start is, by the caller's promise).
        let load = |q: usize| unsafe { g.load_v4(4 * q) };
        let mut q = block_idx_x() as usize * HIST256_QUADS_LOADS * threads + t;
        // Whole steps: the thread's last quad is below `quads`, so all of them are.
        while q + (HIST256_QUADS_LOADS - 1) * threads < quads {
            let values: [[u32; 4]; HIST256_QUADS_LOADS] = core::array::from_fn(|k| load(q + k * threads));
            // Loops of a fixed count, unrolled: the values stay in registers, none in memory.
            for k in 0..HIST256_QUADS_LOADS {
                for j in 0..4 {
                    count(values[k][j]);
                }
            }
            q += grid_dim_x() as usize * HIST256_QUADS_LOADS * threads;
        }
        for k in 0..HIST256_QUADS_LOADS {
            if q + k * threads < quads {
                load(q + k * threads).iter().for_each(|&v| count(v));
            }
        }
        if let Some(v) = input.get(4 * quads + t).filter(|_| block_idx_x() == 0) {
            count(v);
        }
        sync_threads();
        for b in (t..256).step_by(threads) {
            let mut total = 0u32;
            for k in 0..32 {
                // Column (b + k) % 32: a warp's 32 bins read 32 banks at once.
                // SAFETY: the word is below 256 × 32; after the barrier no thread writes.
                total = total.wrapping_add(unsafe { local.read(32 * b + (b + k) % 32) });
            }
            if total > 0 {
                bins.atomic_add(b, total);
            }
        }
    }
}

/// 4-byte loads a thread issues in one step of [`hist256_scalar()`] and its forms.
pub const HIST256_STEP: usize = 16;

kernel! {
    /// As [`hist256()`], with 4-byte loads, each checked against the input's length
    /// (`Slice::get`, no `unsafe` for the input): [`HIST256_STEP`] of them a thread and step,
    /// a block's width apart. The README's form before 16-byte loads: a check and a 64-bit
    /// index a value cost more instructions than its atomic.
    pub fn hist256_scalar(input: Slice<u32>, bins: AtomicSlice<u32>) {
        let local = static_shared!(HIST256_SCALAR_COLUMNS: [u32; 256 * 32]);
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
    /// As [`hist256_scalar()`], with 16-byte loads (`ld.global.v4.u32`, CUDA C's `uint4`): four of them
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
/// column-per-lane forms but `hist256` and `hist256_scalar`, which spell it out).
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

kernel! {
    /// As [`hist256_scalar()`], counting with `atomic_add` (`atom.shared.add`, whose old value comes
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
    /// As [`hist256_scalar()`] with one column of 256 bins a block: a warp's 32 atomics on random bins
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

/// The predicate of [`keep_flags()`]: `x` lies in (0.25, 0.75). A plain function of this
/// `no_std` crate, so that the host's CPU reference (`examples/my_predicate.rs`) calls the very
/// rule the kernel compiles.
pub fn in_band(x: f32) -> bool {
    x > 0.25 && x < 0.75
}

kernel! {
    /// `flags[i]` = 1 where `keep(input[i])` holds, else 0, for `i < min(n, flags)`: a predicate of
    /// your own (any Rust closure, here [`in_band`]) turned into the flag bytes that the
    /// library's one-pass `Select::flagged` (`cub::DeviceSelect::Flagged`) keeps in order. A
    /// grid-stride loop, each thread the flags of its own elements: neighbouring threads store
    /// neighbouring bytes of one word, which is no race (on a GPU, nor in the emulator's
    /// racecheck, which follows such words byte by byte). Any grid and block.
    pub fn keep_flags(input: Slice<f32>, flags: DisjointSlice<u8>) {
        let keep = |x: f32| in_band(x);
        for i in ThreadIndex::grid_stride(input.len().min(flags.len())) {
            flags.set(i, u8::from(keep(input.at(i.get()))));
        }
    }
}

kernel! {
    /// `out[i] = 2 × input[i]` for `i < min(n, out)`: a grid-stride loop in which each thread,
    /// before it reads its element, asks L2 for the element one grid stride ahead — the one its
    /// next step reads (`Slice::prefetch_l2`; CUDA C++ `cuda::ptx::prefetch_L2(p + i)`, behind an
    /// `i < n` test that the slice makes itself: past the end it does nothing). A prefetch is a
    /// hint: it moves nothing into registers and nothing waits for it, so the answer is the same
    /// with or without it; only the time may change (the library's `select` asks L2 for a tile
    /// a later block will load while its own waits for its look-back). Any grid and block.
    pub fn double_ahead(input: Slice<f32>, out: DisjointSlice<f32>) {
        let stride = grid_dim_x() as usize * block_dim_x() as usize;
        for i in ThreadIndex::grid_stride(input.len().min(out.len())) {
            input.prefetch_l2(i.get() + stride);
            out.set(i, 2.0 * input.at(i.get()));
        }
    }
}
