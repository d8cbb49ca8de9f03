//! What the benches need on the device to check every timed launch of a scan (issue #12): an
//! output compared element by element with a reference held on the device, the mismatches
//! counted into a word the host reads once per sample. No lesson here, and never timed.
//!
//! | kernel | compares | for |
//! |---|---|---|
//! | [`count_mismatches_32`], [`count_mismatches_64`] | bits | `i32` scans, integer typed scans, min/max of any type |
//! | [`count_outside_f32`], [`count_outside_f64`] | `\|got − exact\| ≤ bound` in `f64` | float sums (typed look-back scans) |
//!
//! The host side is `reduce_scan::verify` (`DeviceCheck`).

use crate::device::atomic::red_add_u64;
use crate::device::global::{Global, GlobalMut};
use crate::device::thread::{block_dim_x, global_idx_x, grid_dim_x};
use crate::kernel;

/// Threads per block of the check kernels (any multiple of 32 up to 1024 works: they use no
/// shared memory and no barrier).
pub const CHECK_BLOCK: u32 = 256;

/// Counts the indices `i < n` for which `is_wrong(i)`, over a grid-stride loop, and adds this
/// thread's count into `*count` (nothing when it is 0).
///
/// # Safety
/// `count` is valid, 8-byte aligned global memory; `is_wrong` may be called with any `i < n`.
#[inline(always)]
unsafe fn count_where(n: u32, count: GlobalMut<u64>, is_wrong: impl Fn(usize) -> bool) {
    let n = n as usize;
    let stride = grid_dim_x() as usize * block_dim_x() as usize;
    let mut i = global_idx_x();
    let mut wrong = 0u64;
    while i < n {
        wrong += u64::from(is_wrong(i));
        i += stride;
    }
    if wrong > 0 {
        // SAFETY: the caller's promise on `count`.
        unsafe { red_add_u64(count, wrong) };
    }
}

/// Whether the words at `got` and `want` differ.
///
/// # Safety
/// Both are valid for reading one `W`.
#[inline(always)]
unsafe fn mismatch<W: Copy + PartialEq>(got: Global<W>, want: Global<W>) -> bool {
    // SAFETY: the caller's promise.
    unsafe { got.read(0) != want.read(0) }
}

/// Counts the elements of `got` whose bits differ from `want`'s, into `*count`.
///
/// # Concept
/// A check, not a lesson: an exact comparison of two arrays where they are, on the device, so
/// that a bench can check every timed launch of a scan without copying n elements to the host
/// per launch. Mismatches are counted per thread and folded into one word with a `red.add`
/// (at most one per thread, none when everything matches).
///
/// # Previous problem → fix
/// The scan benches checked the last launch of a sample at most (a host check of n elements
/// per launch would dominate the bench at 10⁹ elements): an intermittent wrong result could
/// hide behind a good median. This kernel, enqueued after each timed launch outside its
/// events, reads the output and the reference once each at memory speed.
///
/// # Execution
/// 1. Thread `t` of the grid visits `i = t, t + T, t + 2T, …` (T the grid's threads), below n.
/// 2. It counts the `i` where `got[i] != want[i]` as `W` (the bits: `u32` or `u64` words).
/// 3. A thread whose count is not 0 adds it to `*count` (`red_add_u64`).
///
/// # Launch
/// Any 1-D grid (the host uses a few blocks per SM), blocks of [`CHECK_BLOCK`] threads (any
/// size works), no shared memory.
///
/// # Preconditions
/// `got` and `want` hold `n` words each; `count` is one `u64` the host zeroes before the
/// launches it counts.
///
/// # Safety
/// Every read is at `i < n`; the one write is an atomic add to `count`. No barrier, no warp
/// operation: any thread may leave at any time.
///
/// # Measured
/// Not measured: it runs outside the timed events, a check of the benches, not a variant.
#[inline(always)]
pub unsafe fn count_mismatches_generic<W: Copy + PartialEq>(
    got: Global<W>,
    want: Global<W>,
    n: u32,
    count: GlobalMut<u64>,
) {
    // SAFETY: both hold n words; `count` is the caller's word.
    unsafe { count_where(n, count, |i| mismatch(got.offset(i), want.offset(i))) }
}

/// Counts the elements of `got` farther than `bound[i]` from `exact[i]`, into `*count`.
///
/// # Concept
/// A check, not a lesson: a float prefix sum is rounded in an order that changes from run to
/// run (the look-back), so it is compared with the exact prefix sum within a bound rather than
/// bit for bit; both arrays are computed once on the host and held on the device.
///
/// # Previous problem → fix
/// As [`count_mismatches_generic`], for float sums: the typed float scans checked the last
/// launch of a sample on the host, at the cost of a download and an n-element host check.
///
/// # Execution
/// 1. Thread `t` visits `i = t, t + T, …` below n, as [`count_mismatches_generic`].
/// 2. It widens `got[i]` to `f64` (exact for `f32` and `f64`), computes
///    `err = |got[i] − exact[i]|` in `f64` and counts `i` unless `err ≤ bound[i]` (a NaN
///    counts). These are the very operations of the host's check
///    (`reduce_scan::scan::cpu::check`): one rounded subtraction and an exact `abs` and
///    comparison, IEEE on both sides, so the device accepts exactly what the host would.
/// 3. A thread whose count is not 0 adds it to `*count` (`red_add_u64`).
///
/// # Launch
/// As [`count_mismatches_generic`].
///
/// # Preconditions
/// `got`, `exact` and `bound` hold `n` elements each; `count` is one `u64` the host zeroes
/// before the launches it counts.
///
/// # Safety
/// Every read is at `i < n`; the one write is an atomic add to `count`. No barrier, no warp
/// operation.
///
/// # Measured
/// Not measured: it runs outside the timed events, a check of the benches, not a variant.
#[inline(always)]
pub unsafe fn count_outside_generic<T: Copy + Into<f64>>(
    got: Global<T>,
    exact: Global<f64>,
    bound: Global<f64>,
    n: u32,
    count: GlobalMut<u64>,
) {
    let outside = |i: usize| {
        // SAFETY: i < n; the three arrays hold n elements.
        let (g, e, b) = unsafe { (got.read(i).into(), exact.read(i), bound.read(i)) };
        let err: f64 = (g - e).abs();
        !matches!(err.partial_cmp(&b), Some(core::cmp::Ordering::Less | core::cmp::Ordering::Equal))
    };
    // SAFETY: `count` is the caller's word; `outside` reads only below n.
    unsafe { count_where(n, count, outside) }
}

/// One entry point of a generic body: `name = generic(args)`.
macro_rules! check_kernel {
    ($(#[$m:meta])* $name:ident = $generic:ident($($arg:ident: $ty:ty),*)) => {
        kernel! {
            $(#[$m])*
            ///
            /// # Safety
            /// The generic body's preconditions (its `# Preconditions` and `# Safety`).
            pub unsafe fn $name($($arg: $ty),*) {
                // SAFETY: this kernel's contract is the generic body's.
                unsafe { $generic($($arg),*) }
            }
        }
    };
}

check_kernel!(
    /// [`count_mismatches_generic`] on 32-bit words (`i32`, `u32`, `f32` min/max).
    count_mismatches_32 = count_mismatches_generic(got: Global<u32>, want: Global<u32>, n: u32, count: GlobalMut<u64>));
check_kernel!(
    /// [`count_mismatches_generic`] on 64-bit words (`i64`, `u64`, `f64` min/max).
    count_mismatches_64 = count_mismatches_generic(got: Global<u64>, want: Global<u64>, n: u32, count: GlobalMut<u64>));
check_kernel!(
    /// [`count_outside_generic`] on `f32` sums.
    count_outside_f32 = count_outside_generic(got: Global<f32>, exact: Global<f64>, bound: Global<f64>, n: u32, count: GlobalMut<u64>));
check_kernel!(
    /// [`count_outside_generic`] on `f64` sums.
    count_outside_f64 = count_outside_generic(got: Global<f64>, exact: Global<f64>, bound: Global<f64>, n: u32, count: GlobalMut<u64>));
