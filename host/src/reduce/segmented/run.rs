//! [`SegmentedReducer`]: the object that launches a segmented reduction (module docs: `super`).

use super::*;

/// A reusable segmented reduction of elements of `T` with the operator `O` (`Sum`, `Min`,
/// `Max`; with `Min` or `Max` also the argument, [`arg_reduce`](Self::arg_reduce)): one launch
/// per call, the kernel and grid of the [`Segments`]' plan. It owns its temporary storage (the
/// tiles' partials and one ticket per segment, for the device-wide plan) and reuses it; it runs
/// on its backend's device and stream.
pub struct SegmentedReducer<'b, T: Value, O: OpKind> {
    backend: &'b Backend,
    block: u32,
    /// Partial values and indices of the tiles, one per block of the largest grid so far.
    partials: Option<(DeviceBuffer<T>, DeviceBuffer<u32>)>,
    /// One ticket per segment of the largest count so far (0 between launches).
    tickets: Option<DeviceBuffer<u32>>,
    op: PhantomData<fn() -> O>,
}

impl<'b, T: Value, O: OpKind> SegmentedReducer<'b, T, O> {
    /// A segmented reducer on `backend`, at the plan's block (256). Allocates nothing until a
    /// call needs it.
    pub fn new(backend: &'b Backend) -> Self {
        Self { backend, block: DEFAULT_BLOCK, partials: None, tickets: None, op: PhantomData }
    }

    /// The same at `block` threads per block (a power of two in 32..=1024), for experiments and
    /// tests: the answers are the same at every block (float sums: within the bound).
    pub fn with_block(backend: &'b Backend, block: u32) -> Result<Self> {
        check_block(block)?;
        Ok(Self { block, ..Self::new(backend) })
    }

    /// The block it launches with.
    pub fn block(&self) -> u32 {
        self.block
    }

    /// `out[s]` = `O` over segment `s` of `input`, for every segment; waits. `out` holds at least
    /// `segments.count()` elements; the input at least `segments.end()` (exactly, for rows).
    pub fn reduce(&mut self, input: &DeviceBuffer<T>, segments: &Segments, out: &mut DeviceBuffer<T>) -> Result<()> {
        self.enqueue(input, segments, out)?;
        self.backend.synchronize()
    }

    /// Queues [`reduce`](Self::reduce) on the backend's stream and returns at once; any download
    /// (or [`Backend::synchronize`]) waits for it. Keep the buffers alive until then.
    pub fn enqueue(&mut self, input: &DeviceBuffer<T>, segments: &Segments, out: &mut DeviceBuffer<T>) -> Result<()> {
        check(O::OP.name(), input.len(), segments, out.len())?;
        self.launch(false, input, segments, (out.as_mut_ptr(), std::ptr::null_mut()))
    }

    /// One launch of the plan's kernel for `O` (`indexed`: its argument) into `out` (values,
    /// indices).
    fn launch(
        &mut self,
        indexed: bool,
        input: &DeviceBuffer<T>,
        segs: &Segments,
        out: (*mut T, *mut u32),
    ) -> Result<()> {
        check_layout::<T>()?;
        if segs.count == 0 {
            return Ok(());
        }
        let fk = kernels::<T>(O::OP, indexed)?;
        let per = <T as kernels::types::Element>::PER_128 as u32;
        let cfg = LaunchConfig { grid: segs.grid(self.block, per), block: self.block, shared_bytes: 0 };
        if let (Strategy::BlockPerRow, Layout::Rows { cols }) = (segs.strategy, &segs.layout) {
            let args = (input.as_ptr(), *cols, out.0, out.1);
            // SAFETY: the input holds rows × cols elements (checked: exactly) from a 256-byte
            // aligned allocation, and cols is a multiple of ROW_VECTOR (the plan's condition), so
            // every row starts 16-byte aligned; the grid is the rows; the outputs hold one element
            // per row (checked; the indices written only by an indexed fold, which has them).
            return unsafe { self.backend.launch(&fk.rows, cfg, args) };
        }
        let (offsets, first, cols) = match &segs.layout {
            Layout::Csr { offsets, first, .. } => {
                (offsets.as_ptr(), first.as_ref().map_or(std::ptr::null(), |f| f.as_ptr()), 0)
            }
            Layout::Rows { cols } => (std::ptr::null(), std::ptr::null(), *cols),
        };
        if matches!(segs.strategy, Strategy::WarpPerSegment | Strategy::Split) {
            // The split plan's warps take the short segments and pass over the others, which
            // the tiles launch below (same stream) writes.
            let max_len = if segs.strategy == Strategy::Split { WARP_MAX } else { u32::MAX };
            let warp_cfg = LaunchConfig { grid: segs.warp_grid(self.block, per), ..cfg };
            let args = (input.as_ptr(), offsets, cols, segs.count, max_len, segs.lanes(per), out.0, out.1);
            // SAFETY: the segments lie within the input (checked: end ≤ its length; the offsets
            // do not decrease), the outputs hold `count` elements (checked; the indices are
            // written only by an indexed fold, which has them), the block is whole warps, the
            // lanes a power of two in 4..=32 (`lanes_for`, `with_lanes`).
            unsafe { self.backend.launch(&fk.warp, warp_cfg, args) }?;
            if segs.strategy == Strategy::WarpPerSegment {
                return Ok(());
            }
        }
        let per_row = match &segs.layout {
            Layout::Rows { cols } => per_row(*cols, segs.tile),
            Layout::Csr { .. } => 1,
        };
        let (pv, pi, tickets) = self.storage(cfg.grid, segs.count)?;
        let args =
            (input.as_ptr(), offsets, cols, segs.count, first, per_row, segs.tile, pv, pi, tickets, out.0, out.1);
        // SAFETY: as above; the table (device-wide, split) or `per_row` gives every segment its
        // blocks (the split plan's short segments none) and the grid is their sum
        // (`Segments::grid`); the partials hold one per block and the
        // tickets one per segment, zeroed, and every completed launch leaves them 0; this
        // reducer's launches share the backend's one stream.
        unsafe { self.backend.launch(&fk.tiles, cfg, args) }
    }

    /// The tiles' partials for `grid` blocks and tickets for `count` segments, (re)made when
    /// too small: pointers to them.
    fn storage(&mut self, grid: u32, count: u32) -> Result<(*mut T, *mut u32, *mut u32)> {
        if self.partials.as_ref().is_none_or(|(v, _)| v.len() < grid as usize) {
            self.partials = Some((self.backend.alloc::<T>(grid as usize)?, self.backend.alloc::<u32>(grid as usize)?));
        }
        if self.tickets.as_ref().is_none_or(|t| t.len() < count as usize) {
            self.tickets = Some(self.backend.alloc::<u32>(count as usize)?);
        }
        match (self.partials.as_mut(), self.tickets.as_mut()) {
            (Some((v, i)), Some(t)) => Ok((v.as_mut_ptr(), i.as_mut_ptr(), t.as_mut_ptr())),
            _ => Err(Error::Invalid("the segmented reducer's storage is missing".into())),
        }
    }
}

impl<'b, T: Value, O: ExtremeKind> SegmentedReducer<'b, T, O> {
    /// The argmin (`O` = `Min`) or argmax (`Max`) of every segment: `values[s]` the extreme,
    /// `indices[s]` its first index **within the segment** ([`NO_INDEX`] and the identity for an
    /// empty segment); waits.
    pub fn arg_reduce(
        &mut self,
        input: &DeviceBuffer<T>,
        segments: &Segments,
        values: &mut DeviceBuffer<T>,
        indices: &mut DeviceBuffer<u32>,
    ) -> Result<()> {
        self.enqueue_arg(input, segments, values, indices)?;
        self.backend.synchronize()
    }

    /// Queues [`arg_reduce`](Self::arg_reduce) and returns at once.
    pub fn enqueue_arg(
        &mut self,
        input: &DeviceBuffer<T>,
        segments: &Segments,
        values: &mut DeviceBuffer<T>,
        indices: &mut DeviceBuffer<u32>,
    ) -> Result<()> {
        let what = format!("arg{}", O::OP.name());
        check(&what, input.len(), segments, values.len().min(indices.len()))?;
        self.launch(true, input, segments, (values.as_mut_ptr(), indices.as_mut_ptr()))
    }
}

/// The segments fit the input, and the output holds one element per segment; one line naming
/// the numbers otherwise.
fn check(what: &str, input: usize, segments: &Segments, out: usize) -> Result<()> {
    let (end, count) = (segments.end(), segments.count());
    if let Layout::Rows { cols } = segments.layout
        && end != input
    {
        return Err(Error::Invalid(format!(
            "segmented {what} of {count} rows × {cols} columns = {end} elements: the input holds {input}; they must match"
        )));
    }
    if end > input {
        return Err(Error::Invalid(format!(
            "segmented {what}: the last offset is {end}, past the input of {input} elements"
        )));
    }
    if out < count {
        return Err(Error::Invalid(format!(
            "segmented {what} of {count} segments: the output holds {out} elements; it must hold one per segment"
        )));
    }
    Ok(())
}
