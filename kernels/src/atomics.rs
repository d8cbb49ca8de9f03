//! Test kernels of the device layer's atomics (issue #59): every CUDA atomic on shared and global
//! words, hit by every thread of several blocks, and a 256-bin histogram. `tests/atomics.rs` runs
//! them on the emulator against a CPU count; being in the PTX, they also put every atomic's PTX
//! in front of ptxas (`tests/ptx.rs`, sm_70 to sm_90).

use crate::device::atomic::{
    AtomicAdd, AtomicAnd, AtomicCas, AtomicExch, AtomicMax, AtomicMin, AtomicOr, AtomicSub, AtomicXor,
};
use crate::device::global::GlobalMut;
use crate::device::kernel;
use crate::device::slice::{AtomicSlice, Slice, ThreadIndex};
use crate::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use crate::static_shared;

/// Bins of [`atomic_histogram()`].
pub const BINS: usize = 256;

kernel! {
    /// The 256-bin histogram of `input`'s low bytes, added into `hist` (which the host zeroes):
    /// each block counts its grid-stride share into a shared histogram with shared `atomicAdd`,
    /// then adds its non-zero bins into `hist` with global `atomicAdd`. Any grid and block size.
    pub fn atomic_histogram(input: Slice<u32>, hist: AtomicSlice<u32>) {
        let bins = static_shared!(HISTOGRAM_BINS: [u32; BINS]);
        let (t, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
        for b in (t..BINS).step_by(threads) {
            // SAFETY: b < BINS; each thread writes its own bins before the barrier.
            unsafe { bins.write(b, 0) };
        }
        sync_threads();
        for i in ThreadIndex::grid_stride(input.len()) {
            let bin = (input.at(i.get()) & 0xff) as usize;
            // SAFETY: bin < 256 = BINS; every access to the bins in this interval is atomic.
            unsafe { bins.atomic_add(bin, 1) };
        }
        sync_threads();
        for b in (t..BINS).step_by(threads) {
            // SAFETY: b < BINS; the barrier ended the atomics, and no thread writes the bins now.
            let count = unsafe { bins.read(b) };
            if count != 0 {
                hist.atomic_add(b, count);
            }
        }
    }
}

/// The integer types [`atomic_every_int()`] is instantiated for: every atomic but
/// `atomicInc`/`atomicDec`, and the values the test gives them.
pub trait EveryInt:
    AtomicAdd + AtomicSub + AtomicMin + AtomicMax + AtomicAnd + AtomicOr + AtomicXor + AtomicExch + AtomicCas + PartialEq
{
    /// `x` as this type (truncated or extended as `as` does).
    fn of(x: u64) -> Self;
    /// The largest value.
    const MAX: Self;
}

macro_rules! every_int {
    ($($t:ty),*) => {$(
        impl EveryInt for $t {
            #[inline(always)]
            fn of(x: u64) -> Self {
                x as $t
            }
            const MAX: Self = <$t>::MAX;
        }
    )*};
}
every_int!(i32, u32, i64, u64);

/// Words per copy of the test's operations in [`atomic_every_int()`]: add, sub, min, max, and, or,
/// xor, exch, cas, the count of successful cas, and two spare words.
pub const EVERY_WORDS: usize = 12;

/// Every thread's atomics on the words `w` (one per operation), as [`atomic_every_int()`] documents.
macro_rules! every_op {
    ($w:ident, $T:ty, $g:expr) => {{
        let g: u64 = $g;
        let bit = <$T>::of(1 << (g % 32));
        // SAFETY: every call's word is in bounds (the caller's), and touched only atomically in
        // this barrier interval.
        unsafe {
            $w.atomic_add(0, <$T>::of(g + 1));
            $w.atomic_sub(1, <$T>::of(1));
            $w.atomic_min(2, <$T>::of(g + 5));
            $w.atomic_max(3, <$T>::of(g + 5));
            $w.atomic_and(4, <$T>::of(!(1u64 << (g % 32))));
            $w.atomic_or(5, bit);
            $w.atomic_xor(6, <$T>::of(g));
            $w.atomic_exch(7, <$T>::of(g + 1));
            if $w.atomic_cas(8, <$T>::of(0), <$T>::of(g + 1)) == <$T>::of(0) {
                $w.atomic_add(9, <$T>::of(1));
            }
        }
    }};
}

kernel! {
    /// Every atomic of an integer type, by every thread, on one set of global words
    /// (`out[0 .. 12]`: the host sets word 2 to `T::MAX`, word 4 to all ones, the rest to 0) and
    /// on one set of shared words per block (set the same way by thread 0), which thread 0 copies
    /// to `out[12 (b + 1) ..]` after the block's atomics. For thread `g` (global index): word 0
    /// `+= g + 1`, 1 `-= 1`, 2 `min= g + 5`, 3 `max= g + 5`, 4 `&= !(1 << g % 32)`, 5 `|= 1 << g %
    /// 32`, 6 `^= g`, 7 `= g + 1` (exch), 8 `cas(0, g + 1)`, and word 9 counts the cas that found 0.
    ///
    /// # Safety
    /// `out` holds `12 (gridDim + 1)` elements.
    pub unsafe fn atomic_every_int<T: EveryInt>(out: GlobalMut<T>) for [i32, u32, i64, u64] {
        let words = static_shared!(EVERY_INT_WORDS: [T; EVERY_WORDS]);
        let t = thread_idx_x() as usize;
        if t == 0 {
            for i in 0..EVERY_WORDS {
                let init = if i == 2 { T::MAX } else if i == 4 { T::of(u64::MAX) } else { T::of(0) };
                // SAFETY: i < EVERY_WORDS; thread 0 alone writes them before the barrier.
                unsafe { words.write(i, init) };
            }
        }
        sync_threads();
        let g = (block_idx_x() as usize * block_dim_x() as usize + t) as u64;
        every_op!(words, T, g);
        every_op!(out, T, g);
        sync_threads();
        if t == 0 {
            let base = EVERY_WORDS * (block_idx_x() as usize + 1);
            for i in 0..EVERY_WORDS {
                // SAFETY: in bounds (the caller's); this block's slots, written by thread 0 alone;
                // the barrier ended the shared atomics.
                unsafe { out.write(base + i, words.read(i)) };
            }
        }
    }
}

kernel! {
    /// `atomicInc` and `atomicDec` (`u32` only) by every thread, with limit 9, on global words
    /// `out[0]` (inc) and `out[1]` (dec), both starting at 0, and on two shared words per block,
    /// which thread 0 copies to `out[2 + 2b]` and `out[3 + 2b]`. After `k` increments a word holds
    /// `k mod 10`; after `k` decrements, `(10 - k mod 10) mod 10`.
    ///
    /// # Safety
    /// `out` holds `2 (gridDim + 1)` elements.
    pub unsafe fn atomic_inc_dec(out: GlobalMut<u32>) {
        let words = static_shared!(INC_DEC_WORDS: [u32; 2]);
        let t = thread_idx_x() as usize;
        if t < 2 {
            // SAFETY: t < 2; one writer per word before the barrier.
            unsafe { words.write(t, 0) };
        }
        sync_threads();
        // SAFETY: in bounds; only atomics touch these words in this interval.
        unsafe {
            words.atomic_inc(0, 9);
            words.atomic_dec(1, 9);
            out.atomic_inc(0, 9);
            out.atomic_dec(1, 9);
        }
        sync_threads();
        if t < 2 {
            // SAFETY: in bounds (the caller's); this block's slot t, written by thread t alone.
            unsafe { out.write(2 + 2 * block_idx_x() as usize + t, words.read(t)) };
        }
    }
}

/// The float types of [`atomic_every_float()`]: `atomicAdd` and `atomicExch`.
pub trait EveryFloat: AtomicAdd + AtomicExch {
    /// `x` as this type.
    fn of(x: u32) -> Self;
}
impl EveryFloat for f32 {
    #[inline(always)]
    fn of(x: u32) -> Self {
        x as f32
    }
}
impl EveryFloat for f64 {
    #[inline(always)]
    fn of(x: u32) -> Self {
        x as f64
    }
}

kernel! {
    /// Float `atomicAdd` (of 1, exact at these counts) and `atomicExch` (of `g + 1`) by every
    /// thread `g`, on `out[0]` and `out[1]` (0 at launch) and on two shared words per block, which
    /// thread 0 copies to `out[2 + 2b]` and `out[3 + 2b]`.
    ///
    /// # Safety
    /// `out` holds `2 (gridDim + 1)` elements.
    pub unsafe fn atomic_every_float<T: EveryFloat>(out: GlobalMut<T>) for [f32, f64] {
        let words = static_shared!(EVERY_FLOAT_WORDS: [T; 2]);
        let t = thread_idx_x() as usize;
        if t < 2 {
            // SAFETY: t < 2; one writer per word before the barrier.
            unsafe { words.write(t, T::of(0)) };
        }
        sync_threads();
        let g = block_idx_x() * block_dim_x() + t as u32;
        // SAFETY: in bounds; only atomics touch these words in this interval.
        unsafe {
            words.atomic_add(0, T::of(1));
            words.atomic_exch(1, T::of(g + 1));
            out.atomic_add(0, T::of(1));
            out.atomic_exch(1, T::of(g + 1));
        }
        sync_threads();
        if t < 2 {
            // SAFETY: in bounds (the caller's); this block's slot t, written by thread t alone.
            unsafe { out.write(2 + 2 * block_idx_x() as usize + t, words.read(t)) };
        }
    }
}
