//! The launch shape and the storage of the library's one-launch reductions with a last-block
//! finish — [`ArgReducer`](super::arg::ArgReducer) (`arg_reduce`) and the transform-reduce
//! methods of [`Reducer`](super::Reducer) (`transform_reduce`) — on the plan's two axes
//! ([`super::plan`]): the grid is [`Grid::Resident`] (as many blocks as the GPU holds, at most
//! one per tile of `block × items` elements), the finish is the last block's (`single_pass`'s:
//! partials, a ticket, the answer after the partials). One place sizes both.
//!
//! **Block.** [`DEFAULT_BLOCK`] (256), the block the typed pairs of [`PLAN`](super::sum::PLAN)
//! run at, unless the caller asks for another (`with_block`, `--block`): any power of two in
//! 32..=1024.

use super::plan::{BlockRule, Grid};
use crate::backend::{Backend, DeviceBuffer, Element, LaunchConfig};
use crate::error::{Error, Result};

/// The block the plan gives the one-launch reductions (the typed rows of `sum::PLAN` run at
/// the same; not yet tuned on a GPU for these kernels: `scripts/gpu/library_ops.sh` times them).
pub const DEFAULT_BLOCK: u32 = 256;

/// The launch shape of one kernel at one block: what [`Grid::Resident`] gives for every `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnePass {
    /// Threads per block.
    pub block: u32,
    /// Elements a thread consumes per trip of its loop.
    pub items: u32,
    /// Blocks of this kernel one SM holds at once (the occupancy calculator's answer).
    pub resident: u32,
    /// The most blocks any `n` gets: the whole GPU's resident blocks, within 2^29 threads.
    pub max_grid: u32,
    /// Multiprocessors.
    sms: u32,
}

impl OnePass {
    /// The shape of `symbol` at `block` threads (checked: a power of two in 32..=1024) with
    /// `items` elements per thread and trip, on `backend`'s device.
    pub fn new(backend: &Backend, symbol: &'static str, block: u32, items: u32) -> Result<Self> {
        check_block(block)?;
        let resident = backend.occupancy(symbol, block, 0)?.max(1);
        let sms = backend.info().multiprocessors.max(1);
        let (most, _) = Grid::Resident.size(u32::MAX as usize, block, items, sms, || Ok(resident))?;
        Ok(Self { block, items, resident, max_grid: most as u32, sms })
    }

    /// Blocks for `n` elements: one per tile of `block × items`, at most [`max_grid`](Self::max_grid).
    pub fn grid(&self, n: usize) -> u32 {
        let sized = Grid::Resident.size(n, self.block, self.items, self.sms, || Ok(self.resident));
        sized.map_or(self.max_grid, |(g, _)| (g as u32).clamp(1, self.max_grid))
    }

    /// The depth of the addition tree of `n` elements (the `depth` of
    /// [`cpu::float_sum_bound`](crate::cpu::float_sum_bound)): the elements one thread folds
    /// (`⌈n / (threads · items)⌉ · items`, and an unaligned head and tail element), five warp and
    /// five block levels, then the last block's: `⌈grid / block⌉` partials per thread and its
    /// own ten levels.
    pub fn depth(&self, n: usize) -> u64 {
        let (grid, block, items) = (self.grid(n) as u64, self.block as u64, self.items.max(1) as u64);
        let per_thread = (n as u64).div_ceil(grid * block * items) * items + 2;
        per_thread + 10 + grid.div_ceil(block) + 10
    }

    /// The launch of `n` elements (static shared memory only).
    pub fn config(&self, n: usize) -> LaunchConfig {
        LaunchConfig { grid: self.grid(n), block: self.block, shared_bytes: 0 }
    }
}

/// `Ok` for a block the one-launch kernels take, else one line saying which they take.
pub fn check_block(block: u32) -> Result<()> {
    if BlockRule::ANY.allows(block) {
        Ok(())
    } else {
        Err(Error::Invalid(format!("block {block} is not allowed; block must be {}", BlockRule::ANY)))
    }
}

/// `Ok` for a length the kernels take: 1..=`u32::MAX` (their length parameter is 32-bit).
pub fn check_len(what: &str, n: usize) -> Result<()> {
    if n == 0 || n > u32::MAX as usize {
        return Err(Error::Invalid(format!("{what}: n = {n}; the kernels take n in 1..={}", u32::MAX)));
    }
    Ok(())
}

/// The device storage of a last-block finish: `slots` words of `T` for the partials and the
/// answer after them (`max_grid + 1`), the same of `u32` where the kernel publishes an index
/// too, and the ticket (one zeroed `u32`, which every completed launch leaves at 0).
pub struct LastBlockWords<T: Element> {
    /// Partials, then the answer at `[grid]`.
    pub values: DeviceBuffer<T>,
    /// Partial indices, then the answer's (argmin, argmax only).
    pub indices: Option<DeviceBuffer<u32>>,
    /// The ticket.
    pub ticket: DeviceBuffer<u32>,
}

impl<T: Element> LastBlockWords<T> {
    /// Storage for grids of up to `shape.max_grid` blocks; `indices` for a kernel that
    /// publishes positions.
    pub fn new(backend: &Backend, shape: &OnePass, indices: bool) -> Result<Self> {
        let slots = shape.max_grid as usize + 1;
        Ok(Self {
            values: backend.alloc::<T>(slots)?,
            indices: if indices { Some(backend.alloc::<u32>(slots)?) } else { None },
            ticket: backend.alloc::<u32>(1)?,
        })
    }

    /// The answer of the last launch of `grid` blocks (waits for it): its value, and its index
    /// where there are indices.
    pub fn answer(&self, backend: &Backend, grid: u32) -> Result<(T, Option<u32>)> {
        let value = backend.read_element(&self.values, grid as usize)?;
        let index = match &self.indices {
            Some(i) => Some(backend.read_element(i, grid as usize)?),
            None => None,
        };
        Ok((value, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_follows_n_up_to_the_resident_blocks() {
        let b = Backend::emulator();
        let shape = OnePass::new(&b, "arg_reduce__f32_max", 256, 16).unwrap();
        assert_eq!(shape.grid(1), 1);
        assert_eq!(shape.grid(4096), 1);
        assert_eq!(shape.grid(4097), 2);
        assert_eq!(shape.grid(u32::MAX as usize), shape.max_grid);
        assert!(shape.max_grid >= 1 && shape.max_grid as u64 * 256 <= 1 << 29);
        let e = OnePass::new(&b, "arg_reduce__f32_max", 48, 16).unwrap_err().to_string();
        assert!(e.contains("block 48 is not allowed") && e.contains("32..=1024"), "{e}");
        assert!(check_len("argmax", 0).is_err() && check_len("argmax", 1).is_ok());
    }
}
