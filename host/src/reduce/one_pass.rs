//! The launch shape and the storage of the library's one-launch reductions with a last-block
//! finish — [`ArgReducer`](super::arg::ArgReducer) (`arg_reduce`) and the transform-reduce
//! methods of [`Reducer`](super::Reducer) (`transform_reduce`) — on the plan's two axes
//! ([`super::plan`]): the grid is [`Grid::Resident`] (as many blocks as the GPU holds, at most
//! one per tile of `block × items` elements), the finish is the last block's (`single_pass`'s:
//! partials, a ticket, the answer after the partials). One place sizes both.
//!
//! **Block and grid** by size, from [`PLAN`] (measured on the H100: block 256 up to 2^22,
//! block 1024 above, both on the resident grid), unless the caller fixes them (`with_block`,
//! `with_sizing`; `--block`, `--blocks-per-sm`): any power of two in 32..=1024, at most K blocks
//! per SM ([`Sizing`]). Each shape a reducer meets gets its own storage ([`Shapes`]).

use super::plan::{BlockRule, Grid};
use crate::backend::{Backend, DeviceBuffer, Element, LaunchConfig};
use crate::error::{Error, Result};

/// The block of the plan's first row, and of a caller who fixes the grid but not the block.
pub const DEFAULT_BLOCK: u32 = 256;

/// One row of [`PLAN`]: the launch shape of the one-launch reductions for every `n` up to
/// `max_n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnePassRow {
    /// Largest `n` the row covers.
    pub max_n: usize,
    /// Threads per block.
    pub block: u32,
    /// Blocks per SM the grid may reach (`None`: as many as are resident at once, from the
    /// occupancy calculator; a large figure such as 1024: one block per tile).
    pub blocks_per_sm: Option<u32>,
}

/// The plan of `arg_reduce` and `transform_reduce` by size: the first row covering `n`.
///
/// From `docs/measurements/2026-11-26-h100/ops-grid-4f7feb7/ops_grid.csv` (NVIDIA H100 80GB
/// HBM3, `scripts/gpu/ops_grid.sh`, 2 interleaved rounds of 20 runs, f32 argmax and dot; every
/// run checked): block 1024 on the resident grid (264 blocks) is the fastest shape or ties it at
/// 2^24 and 2^28 —
///
/// | n | op | 1024, resident | 256, resident (the plan before) | 1024, a block per tile |
/// |---|---|---|---|---|
/// | 2^24 | argmax | 27.90 µs | 29.23–29.36 | 28.59–28.86 |
/// | 2^24 | dot | 48.14–48.30 | 49.04–49.41 | 48.19–48.29 |
/// | 2^28 | argmax | 344.8–345.6 | 355.0–358.6 | 347.8–348.0 |
/// | 2^28 | dot | 684.1–684.2 | 697.8–698.5 | 681.6 (one round) |
///
/// (block 512 a block per tile and 256 with 16 blocks per SM were slower still). Up to 2^22,
/// not measured for these kernels, the row of the plan before (block 256, as the typed sums'
/// `sum::PLAN` runs there).
pub const PLAN: &[OnePassRow] = &[
    OnePassRow { max_n: 1 << 22, block: DEFAULT_BLOCK, blocks_per_sm: None },
    OnePassRow { max_n: u32::MAX as usize, block: 1024, blocks_per_sm: None },
];

/// How a caller shapes the launches: by the [`PLAN`], or at a block (and grid) it fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// The plan's row for each `n`.
    Plan,
    /// This block, and this many blocks per SM at most (`None`: the resident blocks).
    Fixed {
        /// Threads per block (checked: a power of two in 32..=1024).
        block: u32,
        /// Blocks per SM of the largest grid (`None`: as many as are resident).
        blocks_per_sm: Option<u32>,
    },
}

impl Sizing {
    /// `block` threads (checked) on the resident grid: `with_block`'s sizing.
    pub fn block(block: u32) -> Result<Self> {
        check_block(block)?;
        Ok(Sizing::Fixed { block, blocks_per_sm: None })
    }

    /// What a caller asked (`--block`, `--blocks-per-sm`): the plan where it asked neither, else
    /// the block (or [`DEFAULT_BLOCK`]) and the grid (or the resident one). Checked.
    pub fn asked(block: Option<u32>, blocks_per_sm: Option<u32>) -> Result<Self> {
        if block.is_none() && blocks_per_sm.is_none() {
            return Ok(Sizing::Plan);
        }
        let block = block.unwrap_or(DEFAULT_BLOCK);
        check_block(block)?;
        if blocks_per_sm == Some(0) {
            return Err(Error::Invalid("blocks per SM = 0; it must be at least 1".into()));
        }
        Ok(Sizing::Fixed { block, blocks_per_sm })
    }

    /// The block and the blocks per SM for `n` elements.
    pub fn at(self, n: usize) -> BlockAndGrid {
        match self {
            Sizing::Fixed { block, blocks_per_sm } => (block, blocks_per_sm),
            Sizing::Plan => {
                let row = PLAN.iter().find(|r| n <= r.max_n).or(PLAN.last());
                row.map_or((DEFAULT_BLOCK, None), |r| (r.block, r.blocks_per_sm))
            }
        }
    }
}

/// A block and its blocks per SM (`None`: the resident ones), as [`Sizing::at`] gives them.
pub type BlockAndGrid = (u32, Option<u32>);

/// The launch shape of one kernel at one block and grid rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnePass {
    /// Threads per block.
    pub block: u32,
    /// Elements a thread consumes per trip of its loop.
    pub items: u32,
    /// Blocks per SM of the largest grid: the occupancy calculator's answer, or the caller's.
    pub resident: u32,
    /// The most blocks any `n` gets: `resident` per SM, within 2^29 threads.
    pub max_grid: u32,
    /// Multiprocessors.
    sms: u32,
}

impl OnePass {
    /// The shape of `symbol` at `block` threads (checked: a power of two in 32..=1024) with
    /// `items` elements per thread and trip, on `backend`'s device, on the resident grid.
    pub fn new(backend: &Backend, symbol: &'static str, block: u32, items: u32) -> Result<Self> {
        Self::with_grid(backend, symbol, (block, None), items)
    }

    /// The same with the grid at most `blocks_per_sm` per SM (`None`: the resident blocks).
    pub fn with_grid(
        backend: &Backend,
        symbol: &'static str,
        (block, blocks_per_sm): BlockAndGrid,
        items: u32,
    ) -> Result<Self> {
        check_block(block)?;
        let resident = match blocks_per_sm {
            Some(k) => k.max(1),
            None => backend.occupancy(crate::ptx::entry(symbol), block, 0)?.max(1),
        };
        let sms = backend.info().multiprocessors.max(1);
        let (most, _) = Grid::Resident.size(u32::MAX as usize, block, items, sms, || Ok(resident))?;
        Ok(Self { block, items, resident, max_grid: most as u32, sms })
    }

    /// The shape `sizing` gives `n` elements of `symbol`.
    pub fn sized(backend: &Backend, symbol: &'static str, sizing: Sizing, items: u32, n: usize) -> Result<Self> {
        Self::with_grid(backend, symbol, sizing.at(n), items)
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

/// The shapes and storage of one kernel's calls under one [`Sizing`]: a shape and its words
/// per (block, grid rule) the calls have needed (the plan has a few rows), made on first use
/// and reused.
pub struct Shapes<T: Element> {
    symbol: &'static str,
    items: u32,
    indices: bool,
    sizing: Sizing,
    made: Vec<(BlockAndGrid, OnePass, LastBlockWords<T>)>,
}

impl<T: Element> Shapes<T> {
    /// Nothing made yet; `indices` for a kernel that publishes positions.
    pub fn new(symbol: &'static str, items: u32, indices: bool, sizing: Sizing) -> Self {
        Self { symbol, items, indices, sizing, made: Vec::new() }
    }

    /// The slot of the shape for `n` elements (made, with its words, where it is new).
    pub fn for_len(&mut self, backend: &Backend, n: usize) -> Result<usize> {
        let want = self.sizing.at(n);
        if let Some(at) = self.made.iter().position(|(key, _, _)| *key == want) {
            return Ok(at);
        }
        let shape = OnePass::with_grid(backend, self.symbol, want, self.items)?;
        let words = LastBlockWords::new(backend, &shape, self.indices)?;
        self.made.push((want, shape, words));
        Ok(self.made.len() - 1)
    }

    /// The shape and words in `slot`.
    pub fn get(&mut self, slot: usize) -> Result<(OnePass, &mut LastBlockWords<T>)> {
        match self.made.get_mut(slot) {
            Some((_, shape, words)) => Ok((*shape, words)),
            None => Err(Error::Invalid(format!("no launch shape in slot {slot}"))),
        }
    }

    /// The words in `slot`.
    pub fn words(&self, slot: usize) -> Result<&LastBlockWords<T>> {
        self.made.get(slot).map(|(_, _, w)| w).ok_or_else(|| Error::Invalid(format!("no launch shape in slot {slot}")))
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

    #[test]
    fn a_sizing_gives_the_plan_or_what_was_asked() {
        assert_eq!(Sizing::asked(None, None).unwrap(), Sizing::Plan);
        assert_eq!(Sizing::Plan.at(1), (PLAN[0].block, PLAN[0].blocks_per_sm));
        assert_eq!(Sizing::Plan.at(u32::MAX as usize), PLAN.last().map(|r| (r.block, r.blocks_per_sm)).unwrap());
        assert_eq!(Sizing::asked(Some(1024), Some(1024)).unwrap().at(5), (1024, Some(1024)));
        assert_eq!(Sizing::asked(None, Some(16)).unwrap().at(5), (DEFAULT_BLOCK, Some(16)));
        assert_eq!(Sizing::block(512).unwrap().at(5), (512, None));
        assert!(Sizing::asked(Some(48), None).unwrap_err().to_string().contains("32..=1024"));
        assert!(Sizing::asked(None, Some(0)).is_err());
        assert!(PLAN.windows(2).all(|w| w[0].max_n < w[1].max_n) && PLAN.last().unwrap().max_n == u32::MAX as usize);
    }

    #[test]
    fn blocks_per_sm_cap_the_grid_and_the_storage_follows_the_shape() {
        let b = Backend::emulator();
        let sms = b.info().multiprocessors.max(1);
        let per_tile = OnePass::with_grid(&b, "arg_reduce__f32_max", (1024, Some(1024)), 16).unwrap();
        assert_eq!(per_tile.grid(1 << 24), 1024); // one block per tile of 16 × 1024
        assert_eq!(per_tile.max_grid, (1024 * sms).min(1 << 19));
        let two = OnePass::with_grid(&b, "arg_reduce__f32_max", (256, Some(2)), 16).unwrap();
        assert_eq!(two.grid(1 << 24), 2 * sms);
        let mut shapes = Shapes::<f32>::new("arg_reduce__f32_max", 16, true, Sizing::block(256).unwrap());
        let (s1, s2) = (shapes.for_len(&b, 10).unwrap(), shapes.for_len(&b, 1 << 20).unwrap());
        assert_eq!((s1, s2), (0, 0)); // one shape for every length: made once
        let (shape, words) = shapes.get(0).unwrap();
        assert!(words.values.len() > shape.max_grid as usize && words.indices.is_some());
        assert!(shapes.get(1).is_err() && shapes.words(1).is_err());
    }
}
