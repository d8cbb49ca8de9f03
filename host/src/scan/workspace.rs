//! What a scan writes besides its output, one shape for every row of the scan registry and for
//! both users of it ([`Scan`](super::Scan), one prepared run; [`Scanner`](super::Scanner), the
//! library object): the look-back's status words (tagged with a new epoch per launch, so they
//! are zeroed only when allocated), the 64-bit types' value slots, and the recursions' scratch
//! (the Fenwick tree, the tile sums of each level). Buffers only grow: a smaller scan reuses
//! them.

use kernels::scan::index::{MAX_EPOCH, bit_positions};

use super::kind::Kind;
use super::levels::{bit_strides, blelloch_levels};
use super::plan::{Launch, config, single_pass_launch};
use super::registry::{BlellochBlockArgs, BlellochReduceArgs, ScanInstance, ScanPlan};
use crate::backend::{Backend, DeviceBuffer, Kernel};
use crate::error::{Error, Result};
use crate::types::Value;

/// The buffers of a scan's launches, of element type `T`.
pub(crate) struct ScanWorkspace<T: Value> {
    /// The status words: one per tile, or two (the warp-specialized scan's 64-bit halves, and
    /// the spaced layout of `lookback_warpspec_8x12x6`'s 32-bit rows); the persistent scans'
    /// ticket counter after them.
    status: Option<DeviceBuffer<u64>>,
    /// Two 8-byte value slots per tile (`lookback__{type}_{op}`: room for any element type).
    values: Option<DeviceBuffer<u64>>,
    /// The Fenwick tree, or the tile sums of each level but the last.
    scratch: Vec<DeviceBuffer<T>>,
    /// The epoch of the last launch on `status` (0: none since it was zeroed).
    epoch: u32,
}

/// `buffer`, replaced by a fresh one of `len` elements when it holds fewer.
fn at_least<E: crate::backend::Element>(
    backend: &Backend,
    buffer: &mut Option<DeviceBuffer<E>>,
    len: usize,
) -> Result<bool> {
    if buffer.as_ref().is_some_and(|b| b.len() >= len) {
        return Ok(false);
    }
    *buffer = Some(backend.alloc::<E>(len)?);
    Ok(true)
}

/// The address of a buffer `at_least` just made (never missing).
fn address<E: crate::backend::Element>(buffer: &mut Option<DeviceBuffer<E>>) -> Result<*mut E> {
    buffer.as_mut().map(DeviceBuffer::as_mut_ptr).ok_or_else(|| Error::Invalid("a scan buffer is missing".into()))
}

impl<T: Value> ScanWorkspace<T> {
    /// An empty workspace: nothing allocated until the first [`launches`](Self::launches).
    pub(crate) fn new() -> Self {
        Self { status: None, values: None, scratch: Vec::new(), epoch: 0 }
    }

    /// The launches of `inst`'s `kind` scan of `n` elements from `input` into `output` (device
    /// addresses the caller checked: `n ≥ 1` elements each, `input` 16-byte aligned, distinct),
    /// with the buffers they need made or grown here.
    pub(crate) fn launches(
        &mut self,
        backend: &Backend,
        inst: &ScanInstance<T>,
        kind: Kind,
        (input, output): (*const T, *mut T),
        n: usize,
    ) -> Result<Vec<Launch<T>>> {
        let (n32, excl) = (n as u32, kind.flag());
        let tiles = n.div_ceil(inst.plan.tile() as usize);
        Ok(match inst.plan {
            ScanPlan::Fenwick { build, query, block, span } => {
                self.scratch.truncate(1);
                if self.scratch.first().is_none_or(|t| t.len() < n) {
                    self.scratch = vec![backend.alloc::<T>(n)?];
                }
                let t = self.scratch[0].as_mut_ptr();
                let mut out = Vec::new();
                for s in bit_strides(n) {
                    let src = if s == 1 { input } else { t as *const T };
                    let grid = bit_positions(n, s).div_ceil(span as usize);
                    out.push(Launch::BitBuild(build, config(grid, block), (src, t, n32, s as u32)));
                }
                out.push(Launch::BitQuery(query, config(n.div_ceil(span as usize), block), (t, output, n32, excl)));
                out
            }
            ScanPlan::ReduceThenScan { reduce, block_scan, block, .. } => {
                self.reduce_then_scan(backend, (reduce, block_scan, block), (input, output), n, excl)?
            }
            ScanPlan::DecoupledLookback { .. }
            | ScanPlan::PersistentLookback { .. }
            | ScanPlan::WarpSpecialized { .. } => {
                let (kernel, cfg, words) = single_pass_launch(backend, inst, n)?;
                let status = self.status(backend, words)?;
                vec![Launch::Lookback(kernel, cfg, (input, output, status, n32, 0, excl))]
            }
            ScanPlan::DecoupledLookbackValues { kernel, threads, .. } => {
                let status = self.status(backend, tiles)?;
                at_least(backend, &mut self.values, 2 * tiles)?;
                // Two 8-byte slots per tile: room for two elements of any type.
                let values = address(&mut self.values)?.cast::<T>();
                vec![Launch::LookbackValues(
                    kernel,
                    config(tiles, threads),
                    (input, output, status, values, n32, 0, excl),
                )]
            }
        })
    }

    /// The reduce-then-scan's launches: `reduce` every tile to its sum, level by level up to one
    /// tile, then `block_scan` every level top-down, each tile seeded with its offset.
    fn reduce_then_scan(
        &mut self,
        backend: &Backend,
        (reduce, block_scan, block): (Kernel<BlellochReduceArgs<T>>, Kernel<BlellochBlockArgs<T>>, u32),
        (input, output): (*const T, *mut T),
        n: usize,
        excl: u32,
    ) -> Result<Vec<Launch<T>>> {
        let levels = blelloch_levels(n);
        let top = levels.len() - 1;
        // sums[k]: the tile totals of level k, the elements of level k + 1 (none for the top
        // level, a single tile).
        let fits = self.scratch.len() == top && self.scratch.iter().zip(&levels).all(|(s, l)| s.len() >= l.grid);
        if !fits {
            self.scratch = levels[..top].iter().map(|l| backend.alloc::<T>(l.grid)).collect::<Result<_>>()?;
        }
        let sums: Vec<*mut T> = self.scratch.iter_mut().map(|s| s.as_mut_ptr()).collect();
        // Level k reads the input (k = 0) or level k-1's sums, and scans them in place
        // (exclusively: they become the offsets of level k-1's tiles).
        let level_io =
            |k: usize| if k == 0 { (input, output, excl) } else { (sums[k - 1] as *const T, sums[k - 1], 1) };
        let mut out = Vec::new();
        // Reduce every level but the top, bottom-up.
        for (k, l) in levels[..top].iter().enumerate() {
            out.push(Launch::BlellochReduce(reduce, config(l.grid, block), (level_io(k).0, sums[k], l.len as u32)));
        }
        // Then scan every level top-down, each tile seeded with its offset.
        for k in (0..=top).rev() {
            let (src, dst, x) = level_io(k);
            let offsets = if k == top { std::ptr::null() } else { sums[k] as *const T };
            let args = (src, dst, offsets, levels[k].len as u32, x);
            out.push(Launch::BlellochBlock(block_scan, config(levels[k].grid, block), args));
        }
        Ok(out)
    }

    /// The status array, at least `words` long: a fresh zeroed one (and epochs from 0 again)
    /// when it is shorter, so that no old word can carry a new epoch.
    fn status(&mut self, backend: &Backend, words: usize) -> Result<*mut u64> {
        if at_least(backend, &mut self.status, words)? {
            self.epoch = 0;
        }
        address(&mut self.status)
    }

    /// Enqueues `launches` (from [`launches`](Self::launches)), the look-backs with the next
    /// epoch: after 2^30 − 1 launches on one status array it is replaced by a fresh zeroed one
    /// and the look-backs repointed, so that no old word can carry the new epoch.
    ///
    /// # Safety
    /// The launches' input and output are still valid for `n` elements each (the caller keeps
    /// them alive until the launches complete).
    pub(crate) unsafe fn launch(&mut self, backend: &Backend, launches: &mut [Launch<T>]) -> Result<()> {
        if self.status.is_some() {
            if self.epoch >= MAX_EPOCH {
                let words = self.status.as_ref().map_or(0, DeviceBuffer::len);
                self.status = Some(backend.alloc::<u64>(words)?);
                self.epoch = 0;
                let p = address(&mut self.status)?;
                for l in launches.iter_mut() {
                    match l {
                        Launch::Lookback(_, _, args) => args.2 = p,
                        Launch::LookbackValues(_, _, args) => args.2 = p,
                        _ => {}
                    }
                }
            }
            self.epoch += 1;
        }
        for &l in launches.iter() {
            // SAFETY: `launches` checked the preconditions of the plan and sized every buffer
            // as the kernels' docs require (the input and output are the caller's promise): the
            // tree n elements, each level's sums its grid, the status one word per tile (zeroed
            // at allocation, epochs strictly increasing since), the value slots two per tile;
            // the grids are the ones the kernels' Launch sections prescribe and the blocks the
            // kernels' compiled block sizes.
            unsafe { l.enqueue(backend, self.epoch) }?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kernels::scan::index::{FLAG_INVALID, status_flag, ticket_of};

    use super::*;
    use crate::scan::registry::find;
    use crate::types::Op;

    /// Launches `name`'s row of `T` sums once on the emulator, on the status array its plan
    /// sizes, and checks where the kernel wrote: `published` of every `stride` words of each
    /// tile (the others untouched), and the ticket counter in the array's last word. So the
    /// host's `spacing` and the kernel's layout cannot part, either way.
    fn status_layout<T: Value>(name: &str, stride: usize, published: usize) {
        let backend = Backend::emulator();
        let inst = find(name).and_then(|v| v.instance::<T>(Op::Sum)).expect("a registered row");
        let n = 3 * inst.plan.tile() as usize + 5;
        let data: Vec<T> = (0..n as u64).map(T::random).collect();
        let input = backend.upload(&data).expect("upload");
        let mut output = backend.alloc::<T>(n).expect("alloc");
        let mut ws = ScanWorkspace::<T>::new();
        let io = (input.as_ptr(), output.as_mut_ptr());
        let mut launches = ws.launches(&backend, &inst, Kind::Inclusive, io, n).expect("launches");
        // SAFETY: input and output live, n elements each, until the synchronize below.
        unsafe { ws.launch(&backend, &mut launches) }.expect("launch");
        backend.synchronize().expect("synchronize");
        let status = backend.download(ws.status.as_ref().expect("a status array")).expect("download");
        let (what, epoch, tiles) = (format!("{name} {:?}", T::ELEM), ws.epoch, n.div_ceil(inst.plan.tile() as usize));
        assert_eq!(status.len(), stride * tiles + 1, "{what}: status words");
        assert!(ticket_of(status[stride * tiles], epoch).is_some(), "{what}: no ticket counter in the last word");
        for (i, &word) in status[..stride * tiles].iter().enumerate() {
            let written = status_flag(word, epoch) != FLAG_INVALID;
            assert_eq!(written, i % stride < published, "{what}: word {i} of tile {} ({word:#x})", i / stride);
        }
    }

    #[test]
    fn the_warp_specialized_rows_write_the_status_words_their_plan_allocates() {
        // 8x12x6 and its 32-bit typed rows, and the larger-tile shapes: one word of two a tile;
        // its packed experiment: every word; a 64-bit row: both halves of each tile.
        status_layout::<i32>("lookback_warpspec_8x12x6", 2, 1);
        status_layout::<u32>("lookback_warpspec_8x12x6", 2, 1);
        status_layout::<f32>("lookback_warpspec_8x12x6", 2, 1);
        status_layout::<i32>("lookback_warpspec_8x12x6_packed", 1, 1);
        status_layout::<i32>("lookback_warpspec", 1, 1);
        status_layout::<i32>("lookback_warpspec_10x12x4", 2, 1);
        status_layout::<i32>("lookback_warpspec_12x12x4", 2, 1);
        status_layout::<u64>("lookback_warpspec_8x12x6", 2, 2);
    }
}
