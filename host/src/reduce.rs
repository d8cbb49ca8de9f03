//! Running a reduction variant: preconditions, launch geometry, launch, finishing the
//! partial sums, checking against the CPU reference, timing.
//!
//! **Where the partial sums are finished.** Every [`Plan::Partials`] kernel leaves one
//! partial per block in a device buffer of `gridDim.x` elements. [`Reduction::result`]
//! copies that buffer to the host and adds it there (wrapping, in block order). That step
//! is not timed: the reported time is the kernel's alone, as in the book.
//!
//! **What is timed.** CUDA events around the kernel launch on the GPU (wall clock in the
//! emulator). For in-place kernels the scratch copy of the input is made before the start
//! event, so it is never timed, and the caller's input buffer is never written.

use crate::backend::{Backend, DeviceBuffer, KernelArgs, LaunchConfig};
use crate::cpu::Reference;
use crate::error::{Error, Result};
use crate::registry::{KernelSel, Op, PartialsKernel, Plan, SharedMem, Variant};

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
}

/// Largest `gridDim.x` on every GPU since Kepler.
pub const MAX_GRID: u64 = (1 << 31) - 1;

/// Checks every precondition of running `v` on `n` elements with `block` threads per block
/// on a device of compute capability `cc`, and returns the launch geometry.
pub fn geometry(v: &Variant, n: usize, block: u32, cc: (u32, u32)) -> Result<Geometry> {
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
    let rule = v.blocks();
    if !rule.allows(block) {
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
    match v.plan {
        Plan::Partials { items_per_thread, shared, .. } => {
            let per_block = block as u64 * items_per_thread as u64;
            let grid = (n as u64).div_ceil(per_block);
            if grid > MAX_GRID {
                return Err(Error::Invalid(format!(
                    "variant `{}`: n = {n} needs {grid} blocks of {block}×{items_per_thread}; a grid holds at most {MAX_GRID}",
                    v.name
                )));
            }
            let dynamic_shared = match shared {
                SharedMem::DynamicPerThread(b) => b * block,
                _ => 0,
            };
            Ok(Geometry { grid: grid as u32, block, dynamic_shared, shared_bytes: v.shared_bytes(block) })
        }
    }
}

/// A variant ready to run on one input: buffers allocated, preconditions checked.
pub struct Reduction<'a> {
    backend: &'a Backend,
    variant: &'static Variant,
    input: &'a DeviceBuffer<i32>,
    n: usize,
    geometry: Geometry,
    scratch: Option<DeviceBuffer<i32>>,
    partials: DeviceBuffer<i32>,
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
        let geometry = geometry(variant, n, block, backend.info().compute_capability)?;
        if input.len() < n {
            return Err(Error::Invalid(format!("input holds {} elements, fewer than n = {n}", input.len())));
        }
        if variant.op != Op::Sum {
            return Err(Error::Unsupported(format!("variant `{}` is not a plain sum", variant.name)));
        }
        // Resolve the kernel now, so that a missing instantiation is a clear error here.
        let missing = match variant.plan {
            Plan::Partials { kernel: PartialsKernel::Reads(k), .. } => k.for_block(block).is_none(),
            Plan::Partials { kernel: PartialsKernel::InPlace(k), .. } => k.for_block(block).is_none(),
        };
        if missing {
            return Err(Error::Invalid(format!("variant `{}` has no kernel for block {block}", variant.name)));
        }
        let scratch = if variant.in_place() { Some(backend.alloc::<i32>(n)?) } else { None };
        let partials = backend.alloc::<i32>(geometry.grid as usize)?;
        Ok(Self { backend, variant, input, n, geometry, scratch, partials })
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

    /// Enqueues the kernel(s): the timed work.
    pub fn launch(&mut self) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        let n = self.n as u32;
        let out = self.partials.as_mut_ptr();
        match self.variant.plan {
            Plan::Partials { kernel: PartialsKernel::Reads(k), .. } => {
                let args = (self.input.as_ptr(), out, n);
                // SAFETY: `geometry` checked the launch preconditions; input holds n elements and
                // partials holds grid elements, both buffers of this backend.
                unsafe { self.launch_sel(&k, cfg, args) }
            }
            Plan::Partials { kernel: PartialsKernel::InPlace(k), .. } => {
                let scratch = self.scratch.as_mut().expect("in-place variants have a scratch buffer");
                let args = (scratch.as_mut_ptr(), out, n);
                // SAFETY: as above; the kernel overwrites the scratch copy, never the input.
                unsafe { self.launch_sel(&k, cfg, args) }
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

    /// Waits for the last launch and finishes its partial sums on the host.
    pub fn result(&self) -> Result<i32> {
        let partials = self.backend.download_prefix(&self.partials, self.geometry.grid as usize)?;
        Ok(partials.iter().fold(0i32, |a, &p| a.wrapping_add(p)))
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

/// Median of a non-empty list (mean of the middle two for even lengths).
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

/// Runs `variant` once untimed (warm-up: module load, JIT, caches), then `repeat` timed runs,
/// and checks the last run's sum against `expected`.
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
    r.reset()?;
    r.launch()?;
    backend.synchronize()?;
    let mut times_us = Vec::with_capacity(repeat as usize);
    for _ in 0..repeat.max(1) {
        r.reset()?;
        times_us.push(backend.time(&mut || r.launch())?);
    }
    let sum = r.result()?;
    Ok(Measurement { variant: variant.name, n, geometry: r.geometry(), times_us, sum, expected })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn geometry_rejects_bad_requests_with_reasons() {
        let v = find("interleaved").unwrap();
        let e = geometry(v, 0, 512, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("n ≥ 1"), "{e}");
        let e = geometry(v, 100, 48, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("block 48") && e.contains("power of two in 32..=1024"), "{e}");
        let e = geometry(v, 100, 2048, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("block 2048"), "{e}");
        let g = geometry(v, 1025, 512, (9, 0)).unwrap();
        assert_eq!((g.grid, g.block), (3, 512));
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
