//! Reductions, laid out like [`crate::scan`]: the registry of variants, the launch plan, the
//! CPU reference, running and measuring one variant, and the library objects.
//!
//! * [`registry`] — the one list of variants ([`registry::all`]).
//! * [`plan`] — the grid and finish axes of a plan, matched there and nowhere else, and the
//!   launch [`Geometry`].
//! * [`cpu`] — the CPU reference (the book's recursion, fixed for odd lengths).
//! * [`Reduction`] — one variant prepared on one input: buffers allocated, preconditions
//!   checked; what the tests, the benches and the CLI run.
//! * [`sum`] — [`sum::Reducer`], the reusable object a library caller keeps (generic over
//!   element type and operator), the measured plan of `i32` sums, and the one-shot
//!   [`sum::sum`].
//! * [`typed`] — every element type × sum/min/max on the generic variants: the runner, the
//!   references and the float error bound, and the one-shot [`reduce()`]
//!   (`reduce_scan::reduce::<f32, Max>(&backend, &buf)`).
//!
//! **Where the partial sums are finished.** [`Finish::HostAdds`] and its in-place and clocked
//! forms leave partials in a device buffer (one per block, or per thread for the early
//! sum-of-squares steps); [`Reduction::result`] copies them to the host and adds them there
//! (wrapping, in order). That step is not timed: the reported time is the kernel's alone, as
//! in the book. [`Finish::LastBlock`] and [`Finish::AtomicAccumulate`] finish on the device;
//! the host only reads the one scalar.

pub mod cpu;
pub mod plan;
pub mod registry;
pub mod sum;
pub mod typed;

pub use typed::reduce;

use crate::backend::{Backend, DeviceBuffer, LaunchConfig};
use crate::error::{Error, Result};
use crate::timing::{Rerun, Runs, timed_runs};
use cpu::Reference;
use plan::{Finish, Pointers};
pub use plan::{Geometry, MAX_GRID, check, geometry};
use registry::Variant;

/// What a launch writes besides its input: the buffers [`plan::Finish::needs`] asks for,
/// sized for one geometry. Reused across launches (and, by [`sum::Reducer`], across inputs).
pub(crate) struct Workspace {
    geometry: Geometry,
    scratch: Option<DeviceBuffer<i32>>,
    partials: Option<DeviceBuffer<i32>>,
    ticket: Option<DeviceBuffer<u32>>,
    result: Option<DeviceBuffer<i32>>,
    clocks: Option<DeviceBuffer<u64>>,
    /// The tally word of [`launch_to_host`](Self::launch_to_host), made by its first call.
    tally: Option<DeviceBuffer<u64>>,
    /// The shape of the last [`launch_to_host`](Self::launch_to_host), and its CUDA graph once
    /// a call repeated it.
    to_host: Option<(ToHostShape, Option<crate::backend::Graph>)>,
    /// Launches that succeeded so far: the epoch the next accumulating launch gets.
    epoch: u32,
}

/// What a CUDA graph of `atomic_accumulate_to_host` fixes: the input's address, the size and the
/// launch (the tally and answer words are the workspace's and the process's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ToHostShape {
    input: usize,
    n: usize,
    grid: u32,
    block: u32,
}

/// `Some(buffer of len)` when `len > 0`.
fn buffer<T: crate::backend::Element>(backend: &Backend, len: u64) -> Result<Option<DeviceBuffer<T>>> {
    if len == 0 { Ok(None) } else { backend.alloc::<T>(len as usize).map(Some) }
}

impl Workspace {
    /// Allocates what `geometry` needs (zeroed: the atomic finish's precondition for epochs 0
    /// and 1). `input_len` sizes the scratch copy of in-place kernels.
    pub(crate) fn new(backend: &Backend, geometry: Geometry, input_len: usize) -> Result<Self> {
        let needs = geometry.needs;
        Ok(Self {
            geometry,
            scratch: if needs.scratch { Some(backend.alloc::<i32>(input_len)?) } else { None },
            partials: buffer(backend, needs.partials)?,
            ticket: buffer(backend, needs.ticket as u64)?,
            result: buffer(backend, needs.result_words as u64)?,
            clocks: buffer(backend, if needs.clocks { 2 * geometry.grid as u64 } else { 0 })?,
            tally: None,
            to_host: None,
            epoch: 0,
        })
    }

    /// Can this workspace serve `geometry` (same finish buffers, large enough)?
    pub(crate) fn fits(&self, geometry: &Geometry) -> bool {
        let (have, want) = (self.geometry.needs, geometry.needs);
        !want.scratch
            && !want.clocks
            && have.ticket == want.ticket
            && have.result_words == want.result_words
            && have.partials >= want.partials
    }

    /// Switches to `geometry` (which [`fits`](Self::fits)).
    pub(crate) fn retarget(&mut self, geometry: Geometry) {
        self.geometry = geometry;
    }

    /// Copies the input into the scratch buffer, for in-place kernels (untimed).
    pub(crate) fn reset(&mut self, backend: &Backend, input: &DeviceBuffer<i32>) -> Result<()> {
        match &mut self.scratch {
            Some(scratch) => backend.copy(input, scratch),
            None => Ok(()),
        }
    }

    /// Enqueues `finish`'s kernel on `n` elements of `input` from element `offset`; the epoch
    /// advances only when the launch was accepted.
    ///
    /// # Safety
    /// `input` is the device address of a buffer of `i32` of this backend, `input[offset..offset
    /// + n]` lies within it, and the geometry is `finish`'s for `n`.
    pub(crate) unsafe fn launch(
        &mut self,
        backend: &Backend,
        finish: &Finish,
        input: *const i32,
        offset: usize,
        n: usize,
    ) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        // `wrapping_add`: a device address is not a host allocation; the caller checked the range.
        let p = Pointers {
            input: input.wrapping_add(offset),
            scratch: self.scratch.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr().wrapping_add(offset)),
            partials: self.partials.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            ticket: self.ticket.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            result: self.result.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            clocks: self.clocks.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
        };
        // SAFETY: the buffers were sized by `needs` for this geometry (new/fits), the input range
        // is the caller's promise, and the epoch counts this workspace's accepted launches, so
        // the atomic finish's word `epoch % 2` was cleared by the previous launch (or is fresh).
        unsafe { finish.launch(backend, cfg, p, n as u32, self.epoch) }?;
        self.epoch = self.epoch.wrapping_add(1);
        Ok(())
    }

    /// The sum of `n` elements of `input` from element `offset` by `atomic_accumulate_to_host`,
    /// whose last block hands it to the host ([`Backend::answer_from`]): one launch, and the
    /// answer once it is on the host. Uses this workspace's geometry and its own tally word,
    /// not the result words or the epoch of [`launch`](Self::launch). A call of the same shape
    /// as the one before (input, size, launch) is a CUDA graph of that launch where the
    /// backend uses them ([`Backend::answer_graph`]), captured by the first repeat.
    ///
    /// # Safety
    /// As [`launch`](Self::launch), and the geometry is `atomic_accumulate`'s for `n`.
    pub(crate) unsafe fn launch_to_host(
        &mut self,
        backend: &Backend,
        input: *const i32,
        offset: usize,
        n: usize,
    ) -> Result<i32> {
        const KERNEL: crate::backend::Kernel<plan::ToHostArgs> =
            crate::kernel_ref!(kernels::reduce::atomic_accumulate_to_host(a, tally, n, value, flag, seq));
        if self.tally.is_none() {
            self.tally = Some(backend.alloc::<u64>(1)?);
        }
        let tally = self.tally.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr);
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        let input = input.wrapping_add(offset);
        let shape = ToHostShape { input: input as usize, n, grid: g.grid, block: g.block };
        let args = |slot: crate::backend::AnswerSlot| (input, tally, n as u32, slot.value, slot.flag, slot.seq);
        // The launches below and every launch of the graph have what the kernel needs: the
        // caller's input range and geometry (at most 2^29 threads, so the tally's count cannot
        // overflow); `tally` is this workspace's word, 0 between launches (a zeroed allocation,
        // reset by each launch's last block); the slot is the backend's answer words.
        // SAFETY: as just said.
        let launch = |slot| unsafe { backend.launch(&KERNEL, cfg, args(slot)) };
        let answer = match self.to_host.take() {
            Some((last, Some(graph))) if last == shape => {
                let answer = backend.answer_from_graph(&graph);
                self.to_host = Some((shape, Some(graph)));
                answer?
            }
            Some((last, None)) if last == shape => {
                // SAFETY: as said above `launch`.
                let graph = unsafe { backend.answer_graph(&KERNEL, cfg, args) }?;
                let answer = match &graph {
                    Some(graph) => backend.answer_from_graph(graph),
                    None => backend.answer_from(launch),
                };
                self.to_host = Some((shape, graph));
                answer?
            }
            _ => {
                self.to_host = Some((shape, None));
                backend.answer_from(launch)?
            }
        };
        Ok(answer as u32 as i32)
    }

    /// Waits for the last launch and returns its answer: the device word of the last epoch
    /// (atomic finish), the one result word (last block), or the partials added on the host.
    pub(crate) fn result(&self, backend: &Backend) -> Result<i32> {
        let needs = self.geometry.needs;
        if let Some(words) = &self.result {
            let last = self.epoch.checked_sub(1).ok_or_else(|| Error::Invalid("result() before any launch".into()))?;
            return backend.read_element(words, (last as usize) % needs.result_words);
        }
        let partials = self.partials.as_ref().ok_or_else(|| Error::Invalid("no partials to add".into()))?;
        let partials = backend.download_prefix(partials, needs.host_adds as usize)?;
        Ok(partials.iter().fold(0i32, |a, &p| a.wrapping_add(p)))
    }

    /// Latest end minus earliest start of the per-block `clock64()` stamps, if any.
    pub(crate) fn cycles(&self, backend: &Backend) -> Result<Option<u64>> {
        let Some(clocks) = &self.clocks else { return Ok(None) };
        let c = backend.download(clocks)?;
        let start = c.iter().step_by(2).copied().min().unwrap_or(0);
        let end = c.iter().skip(1).step_by(2).copied().max().unwrap_or(0);
        Ok(Some(end.saturating_sub(start)))
    }
}

/// A variant ready to run on one input: buffers allocated, preconditions checked.
pub struct Reduction<'a> {
    backend: &'a Backend,
    variant: &'static Variant,
    input: &'a DeviceBuffer<i32>,
    offset: usize,
    n: usize,
    work: Workspace,
    /// The answer every run must give, when the caller knows it ([`Rerun::check`]).
    expected: Option<i32>,
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
        Self::shaped(backend, variant, input, offset, n, block, None)
    }

    /// As [`new_at`](Self::new_at), with the grid-stride variants' residency fixed at
    /// `blocks_per_sm` instead of the occupancy calculator's answer (`None`): the grid is at
    /// most SMs × `blocks_per_sm` blocks ([`Grid::Resident`](plan::Grid::Resident); other grids
    /// ignore it). What `reduce_scan::sum`'s plan and the CLI's `--blocks-per-sm` choose.
    pub fn shaped(
        backend: &'a Backend,
        variant: &'static Variant,
        input: &'a DeviceBuffer<i32>,
        offset: usize,
        n: usize,
        block: u32,
        blocks_per_sm: Option<u32>,
    ) -> Result<Self> {
        let geometry = geometry(backend, variant, n, block, blocks_per_sm)?;
        if offset.checked_add(n).is_none_or(|end| end > input.len()) {
            return Err(Error::Invalid(format!(
                "input holds {} elements, fewer than offset {offset} + n = {n}",
                input.len()
            )));
        }
        let work = Workspace::new(backend, geometry, input.len())?;
        Ok(Self { backend, variant, input, offset, n, work, expected: None })
    }

    /// Checks every run's result against `expected` ([`Rerun::check`]).
    pub fn expecting(mut self, expected: i32) -> Self {
        self.expected = Some(expected);
        self
    }

    /// The launch geometry.
    pub fn geometry(&self) -> Geometry {
        self.work.geometry
    }

    /// Restores what a run consumes (the scratch copy of the input). Not part of the timed
    /// work; call it before each [`launch`](Self::launch) whose result you will read.
    pub fn reset(&mut self) -> Result<()> {
        self.work.reset(self.backend, self.input)
    }

    /// Enqueues the kernel: the timed work.
    pub fn launch(&mut self) -> Result<()> {
        // SAFETY: new_at() checked that input[offset..offset + n] exists and made the geometry.
        unsafe { self.work.launch(self.backend, &self.variant.finish, self.input.as_ptr(), self.offset, self.n) }
    }

    /// Waits for the last launch and returns its sum.
    pub fn result(&self) -> Result<i32> {
        self.work.result(self.backend)
    }

    /// For kernels that record `clock64()` per block: latest end minus earliest start, in
    /// the SM's cycles (in the emulator, host nanoseconds).
    pub fn cycles(&self) -> Result<Option<u64>> {
        self.work.cycles(self.backend)
    }
}

impl Rerun for Reduction<'_> {
    fn reset(&mut self) -> Result<()> {
        Reduction::reset(self)
    }
    fn launch(&mut self) -> Result<()> {
        Reduction::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        let Some(want) = self.expected else { return Ok(None) };
        let got = self.result()?;
        Ok((got != want).then(|| format!("expected {want}, got {got}")))
    }
}

/// One variant measured and checked.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The variant.
    pub variant: &'static Variant,
    /// Elements.
    pub n: usize,
    /// Launch geometry.
    pub geometry: Geometry,
    /// The timed runs, each one's result checked.
    pub runs: Runs,
    /// What the device computed in the last run.
    pub sum: i32,
    /// What the CPU recursion computed.
    pub expected: Reference,
    /// In-kernel clock cycles of the last run (sum-of-squares kernels only).
    pub cycles: Option<u64>,
}

impl Measurement {
    /// Did every timed run agree with the reference?
    pub fn pass(&self) -> bool {
        self.sum == self.expected.wrapped && self.runs.first_wrong.is_none()
    }

    /// Median time, µs.
    pub fn median_us(&self) -> f64 {
        self.runs.median_us()
    }

    /// Bytes read from device memory per second at the median time (each input element read
    /// once: `n × element size / t`).
    pub fn bytes_per_second(&self) -> f64 {
        self.n as f64 * self.variant.elem.size() as f64 / (self.median_us() * 1e-6)
    }
}

/// Runs `variant` once untimed (warm-up: module load, JIT, caches), then `repeat` timed runs
/// (see [`timed_runs`]), checking every run's result against `expected`.
pub fn measure(
    backend: &Backend,
    variant: &'static Variant,
    input: &DeviceBuffer<i32>,
    n: usize,
    block: u32,
    repeat: u32,
    expected: Reference,
) -> Result<Measurement> {
    measure_shaped(backend, variant, input, (n, block, None), repeat, expected)
}

/// [`measure`] with a [`Reduction::shaped`] grid: `shape` is `(n, block, blocks_per_sm)`.
pub fn measure_shaped(
    backend: &Backend,
    variant: &'static Variant,
    input: &DeviceBuffer<i32>,
    shape: (usize, u32, Option<u32>),
    repeat: u32,
    expected: Reference,
) -> Result<Measurement> {
    let (n, block, blocks_per_sm) = shape;
    let mut r = Reduction::shaped(backend, variant, input, 0, n, block, blocks_per_sm)?.expecting(expected.wrapped);
    let runs = timed_runs(backend, &mut r, repeat)?;
    let sum = r.result()?;
    let cycles = r.cycles()?;
    Ok(Measurement { variant, n, geometry: r.geometry(), runs, sum, expected, cycles })
}
