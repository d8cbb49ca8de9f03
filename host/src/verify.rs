//! Cheap checks of every timed launch, for the criterion benches (issue #12: "every timed
//! run's result is checked").
//!
//! * [`Expected`]: one reduction's answer, computed once (the exact float sum and its bound,
//!   or the exact value), then compared with each launch's answer in a few operations.
//! * [`DeviceCheck`]: a scan's reference held on the device, and the check kernels of
//!   `kernels::check` enqueued after each launch: each adds the number of elements that
//!   differ (bits) or lie outside their bound (float sums) into that launch's counter; the host
//!   reads the counters once per batch ([`DeviceCheck::counts`], [`batch_verdict`]).
//!
//! ```
//! use reduce_scan::{Backend, verify::{DeviceCheck, batch_verdict}};
//! let backend = Backend::emulator();
//! let mut check = DeviceCheck::exact(&backend, &[1i32, 3, 6])?;
//! let good = backend.upload(&[1i32, 3, 6])?;
//! let bad = backend.upload(&[1i32, 4, 6])?;
//! check.start_batch(&backend, 2)?;
//! check.enqueue(&backend, &good, 0)?;
//! check.enqueue(&backend, &bad, 1)?;
//! let counts = check.counts(&backend)?;
//! assert_eq!(counts, [0, 1]);
//! assert!(batch_verdict(&counts, 3).unwrap_err().starts_with("launch 1 of 2: 1 of 3 elements"));
//! # Ok::<(), reduce_scan::Error>(())
//! ```

use crate::backend::{Backend, DeviceBuffer, Kernel, LaunchConfig};
use crate::cpu::{exact_sum, float_sum_bound, reference};
use crate::error::{Error, Result};
use crate::kernel_ref;
use crate::registry::{Elem, Op};
use crate::scan::Kind;
use crate::types::Value;
use kernels::check::CHECK_BLOCK;

/// What one reduction must give, computed once per input: the value bit for bit (integers,
/// min, max), or the exact sum and the bound of a tree of the variant's depth (float sums,
/// `reduce::cpu::check`'s test with its reference computed once).
#[derive(Clone, Copy, Debug)]
pub enum Expected<T> {
    /// The exact answer.
    Bits(T),
    /// A float sum: `|got − exact| ≤ bound`, `bound = float_sum_bound(u, depth, abs)`.
    Within {
        /// The exact sum (double-double, rounded to `f64`).
        exact: f64,
        /// The error bound.
        bound: f64,
        /// The depth of the tree the bound is for.
        depth: u64,
        /// Σ|x|.
        abs: f64,
    },
}

impl<T: Value> Expected<T> {
    /// The answer `op` over `data` must give from a tree of `depth` (one pass over `data`).
    pub fn of(op: Op, data: &[T], depth: u64) -> Self {
        if op == Op::Sum && T::ELEM.is_float() {
            let (exact, abs) = exact_sum(data);
            Expected::Within { exact, bound: float_sum_bound(T::UNIT_ROUNDOFF, depth, abs), depth, abs }
        } else {
            Expected::Bits(reference(op, data))
        }
    }

    /// Does `got` pass? The same test and message as `reduce::cpu::check`, in O(1).
    pub fn check(&self, got: T) -> std::result::Result<(), String> {
        match *self {
            Expected::Bits(want) if want.same_bits(got) => Ok(()),
            Expected::Bits(want) => {
                Err(format!("expected {want} (bits {:#x}), got {got} (bits {:#x})", want.bits(), got.bits()))
            }
            Expected::Within { exact, bound, depth, abs } => {
                let err = (got.to_f64() - exact).abs();
                if err <= bound {
                    Ok(())
                } else {
                    Err(format!(
                        "expected {exact:e} (exact) ± {bound:e} (γ({depth})·Σ|x|, Σ|x| = {abs:e}), got {got} (error {err:e})"
                    ))
                }
            }
        }
    }

    /// The first of `answers` (launch `i` of a batch in slot `i`) that fails, as
    /// `launch i of k: why`.
    pub fn first_wrong(&self, answers: &[T]) -> std::result::Result<(), String> {
        for (i, &got) in answers.iter().enumerate() {
            self.check(got).map_err(|why| format!("launch {i} of {}: {why}", answers.len()))?;
        }
        Ok(())
    }
}

/// `Ok` when no launch of a batch had a wrong element; else which launch first did, how many
/// of its `n` elements were wrong, and how many launches of the batch were wrong in all.
/// `counts[i]` is launch `i`'s count ([`DeviceCheck::counts`]).
pub fn batch_verdict(counts: &[u64], n: usize) -> std::result::Result<(), String> {
    let Some(first) = counts.iter().position(|&c| c > 0) else { return Ok(()) };
    let bad = counts.iter().filter(|&&c| c > 0).count();
    Err(format!(
        "launch {first} of {}: {} of {n} elements differ from the reference ({bad} launch(es) of the batch wrong)",
        counts.len(),
        counts[first]
    ))
}

/// Device bytes a [`DeviceCheck`] of `n` elements of `elem` for `op` holds: the reference
/// (n elements), or for a float sum the exact prefix sums and their bounds (two `f64` each).
pub fn reference_bytes(elem: Elem, op: Op, n: usize) -> u64 {
    let per = if op == Op::Sum && elem.is_float() { 16 } else { elem.size() as u64 };
    per * n as u64
}

/// Blocks of a check launch over `n` elements on `multiprocessors` SMs: enough for every
/// element to have its thread, at most 8 blocks of [`CHECK_BLOCK`] per SM (the threads then
/// loop), at least 1.
pub fn check_grid(n: usize, multiprocessors: u32) -> u32 {
    let cap = (multiprocessors.max(1) as usize) * 8;
    n.div_ceil(CHECK_BLOCK as usize).clamp(1, cap) as u32
}

/// The reference on the device: bits, or exact sums and bounds.
enum Reference<T: Value> {
    Bits(DeviceBuffer<T>),
    Within { exact: DeviceBuffer<f64>, bound: DeviceBuffer<f64> },
}

/// A scan's reference on the device and one mismatch counter per launch of a batch. After
/// each timed launch, outside its events, [`enqueue`](Self::enqueue) queues a check kernel
/// that reads the output and the reference once; nothing comes back to the host until
/// [`counts`](Self::counts).
pub struct DeviceCheck<T: Value> {
    reference: Reference<T>,
    n: usize,
    counts: DeviceBuffer<u64>,
    launches: usize,
}

impl<T: Value> DeviceCheck<T> {
    /// Every element must equal `want`'s, bit for bit.
    pub fn exact(backend: &Backend, want: &[T]) -> Result<Self> {
        Self::with(backend, Reference::Bits(backend.upload(want)?), want.len())
    }

    /// Element `i` must lie within `bound[i]` of `exact[i]` (`T` a float).
    pub fn within(backend: &Backend, exact: &[f64], bound: &[f64]) -> Result<Self> {
        if !T::ELEM.is_float() || exact.len() != bound.len() {
            return Err(Error::Invalid(format!(
                "a bounded check needs a float type and as many bounds as sums ({}: {} sums, {} bounds)",
                T::ELEM.name(),
                exact.len(),
                bound.len()
            )));
        }
        let reference = Reference::Within { exact: backend.upload(exact)?, bound: backend.upload(bound)? };
        Self::with(backend, reference, exact.len())
    }

    /// The check of the `kind` scan with `op` of `data` by a tree of `depth`: exact
    /// (integers, min, max), or within `scan::cpu::check`'s bound (float sums).
    pub fn for_scan(backend: &Backend, op: Op, kind: Kind, data: &[T], depth: u64) -> Result<Self> {
        use crate::scan::cpu;
        if op == Op::Sum && T::ELEM.is_float() {
            let (exact, bound) = cpu::sum_targets(kind, data, depth);
            Self::within(backend, &exact, &bound)
        } else {
            Self::exact(backend, &cpu::reference(op, kind, data))
        }
    }

    fn with(backend: &Backend, reference: Reference<T>, n: usize) -> Result<Self> {
        if n == 0 || n > u32::MAX as usize {
            return Err(Error::Invalid(format!("a device check covers 1 to 2^32 - 1 elements, not {n}")));
        }
        Ok(Self { reference, n, counts: backend.alloc::<u64>(1)?, launches: 0 })
    }

    /// Zeroed counters for a batch of `launches` launches (reused when they fit).
    pub fn start_batch(&mut self, backend: &Backend, launches: usize) -> Result<()> {
        if self.counts.len() < launches {
            self.counts = backend.alloc::<u64>(launches)?;
        } else {
            backend.write(&mut self.counts, &vec![0; launches])?;
        }
        self.launches = launches;
        Ok(())
    }

    /// Queues the check of `got` (its first n elements) as launch `launch` of the batch.
    pub fn enqueue(&mut self, backend: &Backend, got: &DeviceBuffer<T>, launch: usize) -> Result<()> {
        if launch >= self.launches || got.len() < self.n {
            return Err(Error::Invalid(format!(
                "check of launch {launch} of a batch of {} on {} elements (the reference has {})",
                self.launches,
                got.len(),
                self.n
            )));
        }
        let cfg = LaunchConfig {
            grid: check_grid(self.n, backend.info().multiprocessors),
            block: CHECK_BLOCK,
            shared_bytes: 0,
        };
        let (g, n) = (got.as_ptr(), self.n as u32);
        let count = self.counts.as_mut_ptr().wrapping_add(launch);
        // SAFETY: `got`, the reference and the bounds hold at least n elements (checked above
        // and at construction); `count` is word `launch` < counts.len() of a zeroed buffer; the
        // kernels take any grid and block and no shared memory. Bits are compared as words of
        // T's size.
        unsafe {
            match (&self.reference, T::ELEM.size()) {
                (Reference::Bits(want), 4) => {
                    backend.launch(&MISMATCHES_32, cfg, (g.cast(), want.as_ptr().cast(), n, count))
                }
                (Reference::Bits(want), _) => {
                    backend.launch(&MISMATCHES_64, cfg, (g.cast(), want.as_ptr().cast(), n, count))
                }
                (Reference::Within { exact, bound }, 4) => {
                    backend.launch(&OUTSIDE_F32, cfg, (g.cast(), exact.as_ptr(), bound.as_ptr(), n, count))
                }
                (Reference::Within { exact, bound }, _) => {
                    backend.launch(&OUTSIDE_F64, cfg, (g.cast(), exact.as_ptr(), bound.as_ptr(), n, count))
                }
            }
        }
    }

    /// Waits for the batch's checks and returns each launch's count of wrong elements.
    pub fn counts(&self, backend: &Backend) -> Result<Vec<u64>> {
        backend.download_prefix(&self.counts, self.launches)
    }
}

type Words<W> = (*const W, *const W, u32, *mut u64);
type Floats<F> = (*const F, *const f64, *const f64, u32, *mut u64);

/// The PTX symbols of the check kernels (`tests/ptx.rs` requires each as an `.entry`).
pub const CHECK_KERNELS: [&str; 4] = [MISMATCHES_32.name, MISMATCHES_64.name, OUTSIDE_F32.name, OUTSIDE_F64.name];

const MISMATCHES_32: Kernel<Words<u32>> = kernel_ref!(kernels::check::count_mismatches_32(a, b, n, c));
const MISMATCHES_64: Kernel<Words<u64>> = kernel_ref!(kernels::check::count_mismatches_64(a, b, n, c));
const OUTSIDE_F32: Kernel<Floats<f32>> = kernel_ref!(kernels::check::count_outside_f32(a, e, b, n, c));
const OUTSIDE_F64: Kernel<Floats<f64>> = kernel_ref!(kernels::check::count_outside_f64(a, e, b, n, c));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_reference_bytes_and_verdict() {
        assert_eq!(check_grid(1, 132), 1);
        assert_eq!(check_grid(257, 132), 2);
        assert_eq!(check_grid(1 << 30, 132), 132 * 8);
        assert_eq!(check_grid(0, 0), 1);
        assert_eq!(reference_bytes(Elem::I32, Op::Sum, 1_000_000_000), 4_000_000_000);
        assert_eq!(reference_bytes(Elem::F32, Op::Sum, 10), 160);
        assert_eq!(reference_bytes(Elem::F64, Op::Max, 10), 80);
        assert!(batch_verdict(&[0, 0], 5).is_ok());
        assert_eq!(
            batch_verdict(&[0, 2, 0, 7], 5).unwrap_err(),
            "launch 1 of 4: 2 of 5 elements differ from the reference (2 launch(es) of the batch wrong)"
        );
    }

    #[test]
    fn expected_is_cpu_check_computed_once() {
        use crate::cpu::check;
        let data: Vec<f32> = (0..1000).map(|i| f32::random((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))).collect();
        let e = Expected::of(Op::Sum, &data, 20);
        let Expected::Within { exact, bound, .. } = e else { panic!("a float sum is bounded") };
        for got in [exact as f32, (exact + 0.9 * bound) as f32, (exact + 3.0 * bound) as f32, f32::NAN] {
            assert_eq!(e.check(got), check(Op::Sum, &data, got, 20), "{got}");
        }
        let ints = [3u64, u64::MAX, 9];
        let e = Expected::of(Op::Sum, &ints, 2);
        assert!(e.check(11).is_ok());
        assert_eq!(e.check(12), check(Op::Sum, &ints, 12, 2));
        assert_eq!(e.first_wrong(&[11, 11, 12]).unwrap_err(), format!("launch 2 of 3: {}", e.check(12).unwrap_err()));
        assert!(Expected::of(Op::Max, &[-0.0f64, 0.0], 1).check(-0.0).is_err());
    }
}
