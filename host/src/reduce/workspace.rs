//! What a launch writes besides its input: the buffers [`Finish::needs`] asks for, sized for
//! one geometry, of the row's element type. One shape for every row of the registry: the
//! curriculum's `i32` kernels and the instantiations of the generic ones alike. Reused across
//! launches (and, by [`Reducer`](super::Reducer), across inputs).
//!
//! **Where the partials are finished.** [`Finish::HostAdds`] and its in-place and clocked
//! forms leave partials in a device buffer (one per block, or per thread for the early
//! sum-of-squares steps); [`Workspace::result`] copies them to the host and combines them
//! there (pairwise: exact for integers, accurate for floats). That step is not timed: the
//! reported time is the kernel's alone, as in the book. [`Finish::LastBlock`] and
//! [`Finish::AtomicAccumulate`] finish on the device; the host only reads the one word.

use super::plan::{Finish, Geometry, Pointers, ToHostArgs};
use crate::backend::{AnswerSlot, Backend, DeviceBuffer, Graph, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::types::{Elem, Op, Value, combine_pairwise, identity};

/// The buffers of one geometry's launches, of element type `T`.
pub(crate) struct Workspace<T: Value> {
    pub(crate) geometry: Geometry,
    /// What the partials are combined with, and what the atomic finish's words start at.
    op: Op,
    pub(crate) scratch: Option<DeviceBuffer<T>>,
    partials: Option<DeviceBuffer<T>>,
    ticket: Option<DeviceBuffer<u32>>,
    pub(crate) result: Option<DeviceBuffer<T>>,
    clocks: Option<DeviceBuffer<u64>>,
    /// The tally word of [`launch_to_host`](Self::launch_to_host), made by its first call.
    pub(crate) tally: Option<DeviceBuffer<u64>>,
    /// The shape of the last [`launch_to_host`](Self::launch_to_host), and its CUDA graph once
    /// a call repeated it.
    to_host: Option<(ToHostShape, Option<Graph>)>,
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

impl<T: Value> Workspace<T> {
    /// Allocates what `geometry` needs for `op`: zeroed, and the atomic finish's words at the
    /// operator's identity (its precondition for epochs 0 and 1). `input_len` sizes the scratch
    /// copy of in-place kernels.
    pub(crate) fn new(backend: &Backend, geometry: Geometry, op: Op, input_len: usize) -> Result<Self> {
        let needs = geometry.needs;
        let mut result = buffer::<T>(backend, needs.result_words as u64)?;
        let start = identity::<T>(op);
        if let Some(words) = &mut result
            && needs.partials == 0
            && start.bits() != 0
        {
            // The atomic finish folds into its words (a zeroed allocation is a sum's identity).
            backend.write(words, &vec![start; needs.result_words])?;
        }
        Ok(Self {
            geometry,
            op,
            scratch: if needs.scratch { Some(backend.alloc::<T>(input_len)?) } else { None },
            partials: buffer(backend, needs.partials)?,
            ticket: buffer(backend, needs.ticket as u64)?,
            result,
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
    pub(crate) fn reset(&mut self, backend: &Backend, input: &DeviceBuffer<T>) -> Result<()> {
        match &mut self.scratch {
            Some(scratch) => backend.copy(input, scratch),
            None => Ok(()),
        }
    }

    /// The device addresses of a launch on the input at `input`, from element `offset`.
    fn pointers(&mut self, input: *const T, offset: usize) -> Pointers<T> {
        // `wrapping_add`: a device address is not a host allocation; the caller checked the range.
        Pointers {
            input: input.wrapping_add(offset),
            scratch: self.scratch.as_mut().map_or(std::ptr::null_mut(), |s| s.as_mut_ptr().wrapping_add(offset)),
            partials: self.partials.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            ticket: self.ticket.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            result: self.result.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
            clocks: self.clocks.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr),
        }
    }

    /// Enqueues `finish`'s kernel on `n` elements of `input` from element `offset`; the epoch
    /// advances only when the launch was accepted.
    ///
    /// # Safety
    /// `input` is the device address of a buffer of `T` of this backend, `input[offset..offset
    /// + n]` lies within it, and the geometry is `finish`'s for `n`.
    pub(crate) unsafe fn launch(
        &mut self,
        backend: &Backend,
        finish: &Finish<T>,
        input: *const T,
        offset: usize,
        n: usize,
    ) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        let p = self.pointers(input, offset);
        // SAFETY: the buffers were sized by `needs` for this geometry (new/fits), the input range
        // is the caller's promise, and the epoch counts this workspace's accepted launches, so
        // the atomic finish's word `epoch % 2` holds the identity (set at allocation, or left so
        // by the previous launch).
        unsafe { finish.launch(backend, cfg, p, n as u32, self.epoch) }?;
        self.epoch = self.epoch.wrapping_add(1);
        Ok(())
    }

    /// Enqueues one launch of `finish` that writes its partials and result words into
    /// `slot` (the partials, then the result words: [`Needs::slot_len`](super::plan::Needs)
    /// elements), with epoch 0: the atomic finish adds into the slot's first result word, which
    /// must hold the identity.
    ///
    /// # Safety
    /// As for [`launch`](Self::launch); `slot` holds the geometry's partials and result words,
    /// its first result word at the identity.
    pub(crate) unsafe fn launch_into(
        &mut self,
        backend: &Backend,
        finish: &Finish<T>,
        input: *const T,
        n: usize,
        slot: *mut T,
    ) -> Result<()> {
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        let mut p = self.pointers(input, 0);
        p.partials = slot;
        p.result = slot.wrapping_add(g.needs.partials as usize);
        // SAFETY: as for `launch`, with the slot's partials and result words (the caller's).
        unsafe { finish.launch(backend, cfg, p, n as u32, 0) }
    }

    /// Waits for the last launch and returns its answer: the device word of the last epoch
    /// (atomic finish), the one result word (last block), or the partials combined on the host.
    pub(crate) fn result(&self, backend: &Backend) -> Result<T> {
        let needs = self.geometry.needs;
        if let Some(words) = &self.result {
            let last = self.epoch.checked_sub(1).ok_or_else(|| Error::Invalid("result() before any launch".into()))?;
            return backend.read_element(words, (last as usize) % needs.result_words);
        }
        let partials = self.partials.as_ref().ok_or_else(|| Error::Invalid("no partials to add".into()))?;
        Ok(combine_pairwise(self.op.partials(), backend.download_prefix(partials, needs.host_adds as usize)?))
    }

    /// The answer of one slot's elements (as [`launch_into`](Self::launch_into) wrote them).
    pub(crate) fn slot_answer(&self, slot: &[T]) -> T {
        let needs = self.geometry.needs;
        if needs.result_words > 0 {
            slot[needs.partials as usize]
        } else {
            combine_pairwise(self.op.partials(), slot[..needs.host_adds as usize].to_vec())
        }
    }

    /// Latest end minus earliest start of the per-block `clock64()` stamps, if any.
    pub(crate) fn cycles(&self, backend: &Backend) -> Result<Option<u64>> {
        let Some(clocks) = &self.clocks else { return Ok(None) };
        let c = backend.download(clocks)?;
        let start = c.iter().step_by(2).copied().min().unwrap_or(0);
        let end = c.iter().skip(1).step_by(2).copied().max().unwrap_or(0);
        Ok(Some(end.saturating_sub(start)))
    }

    /// The sum of `n` `i32` elements of `input` from element `offset` by
    /// `atomic_accumulate_to_host`, whose last block hands it to the host
    /// ([`Backend::answer_from`]): one launch, and the answer once it is on the host. Uses this
    /// workspace's geometry and its own tally word, not the result words or the epoch of
    /// [`launch`](Self::launch). A call of the same shape as the one before (input, size,
    /// launch) is a CUDA graph of that launch where the backend uses them
    /// ([`Backend::answer_graph`]), captured by the first repeat. `T` must be `i32`.
    ///
    /// # Safety
    /// As [`launch`](Self::launch), and the geometry is `atomic_accumulate`'s for `n`.
    pub(crate) unsafe fn launch_to_host(
        &mut self,
        backend: &Backend,
        input: *const T,
        offset: usize,
        n: usize,
    ) -> Result<T> {
        const KERNEL: Kernel<ToHostArgs> =
            crate::kernel_ref!(kernels::reduce::atomic_accumulate_to_host(a, tally, n, value, flag, seq));
        if T::ELEM != Elem::I32 {
            return Err(Error::Invalid(format!("the answer in the kernel is an i32 sum, not {}", T::ELEM.name())));
        }
        if self.tally.is_none() {
            self.tally = Some(backend.alloc::<u64>(1)?);
        }
        let tally = self.tally.as_mut().map_or(std::ptr::null_mut(), DeviceBuffer::as_mut_ptr);
        let g = self.geometry;
        let cfg = LaunchConfig { grid: g.grid, block: g.block, shared_bytes: g.dynamic_shared };
        // `T` is `i32` (checked above): the same address as a buffer of `i32`.
        let input = input.wrapping_add(offset).cast::<i32>();
        let shape = ToHostShape { input: input as usize, n, grid: g.grid, block: g.block };
        let args = |slot: AnswerSlot| (input, tally, n as u32, slot.value, slot.flag, slot.seq);
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
        Ok(T::from_bits_u64(answer as u32 as u64))
    }
}
