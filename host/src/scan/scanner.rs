//! [`Scanner`]: the library's scan object, generic over element type and operator.

use std::marker::PhantomData;
use std::ops::Range;

use kernels::types::Sum;

use super::by_device::choose_on;
use super::kind::Kind;
use super::plan::check_of;
use super::workspace::ScanWorkspace;
use crate::backend::{Backend, DeviceBuffer};
use crate::error::{Error, Result};
use crate::types::{OpKind, Value, check_layout};

/// A reusable scan of elements of `T` with the operator `O` (`Sum`, `Min`, `Max` of
/// `kernels::types`, re-exported as `reduce_scan::{Sum, Min, Max}`): the single-pass decoupled
/// look-back scan, one launch. It owns its temporary storage (one or two status words per tile,
/// the 64-bit types' value slots, and a staging copy for sub-ranges that do not start on a 16-byte
/// boundary) and reuses it, so repeated scans allocate nothing once the largest input has been
/// seen. It runs on its backend's device and stream.
///
/// ```
/// use reduce_scan::{Backend, Max, Scanner, Sum};
/// let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
/// let input = backend.upload(&[1, 2, 3, 4])?;
/// let mut output = backend.alloc::<i32>(4)?;
/// let mut scanner = Scanner::<i32, Sum>::new(&backend);
/// scanner.exclusive(&input, &mut output)?;
/// assert_eq!(backend.download(&output)?, [0, 1, 3, 6]);
/// scanner.inclusive_range(&input, 1..3, &mut output)?; // output[..2] = scan of input[1..3]
/// assert_eq!(backend.download(&output)?[..2], [2, 5]);
///
/// let floats = backend.upload(&[2.5f32, -1.0, 7.0])?;
/// let mut maxima = backend.alloc::<f32>(3)?;
/// let mut running_max = Scanner::<f32, Max>::new(&backend);
/// running_max.enqueue(reduce_scan::scan::Kind::Inclusive, &floats, 0..3, &mut maxima)?; // queued
/// running_max.wait()?;
/// assert_eq!(backend.download(&maxima)?, [2.5, 2.5, 7.0]);
/// # Ok::<(), reduce_scan::Error>(())
/// ```
///
/// **Which kernel** (the plan, [`choose_on`](super::choose_on)): the variant the per-device
/// table names for this GPU, element type and size (`lookback`, or the warp-specialized
/// `lookback_warpspec_8x12x6` where a sweep found it faster; `host/src/scan/plan_by_device.csv`),
/// in the row of the pair: the classic kernel for `i32` sums, `{variant}__{type}_{op}` for every
/// other pair. The shape is [`Reducer`](crate::sum::Reducer)'s, for the same reasons (its module docs): the
/// pair is fixed per object, the methods are the same for every pair.
///
/// **Sub-ranges.** `*_range(input, range, output)` scans `input[range]` into
/// `output[..range.len()]`. The kernels load 16 bytes at a time, so a range that does not
/// start on a 16-byte boundary is first copied (on the device, on the same stream) into the
/// scanner's staging buffer; one that does is scanned in place.
pub struct Scanner<'b, T: Value = i32, O: OpKind = Sum> {
    backend: &'b Backend,
    /// The status words and value slots (one workspace shape for every scan).
    work: ScanWorkspace<T>,
    /// The copy of a sub-range that does not start on a 16-byte boundary.
    staging: Option<DeviceBuffer<T>>,
    op: PhantomData<fn() -> O>,
}

impl<'b, T: Value, O: OpKind> Scanner<'b, T, O> {
    /// A scanner on `backend` (its device and stream). Allocates nothing until the first scan.
    pub fn new(backend: &'b Backend) -> Self {
        Self { backend, work: ScanWorkspace::new(), staging: None, op: PhantomData }
    }

    /// `output[i] = input[0] ⊕ … ⊕ input[i]` for every element of `input`; waits. Integer sums
    /// wrap; float min/max propagate NaN from the first NaN on. `output` holds at least
    /// `input.len()` elements; an empty `input` is a no-op.
    pub fn inclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<()> {
        self.inclusive_range(input, 0..input.len(), output)
    }

    /// `output[i] = input[0] ⊕ … ⊕ input[i-1]`, `output[0]` = the identity (0, the type's
    /// largest value for min, its smallest for max); waits.
    pub fn exclusive(&mut self, input: &DeviceBuffer<T>, output: &mut DeviceBuffer<T>) -> Result<()> {
        self.exclusive_range(input, 0..input.len(), output)
    }

    /// The inclusive scan of `input[range]` (any start, any length) into
    /// `output[..range.len()]`; waits.
    pub fn inclusive_range(
        &mut self,
        input: &DeviceBuffer<T>,
        range: Range<usize>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        self.enqueue(Kind::Inclusive, input, range, output)?;
        self.wait()
    }

    /// The exclusive scan of `input[range]` into `output[..range.len()]`; waits.
    pub fn exclusive_range(
        &mut self,
        input: &DeviceBuffer<T>,
        range: Range<usize>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        self.enqueue(Kind::Exclusive, input, range, output)?;
        self.wait()
    }

    /// Queues the `kind` scan of `input[range]` into `output[..range.len()]` on the backend's
    /// stream and returns at once; [`wait`](Self::wait) (or any download, which waits for the
    /// stream) before reading `output`, and keep both buffers alive until then. An empty range
    /// queues nothing.
    pub fn enqueue(
        &mut self,
        kind: Kind,
        input: &DeviceBuffer<T>,
        range: Range<usize>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        if range.start > range.end || range.end > input.len() {
            return Err(Error::Invalid(format!(
                "{kind} scan of elements {}..{} of a buffer of {}: the range must lie within the buffer",
                range.start,
                range.end,
                input.len()
            )));
        }
        check_layout::<T>()?;
        if range.is_empty() {
            return Ok(());
        }
        let n = range.len();
        let info = self.backend.info();
        let cc = info.compute_capability;
        let inst = choose_on::<T>(O::OP, info, n)?;
        check_of(&inst, kind, n, (n, output.len()), cc)?;
        let src = self.source(input, range)?;
        let mut launches = self.work.launches(self.backend, &inst, kind, (src, output.as_mut_ptr()), n)?;
        // SAFETY: check_of verified n ≥ 1, that the output holds n and that the grid fits; `src`
        // is n elements of T, 16-byte aligned (source), distinct from `output` (`&` and `&mut`),
        // and both stay alive until the caller waits (the method's contract).
        unsafe { self.work.launch(self.backend, &mut launches) }
    }

    /// Waits for every scan this scanner (or anything else on its stream) queued; reports a
    /// kernel's failure.
    pub fn wait(&self) -> Result<()> {
        self.backend.synchronize()
    }

    /// The device address the kernel reads `input[range]` from: in place when it starts on a
    /// 16-byte boundary, else a copy in the staging buffer (queued on the same stream).
    fn source(&mut self, input: &DeviceBuffer<T>, range: Range<usize>) -> Result<*const T> {
        let at = input.as_ptr().wrapping_add(range.start);
        if (at as usize).is_multiple_of(16) {
            return Ok(at);
        }
        if self.staging.as_ref().is_none_or(|s| s.len() < range.len()) {
            self.staging = Some(self.backend.alloc_uninit::<T>(range.len())?);
        }
        let staging = self.staging.as_mut().ok_or_else(|| missing("staging"))?;
        self.backend.copy_range(input, range, staging)?;
        Ok(staging.as_ptr())
    }
}

/// The error of a buffer `prepare` or `source` made and then did not find (never expected).
fn missing(what: &str) -> Error {
    Error::Invalid(format!("the scanner's {what} buffer is missing"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::types::{Max, Min};

    #[test]
    fn an_i32_scanner_reuses_its_status_words_across_sizes() {
        // Status words of a larger launch left where a smaller one looks, and the other way round.
        let b = Backend::emulator();
        let tile = super::super::fastest(b.info().compute_capability).tile() as usize;
        let data: Vec<i32> = (0..12 * tile as i32 + 5).map(|i| i.wrapping_mul(2_654_435_761u32 as i32) >> 7).collect();
        let input = b.upload(&data).unwrap();
        let mut out = b.alloc::<i32>(data.len()).unwrap();
        let mut s = Scanner::<i32, Sum>::new(&b);
        for n in [12 * tile + 5, 2 * tile + 1, 7 * tile, 12 * tile + 5, 1] {
            s.inclusive_range(&input, 0..n, &mut out).unwrap();
            let want = crate::scan::cpu::inclusive_scan(&data[..n]);
            assert_eq!(b.download_prefix(&out, n).unwrap(), want, "n = {n}");
        }
    }

    #[test]
    fn sub_ranges_aligned_or_not_and_empty() {
        let b = Backend::emulator();
        let data: Vec<i64> = (0..3000).map(|i| (i * 37 % 101) - 50).collect();
        let input = b.upload(&data).unwrap();
        let mut out = b.alloc::<i64>(3000).unwrap();
        let mut s = Scanner::<i64, Max>::new(&b);
        for range in [2..2001, 3..2000, 0..3000, 7..8] {
            s.inclusive_range(&input, range.clone(), &mut out).unwrap();
            let got = b.download_prefix(&out, range.len()).unwrap();
            let mut acc = i64::MIN;
            let want: Vec<i64> = data[range.clone()]
                .iter()
                .map(|&x| {
                    acc = acc.max(x);
                    acc
                })
                .collect();
            assert_eq!(got, want, "range {range:?}");
        }
        s.exclusive_range(&input, 5..5, &mut out).unwrap();
        let e = s.inclusive_range(&input, 2990..3001, &mut out).unwrap_err().to_string();
        assert!(e.contains("inclusive scan of elements 2990..3001 of a buffer of 3000"), "{e}");
        let mut short = b.alloc::<i64>(3).unwrap();
        let e = s.inclusive_range(&input, 1..5, &mut short).unwrap_err().to_string();
        assert!(e.contains("output holds 3"), "{e}");
    }

    #[test]
    fn i32_sums_take_the_classic_kernel() {
        use crate::scan::choose;
        let sm90 = if super::super::BULK_ON_SM90 { "lookback_bulk" } else { "lookback" };
        assert_eq!(choose::<i32>(Sum::OP, (9, 0)).unwrap().variant.name, sm90);
        assert_eq!(choose::<i32>(Sum::OP, (8, 0)).unwrap().plan.symbols(), ["lookback"]);
        assert_eq!(choose::<i32>(Min::OP, (9, 0)).unwrap().plan.symbols(), ["lookback__i32_min"]);
        assert_eq!(choose::<u32>(Sum::OP, (9, 0)).unwrap().plan.symbols(), ["lookback__u32_sum"]);
        // A Scanner's plan by device and size: the table's `*` rows for the emulator, whatever n;
        // the other pairs keep lookback's rows.
        use crate::scan::choose_on;
        let emulator = Backend::emulator();
        for n in [1, 1 << 16, 1 << 28] {
            assert_eq!(choose_on::<i32>(Sum::OP, emulator.info(), n).unwrap().variant.name, "lookback", "n = {n}");
        }
        assert_eq!(choose_on::<f64>(Max::OP, emulator.info(), 1 << 20).unwrap().plan.symbols(), ["lookback__f64_max"]);
    }
}
