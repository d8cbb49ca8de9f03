//! Running a reduction variant: preconditions, launch geometry, launch, finishing the
//! partial sums, checking against the CPU reference, timing.
//!
//! **Where the partial sums are finished.** [`Plan::Partials`], [`Plan::GridStride`] and
//! [`Plan::SumSquares`] kernels leave partials in a device buffer (one per block, or one per
//! thread for the early sum-of-squares steps). [`Reduction::result`] copies that buffer to
//! the host and adds it there (wrapping, in order). That step is not timed: the reported
//! time is the kernel's alone, as in the book. [`Plan::SinglePass`] and [`Plan::Accumulate`]
//! kernels finish on the device; the host only reads the one scalar.
//!
//! **What is timed.** CUDA events around the kernel launch on the GPU (wall clock in the
//! emulator). For in-place kernels the scratch copy of the input is made before the start
//! event, so it is never timed, and the caller's input buffer is never written.

use crate::backend::{Backend, DeviceBuffer, KernelArgs, LaunchConfig};
use crate::cpu::Reference;
use crate::error::{Error, Result};
use crate::registry::{KernelSel, Outputs, PartialsKernel, Plan, SumSqGrid, Variant};

/// Launch geometry of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory per block (bytes), passed at launch.
    pub dynamic_shared: u32,
    /// All shared memory per block (static + dynamic), for reports.
    pub shared_bytes: u32,
    /// Partial results the kernel writes (what the host adds up; 1 for single-pass kernels).
    pub outputs: usize,
}

/// Largest `gridDim.x` on every GPU since Kepler.
pub const MAX_GRID: u64 = (1 << 31) - 1;

/// Checks the preconditions that do not depend on the device's size: `n`, the block rule,
/// the compute capability.
pub fn check(v: &Variant, n: usize, block: u32, cc: (u32, u32)) -> Result<()> {
    if n == 0 {
        return Err(Error::Invalid(format!("variant `{}`: n = 0; a reduction needs n ≥ 1 elements", v.name)));
    }
    if n > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} is more than the kernels' 32-bit length parameter allows (n ≤ {})",
            v.name,
            u32::MAX
        )));
    }
    let one_thread = matches!(v.plan, Plan::SumSquares { grid: SumSqGrid::OneThread, .. });
    let rule = v.blocks();
    if !one_thread && !rule.allows(block) {
        return Err(Error::Invalid(format!(
            "variant `{}`: block {block} is not allowed; block must be {rule}",
            v.name
        )));
    }
    if cc < v.min_cc {
        return Err(Error::Unsupported(format!(
            "variant `{}` needs compute capability {}.{} or newer; this device has {}.{}",
            v.name, v.min_cc.0, v.min_cc.1, cc.0, cc.1
        )));
    }
    Ok(())
}

/// Checks every precondition of running `v` on `n` elements with `block` threads per block
/// on `backend`, and returns the launch geometry.
pub fn geometry(backend: &Backend, v: &Variant, n: usize, block: u32) -> Result<Geometry> {
    let info = backend.info();
    check(v, n, block, info.compute_capability)?;
    let dynamic_shared = v.dynamic_shared_bytes(block);
    let per_block = |items: u32| (n as u64).div_ceil(block as u64 * items as u64);
    let resident = |name: &'static str, blocks_per_sm: Option<u32>| -> Result<u64> {
        let per_sm = match blocks_per_sm {
            Some(k) => k,
            None => backend.occupancy(name, block, dynamic_shared as usize)?,
        };
        Ok(per_sm.max(1) as u64 * info.multiprocessors.max(1) as u64)
    };
    let (grid, block, outputs) = match v.plan {
        Plan::Partials { items_per_thread, .. } => {
            let g = per_block(items_per_thread);
            (g, block, g)
        }
        Plan::GridStride { kernel, items_per_thread, blocks_per_sm, .. } => {
            let g = per_block(items_per_thread).min(resident(kernel.name, blocks_per_sm)?);
            (g, block, g)
        }
        Plan::SinglePass { kernel, items_per_thread, blocks_per_sm, .. } => {
            (per_block(items_per_thread).min(resident(kernel.name, blocks_per_sm)?), block, 1)
        }
        Plan::Accumulate { kernel, items_per_thread, blocks_per_sm, .. } => {
            (per_block(items_per_thread).min(resident(kernel.name, blocks_per_sm)?), block, 1)
        }
        Plan::SumSquares { grid, outputs, .. } => {
            let (g, b) = match grid {
                SumSqGrid::OneThread => (1, 1),
                SumSqGrid::OneBlock => (1, block),
                SumSqGrid::PerMultiprocessor(k) => (k as u64 * info.multiprocessors.max(1) as u64, block),
            };
            let out = match outputs {
                Outputs::PerThread => g * b as u64,
                Outputs::PerBlock => g,
            };
            (g, b, out)
        }
    };
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} needs {grid} blocks of {block}; a grid holds at most {MAX_GRID}",
            v.name
        )));
    }
    Ok(Geometry {
        grid: grid as u32,
        block,
        dynamic_shared,
        shared_bytes: v.shared_bytes(block),
        outputs: outputs as usize,
    })
}

/// A variant ready to run on one input: buffers allocated, preconditions checked.
pub struct Reduction<'a> {
    backend: &'a Backend,
    variant: &'static Variant,
    input: &'a DeviceBuffer<i32>,
    offset: usize,
    n: usize,
    geometry: Geometry,
    scratch: Option<DeviceBuffer<i32>>,
    partials: DeviceBuffer<i32>,
    ticket: Option<DeviceBuffer<u32>>,
    out: Option<DeviceBuffer<i32>>,
    clocks: Option<DeviceBuffer<u64>>,
    /// Launches so far: the epoch the next accumulating launch gets.
    epoch: u32,
}

impl<'a> Reduction<'a> {
    /// Prepares `variant` on the first `n` elements of `input` with `block` threads per block.
    pub fn new(
        backend: &'a Backend,
        variant: &'static Variant,
        input: &'a DeviceBuffer<i32>,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        Self::new_at(backend, variant, input, 0, n, block)
    }

    /// Prepares `variant` on the `n` elements of `input` starting at element `offset`: the
    /// kernel gets the address of element `offset`, which is only 4-byte aligned in general
    /// (the unaligned-head cases of the vector-load kernels). In-place variants get a scratch
    /// copy of the whole buffer and work on the same range of it.
    pub fn new_at(
        backend: &'a Backend,
        variant: &'static Variant,
        input: &'a DeviceBuffer<i32>,
        offset: usize,
        n: usize,
        block: u32,
    ) -> Result<Self> {
        let geometry = geometry(backend, variant, n, block)?;
        if offset.checked_add(n).is_none_or(|end| end > input.len()) {
            return Err(Error::Invalid(format!(
                "input holds {} elements, fewer than offset {offset} + n = {n}",
                input.len()
            )));
        }
        // Resolve a per-block kernel now, so that a missing instantiation is a clear error here.
        let missing = match variant.plan {
            Plan::Partials { kernel: PartialsKernel::Reads(k), .. } => k.for_block(block).is_none(),
            Plan::Partials { kernel: PartialsKernel::InPlace(k), .. } => k.for_block(block).is_none(),
            _ => false,
        };
        if missing {
            return Err(Error::Invalid(format!("variant `{}` has no kernel for block {block}", variant.name)));
        }
        let scratch = if variant.in_place() { Some(backend.alloc::<i32>(input.len())?) } else { None };
        let single = matches!(variant.plan, Plan::SinglePass { .. });
        let accumulate = matches!(variant.plan, Plan::Accumulate { .. });
        let partials = backend.alloc::<i32>(if single { geometry.grid as usize } else { geometry.outputs })?;
        let ticket = if single { Some(backend.alloc::<u32>(1)?) } else { None };
        // Single pass: the one result word. Accumulate: the two words the epochs alternate over
        // (zeroed here, which is the kernel's precondition for epochs 0 and 1).
        let out = match (single, accumulate) {
            (true, _) => Some(backend.alloc::<i32>(1)?),
            (_, true) => Some(backend.alloc::<i32>(2)?),
            _ => None,
        };
        let clocks = match variant.plan {
            Plan::SumSquares { .. } => Some(backend.alloc::<u64>(2 * geometry.grid as usize)?),
            _ => None,
        };
        Ok(Self { backend, variant, input, offset, n, geometry, scratch, partials, ticket, out, clocks, epoch: 0 })
    }

    /// The launch geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Restores what a run consumes (the scratch copy of the input). Not part of the timed
    /// work; call it before each [`launch`](Self::launch) whose result you will read.
    pub fn reset(&mut self) -> Result<()> {
        if let Some(scratch) = &mut self.scratch {
            self.backend.copy(self.input, scratch)?;
        }
        Ok(())
    }

    /// Enqueues the kernel: the timed work.
    pub fn launch(&mut self) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        let n = self.n as u32;
        let partials = self.partials.as_mut_ptr();
        // `wrapping_add`: a device address is not a host allocation; the range was checked in new_at().
        let input = self.input.as_ptr().wrapping_add(self.offset);
        // SAFETY (every launch below): `geometry` checked the variant's launch preconditions;
        // `input` holds n elements, `partials` holds `outputs` (or `grid`) elements, the
        // single-pass ticket and output one each, the clocks two per block, all buffers of
        // this backend. In-place kernels get the scratch copy, never the input.
        match self.variant.plan {
            // SAFETY: as above.
            Plan::Partials { kernel: PartialsKernel::Reads(k), .. } => unsafe {
                self.launch_sel(&k, cfg, (input, partials, n))
            },
            Plan::Partials { kernel: PartialsKernel::InPlace(k), .. } => {
                let scratch = self.scratch.as_mut().expect("in-place variants have a scratch buffer").as_mut_ptr();
                let scratch = scratch.wrapping_add(self.offset);
                // SAFETY: as above.
                unsafe { self.launch_sel(&k, cfg, (scratch, partials, n)) }
            }
            // SAFETY: as above.
            Plan::GridStride { kernel, .. } => unsafe { self.backend.launch(&kernel, cfg, (input, partials, n)) },
            Plan::SinglePass { kernel, .. } => {
                let ticket = self.ticket.as_mut().expect("single-pass variants have a ticket").as_mut_ptr();
                let out = self.out.as_mut().expect("single-pass variants have an output").as_mut_ptr();
                // SAFETY: as above.
                unsafe { self.backend.launch(&kernel, cfg, (input, partials, ticket, out, n)) }
            }
            Plan::Accumulate { kernel, .. } => {
                let acc = self.out.as_mut().expect("accumulating variants have two result words").as_mut_ptr();
                let epoch = self.epoch;
                self.epoch = epoch.wrapping_add(1);
                // SAFETY: as above; launches of this Reduction are in one stream with consecutive
                // epochs, so acc[epoch % 2] is 0 when this one starts (the kernel's precondition).
                unsafe { self.backend.launch(&kernel, cfg, (input, acc, n, epoch)) }
            }
            Plan::SumSquares { kernel, .. } => {
                let clocks = self.clocks.as_mut().expect("sum-of-squares variants have clocks").as_mut_ptr();
                // SAFETY: as above.
                unsafe { self.backend.launch(&kernel, cfg, (input, partials, clocks, n)) }
            }
        }
    }

    /// # Safety
    /// As for [`Backend::launch`].
    unsafe fn launch_sel<A: KernelArgs>(&self, k: &KernelSel<A>, cfg: LaunchConfig, args: A) -> Result<()> {
        let kernel = k.for_block(cfg.block).expect("checked in new()");
        // SAFETY: forwarded from the caller.
        unsafe { self.backend.launch(&kernel, cfg, args) }
    }

    /// Waits for the last launch and returns its sum: the device's scalar for single-pass and
    /// accumulating kernels (the word of the last launch's epoch), otherwise the partials added
    /// on the host.
    pub fn result(&self) -> Result<i32> {
        if let Some(out) = &self.out {
            let words = self.backend.download(out)?;
            let last = if matches!(self.variant.plan, Plan::Accumulate { .. }) {
                self.epoch.checked_sub(1).ok_or_else(|| Error::Invalid("result() before any launch".into()))? % 2
            } else {
                0
            };
            return Ok(words[last as usize]);
        }
        let partials = self.backend.download_prefix(&self.partials, self.geometry.outputs)?;
        Ok(partials.iter().fold(0i32, |a, &p| a.wrapping_add(p)))
    }

    /// For kernels that record `clock64()` per block: latest end minus earliest start, in
    /// the SM's cycles (in the emulator, host nanoseconds).
    pub fn cycles(&self) -> Result<Option<u64>> {
        let Some(clocks) = &self.clocks else { return Ok(None) };
        let c = self.backend.download(clocks)?;
        let start = c.iter().step_by(2).copied().min().unwrap_or(0);
        let end = c.iter().skip(1).step_by(2).copied().max().unwrap_or(0);
        Ok(Some(end.saturating_sub(start)))
    }
}

/// One variant measured and checked.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Variant name.
    pub variant: &'static str,
    /// Elements.
    pub n: usize,
    /// Launch geometry.
    pub geometry: Geometry,
    /// Time of each timed run, µs.
    pub times_us: Vec<f64>,
    /// What the device computed.
    pub sum: i32,
    /// What the CPU recursion computed.
    pub expected: Reference,
    /// In-kernel clock cycles of the last run (sum-of-squares kernels only).
    pub cycles: Option<u64>,
}

impl Measurement {
    /// Does the device agree with the reference?
    pub fn pass(&self) -> bool {
        self.sum == self.expected.wrapped
    }

    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        median(&self.times_us)
    }

    /// Bytes read from device memory per second at the median time (each input element read
    /// once: `n × 4 / t`).
    pub fn bytes_per_second(&self) -> f64 {
        self.n as f64 * 4.0 / (self.median_us() * 1e-6)
    }
}

/// Median of a list (mean of the middle two for even lengths; NaN when empty).
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.is_empty() {
        f64::NAN
    } else if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Timed runs every variant gets, however slow.
pub const MIN_RUNS: u32 = 3;
/// Past this much timed work (µs) a variant stops repeating once it has [`MIN_RUNS`] runs.
pub const RUN_BUDGET_US: f64 = 3e6;

/// Something that runs on the device again and again: a prepared reduction or scan.
pub trait Rerun {
    /// Restores what a run consumes (untimed).
    fn reset(&mut self) -> Result<()>;
    /// Enqueues one run (the timed work).
    fn launch(&mut self) -> Result<()>;
}

impl Rerun for Reduction<'_> {
    fn reset(&mut self) -> Result<()> {
        Reduction::reset(self)
    }
    fn launch(&mut self) -> Result<()> {
        Reduction::launch(self)
    }
}

/// One untimed run (warm-up: module load, JIT, caches), then `repeat` timed runs, each after
/// an untimed reset; returns their times (µs). A slow enough job (the one-thread sum of squares
/// at 2^28) stops after [`MIN_RUNS`] runs once the runs have taken [`RUN_BUDGET_US`]: the
/// reports show how many runs each row got.
pub fn timed_runs(backend: &Backend, r: &mut impl Rerun, repeat: u32) -> Result<Vec<f64>> {
    r.reset()?;
    r.launch()?;
    backend.synchronize()?;
    let mut times_us = Vec::with_capacity(repeat as usize);
    let mut spent = 0.0;
    for i in 0..repeat.max(1) {
        if i >= MIN_RUNS && spent > RUN_BUDGET_US {
            break;
        }
        r.reset()?;
        let t = backend.time(&mut || r.launch())?;
        spent += t;
        times_us.push(t);
    }
    Ok(times_us)
}

/// Runs `variant` once untimed (warm-up: module load, JIT, caches), then `repeat` timed runs
/// (fewer, but at least [`MIN_RUNS`], once the runs have taken [`RUN_BUDGET_US`]), and checks the
/// last run's result against `expected` (the reference for the variant's op).
pub fn measure(
    backend: &Backend,
    variant: &'static Variant,
    input: &DeviceBuffer<i32>,
    n: usize,
    block: u32,
    repeat: u32,
    expected: Reference,
) -> Result<Measurement> {
    let mut r = Reduction::new(backend, variant, input, n, block)?;
    let times_us = timed_runs(backend, &mut r, repeat)?;
    let sum = r.result()?;
    let cycles = r.cycles()?;
    Ok(Measurement { variant: variant.name, n, geometry: r.geometry(), times_us, sum, expected, cycles })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn geometry_rejects_bad_requests_with_reasons() {
        let b = Backend::emulator();
        let v = find("interleaved").unwrap();
        let e = geometry(&b, v, 0, 512).unwrap_err().to_string();
        assert!(e.contains("n ≥ 1"), "{e}");
        let e = geometry(&b, v, 100, 48).unwrap_err().to_string();
        assert!(e.contains("block 48") && e.contains("power of two in 32..=1024"), "{e}");
        let e = geometry(&b, v, 100, 2048).unwrap_err().to_string();
        assert!(e.contains("block 2048"), "{e}");
        let g = geometry(&b, v, 1025, 512).unwrap();
        assert_eq!((g.grid, g.block, g.outputs), (3, 512, 3));
        let e = check(v, 10, 64, (6, 1)).unwrap_err().to_string();
        assert!(e.contains("compute capability 7.0"), "{e}");
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
