//! The one definition of a launch plan. A reduction variant is a kernel plus two independent
//! axes, each matched here and nowhere else, exhaustively:
//!
//! * [`Grid`] — how many blocks a launch gets: one per `block × items` elements, as many as
//!   the GPU holds at once, a fixed count per multiprocessor, one block, or one thread;
//! * [`Finish`] — what the kernel leaves behind and who turns it into the one answer: the
//!   host adds per-block (or per-thread) partials, the last block adds them on the device, or
//!   every block adds its partial into the result with an atomic.
//!
//! A [`Row`] is what a variant runs on one element type `T`: its finish (holding the kernel
//! of that type), its items per thread and its shared memory. The fields every row of a
//! variant shares (the grid, blocks per SM, allowed blocks, compute capability) live in the
//! registry's `Variant`. [`super::geometry`] turns a row, `n` and a block size into a
//! [`Geometry`], once; the reduction's workspace allocates what the finish needs and launches.
//!
//! The argument lists are generic over the element type (`ReadArgs<T>`, with `i32` the
//! default: the curriculum's kernels); a kernel of another type is the same shape with its
//! own pointers (`warp_shuffle__f32_max` takes `ReadArgs<f32>`).

use crate::backend::{Backend, Kernel, LaunchConfig};
use crate::error::{Error, Result};

use super::nested::{Children, blocks_per_nested_launch, pending_per_chain, per_block_pending_launches};

/// Arguments of a kernel that reads its input: `(g_idata, g_odata, n)`; block `b` writes its
/// partial result to `g_odata[b]`.
pub type ReadArgs<T = i32> = (*const T, *mut T, u32);
/// Arguments of a kernel that works in place on a scratch copy: `(g_idata, g_odata, n)`.
pub type InPlaceArgs<T = i32> = (*mut T, *mut T, u32);
/// Arguments of a last-block kernel: `(g_idata, g_partials, g_ticket, g_out, n)`. Blocks
/// write partials to `g_partials[blockIdx.x]`; the last block to finish (it draws the last
/// ticket from `*g_ticket`, which it then resets to 0) adds them and writes `*g_out`.
pub type SinglePassArgs<T = i32> = (*const T, *mut T, *mut u32, *mut T, u32);
/// Arguments of an accumulating kernel: `(g_idata, g_acc, n, epoch)`. Every block folds its
/// partial into `g_acc[epoch % 2]` (which must hold the operator's identity at the start: 0
/// for a sum) and block 0 resets the other word for the next launch; the host passes
/// consecutive epochs.
pub type AccumulateArgs<T = i32> = (*const T, *mut T, u32, u32);
/// Arguments of `atomic_accumulate_to_host`: `(g_idata, g_tally, n, h_value, h_flag, seq)`.
/// Every block adds its sum and a count of one into the tally word (0 at the start); the last
/// block resets it, writes the sum into `h_value` and then `seq` into `h_flag`
/// ([`crate::backend::AnswerSlot`]).
pub type ToHostArgs = (*const i32, *mut u64, u32, *mut u64, *mut u32, u32);
/// Arguments of a nested kernel with one grid per level (`recursive_reduce2`): `(g_idata,
/// g_odata, n, stride, dim)`. Each block folds its `dim` elements in place with `stride =
/// blockDim` threads, block 0 launches the next level; the last level writes one partial per
/// block.
pub type LevelArgs<T = i32> = (*mut T, *mut T, u32, u32, u32);
/// Arguments of a clocked kernel (the sum-of-squares steps): `(g_idata, g_result, g_clocks,
/// n)`. It writes one result per thread or per block (see [`Per`]) and, per block,
/// `clock64()` at its start and end to `g_clocks[2b]` and `g_clocks[2b + 1]`.
pub type ClockedArgs<T = i32> = (*const T, *mut T, *mut u64, u32);

/// Most threads of a [`Grid::Resident`] grid: the precondition of the grid-stride loads
/// (`kernels::collective::thread::MAX_GRID_THREADS`, 2^29).
pub const MAX_GRID_THREADS: u32 = kernels::collective::thread::MAX_GRID_THREADS;

/// Largest `gridDim.x` on every GPU since Kepler.
pub const MAX_GRID: u64 = (1 << 31) - 1;

/// Allowed block sizes: powers of two in `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRule {
    /// Smallest block.
    pub min: u32,
    /// Largest block.
    pub max: u32,
}

impl BlockRule {
    /// Every power of two from 32 to 1024.
    pub const ANY: BlockRule = BlockRule { min: 32, max: 1024 };

    /// Does `block` satisfy the rule?
    pub fn allows(self, block: u32) -> bool {
        block.is_power_of_two() && (self.min..=self.max).contains(&block)
    }

    /// The allowed blocks, smallest first.
    pub fn sizes(self) -> impl Iterator<Item = u32> {
        (5..=10).map(|s| 1u32 << s).filter(move |&b| self.allows(b))
    }
}

impl std::fmt::Display for BlockRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a power of two in {}..={}", self.min, self.max)
    }
}

/// Shared memory a kernel uses per block. The byte counts come from the kernels crate's
/// constants; `tests/ptx.rs` compares them with what ptxas reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMem {
    /// None.
    None,
    /// A static array of this many bytes (compiled in: the kernel declares the largest
    /// block's array).
    Static {
        /// Bytes the kernel declares.
        bytes: u32,
    },
    /// Dynamic shared memory sized at launch: this many bytes per thread of the block.
    DynamicPerThread(u32),
}

impl SharedMem {
    /// Dynamic bytes to pass at launch for `block` threads.
    pub fn dynamic_bytes(self, block: u32) -> u32 {
        match self {
            SharedMem::None | SharedMem::Static { .. } => 0,
            SharedMem::DynamicPerThread(b) => b * block,
        }
    }

    /// All shared bytes per block (static + dynamic) at `block` threads.
    pub fn bytes(self, block: u32) -> u32 {
        match self {
            SharedMem::None => 0,
            SharedMem::Static { bytes } => bytes,
            SharedMem::DynamicPerThread(b) => b * block,
        }
    }
}

/// One kernel, or one instantiation per block size (const-generic kernels).
#[derive(Clone, Copy, Debug)]
pub enum KernelSel<A: 'static> {
    /// The same kernel for every block size.
    One(Kernel<A>),
    /// `(block, kernel)` pairs: the kernel compiled for that block size.
    PerBlock(&'static [(u32, Kernel<A>)]),
}

impl<A> KernelSel<A> {
    /// The kernel for `block`, if there is one.
    pub fn for_block(&self, block: u32) -> Option<Kernel<A>> {
        match self {
            KernelSel::One(k) => Some(*k),
            KernelSel::PerBlock(list) => list.iter().find(|(b, _)| *b == block).map(|(_, k)| *k),
        }
    }

    /// Every PTX symbol involved.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self {
            KernelSel::One(k) => vec![k.name],
            KernelSel::PerBlock(list) => list.iter().map(|(_, k)| k.name).collect(),
        }
    }
}

/// The grid axis: how many blocks a launch of `n` elements gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// `ceil(n / (block × items_per_thread))`: one block per segment of the input.
    PerItems,
    /// A grid-stride loop over a grid no larger than the GPU holds at once:
    /// `min(ceil(n / (block × items_per_thread)), SMs × resident blocks per SM)`, the
    /// residency from the occupancy calculator unless the variant's `blocks_per_sm` fixes it,
    /// and never more than `MAX_GRID_THREADS` (2^29) threads, the bound of the 32-bit
    /// indices of `kernels::collective::thread::thread_sum_v4` and `thread_reduce_v128`.
    Resident,
    /// `SMs × blocks_per_sm` blocks, whatever `n` (a grid-stride loop inside).
    PerMultiprocessor,
    /// One block of the requested size.
    OneBlock,
    /// One block of one thread: the block size asked for is ignored.
    OneThread,
}

/// What a host-finished kernel writes: one partial per block, or per thread of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// One partial per block.
    Block,
    /// One partial per thread.
    Thread,
}

/// The finish axis: the kernel (its arguments say what it writes) and who makes the answer.
/// `T` is the element type of the kernel's buffers (`i32` for the curriculum's kernels).
#[derive(Clone, Copy, Debug)]
pub enum Finish<T: 'static = i32> {
    /// Reads its input, writes one partial per block; the host adds the partials (untimed).
    HostAdds(KernelSel<ReadArgs<T>>),
    /// Overwrites its input (the host hands it a scratch copy, made before timing), writes one
    /// partial per block; the host adds the partials.
    HostAddsInPlace(KernelSel<InPlaceArgs<T>>),
    /// Writes one partial per block or thread and two `clock64()` stamps per block; the host
    /// adds the partials.
    HostAddsClocked(Kernel<ClockedArgs<T>>, Per),
    /// One launch: the last block to finish adds the per-block partials on the device.
    LastBlock(Kernel<SinglePassArgs<T>>),
    /// One launch: each block adds its partial into the result word with an atomic.
    AtomicAccumulate(Kernel<AccumulateArgs<T>>),
    /// Launches from the device (dynamic parallelism), in place on a scratch copy, one partial
    /// per block that the host adds.
    Nested(Nesting<T>),
}

/// How a nested kernel recurses ([`Finish::Nested`]).
#[derive(Clone, Copy, Debug)]
pub enum Nesting<T: 'static = i32> {
    /// Each block launches its own chain of one-block grids: `(g_idata, g_odata, n)`, launched
    /// with the block asked for; the children start as the second field says.
    PerBlock(Kernel<InPlaceArgs<T>>, Children),
    /// One grid per level, launched by block 0: `(g_idata, g_odata, n, block / 2, block)`,
    /// launched with half the block asked for (each block still owns `block` elements).
    PerLevel(Kernel<LevelArgs<T>>),
}

impl<T> Nesting<T> {
    /// The kernel's PTX symbol.
    pub fn name(&self) -> &'static str {
        match self {
            Nesting::PerBlock(k, _) => k.name,
            Nesting::PerLevel(k) => k.name,
        }
    }
}

/// Buffers a finish needs beside the input, for `grid` blocks of `block` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Partial results the kernel writes (per block or per thread; the last-block finish
    /// writes one per block, read by the device).
    pub partials: u64,
    /// Partials the host reads and adds (0: the answer is one device word).
    pub host_adds: u64,
    /// A scratch copy of the input.
    pub scratch: bool,
    /// The last-block ticket.
    pub ticket: bool,
    /// Result words on the device (1 for the last block, 2 alternating for the atomic finish).
    pub result_words: usize,
    /// `clock64()` stamps: two per block.
    pub clocks: bool,
}

impl<T> Finish<T> {
    /// Every PTX symbol it launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        match self {
            Finish::HostAdds(k) => k.symbols(),
            Finish::HostAddsInPlace(k) => k.symbols(),
            Finish::HostAddsClocked(k, _) => vec![k.name],
            Finish::LastBlock(k) => vec![k.name],
            Finish::AtomicAccumulate(k) => vec![k.name],
            Finish::Nested(k) => vec![k.name()],
        }
    }

    /// The kernel symbol that runs at `block` threads, if the variant has one for it.
    pub fn symbol_for(&self, block: u32) -> Option<&'static str> {
        match self {
            Finish::HostAdds(k) => k.for_block(block).map(|k| k.name),
            Finish::HostAddsInPlace(k) => k.for_block(block).map(|k| k.name),
            Finish::HostAddsClocked(k, _) => Some(k.name),
            Finish::LastBlock(k) => Some(k.name),
            Finish::AtomicAccumulate(k) => Some(k.name),
            Finish::Nested(k) => Some(k.name()),
        }
    }

    /// What it needs for `grid` blocks of `block` threads.
    pub fn needs(&self, grid: u64, block: u32) -> Needs {
        let host = |partials: u64| Needs {
            partials,
            host_adds: partials,
            scratch: false,
            ticket: false,
            result_words: 0,
            clocks: false,
        };
        match self {
            Finish::HostAdds(_) => host(grid),
            Finish::HostAddsInPlace(_) => Needs { scratch: true, ..host(grid) },
            Finish::HostAddsClocked(_, Per::Block) => Needs { clocks: true, ..host(grid) },
            Finish::HostAddsClocked(_, Per::Thread) => Needs { clocks: true, ..host(grid * block as u64) },
            Finish::LastBlock(_) => Needs { ticket: true, result_words: 1, host_adds: 0, ..host(grid) },
            Finish::AtomicAccumulate(_) => Needs { result_words: 2, ..host(0) },
            Finish::Nested(_) => Needs { scratch: true, ..host(grid) },
        }
    }

    /// Enqueues one launch of the kernel at `cfg` with the buffers `p` (those [`Finish::needs`]
    /// asked for; the others are null) over `n` elements; `epoch` numbers the launches of one
    /// accumulating workspace.
    ///
    /// # Safety
    /// `cfg` is the geometry [`super::geometry`] returned for this row at `n` and `cfg.block`;
    /// `p.input` (or `p.scratch`, for in-place kernels) holds `n` elements and every other
    /// pointer the sizes [`Finish::needs`] gave, all buffers of `backend` of this row's element
    /// type; for the atomic finish, `p.result[epoch % 2]` holds the identity (the previous
    /// launch of this workspace had epoch `epoch - 1`, or the words are fresh and `epoch` < 2).
    pub unsafe fn launch(
        &self,
        backend: &Backend,
        cfg: LaunchConfig,
        p: Pointers<T>,
        n: u32,
        epoch: u32,
    ) -> Result<()> {
        let missing = || Error::Invalid(format!("no kernel for block {}", cfg.block));
        match self {
            Finish::HostAdds(k) => {
                let k = k.for_block(cfg.block).ok_or_else(missing)?;
                // SAFETY: forwarded from the caller: input n elements, partials one per block.
                unsafe { backend.launch(&k, cfg, (p.input, p.partials, n)) }
            }
            Finish::HostAddsInPlace(k) => {
                let k = k.for_block(cfg.block).ok_or_else(missing)?;
                // SAFETY: forwarded from the caller: the scratch copy holds n elements.
                unsafe { backend.launch(&k, cfg, (p.scratch, p.partials, n)) }
            }
            // SAFETY: forwarded from the caller: partials and two clocks per block (or thread).
            Finish::HostAddsClocked(k, _) => unsafe { backend.launch(k, cfg, (p.input, p.partials, p.clocks, n)) },
            // SAFETY: forwarded from the caller: partials per block, the ticket and one result word.
            Finish::LastBlock(k) => unsafe { backend.launch(k, cfg, (p.input, p.partials, p.ticket, p.result, n)) },
            // SAFETY: forwarded from the caller: two result words, word epoch % 2 cleared.
            Finish::AtomicAccumulate(k) => unsafe { backend.launch(k, cfg, (p.input, p.result, n, epoch)) },
            Finish::Nested(Nesting::PerBlock(k, children)) => {
                let need = per_block_pending_launches(cfg.grid, cfg.block, *children);
                let room = backend.raise_pending_launch_limit(need)?;
                let per_launch = blocks_per_nested_launch(cfg.grid, cfg.block, *children, room).ok_or_else(|| {
                    let chain = pending_per_chain(cfg.block, *children) + kernels::device::launch::MAX_DEPTH as usize;
                    Error::Unsupported(format!(
                        "one block's chain needs room for {chain} pending device-side launches; the device grants \
                             {room}"
                    ))
                })?;
                // One host launch per part of the grid that the room holds (one, but for the
                // largest grids of `recursive_reduce_nosync`): block `first` of the whole grid is
                // block 0 of its part, which gets its segment and partial as its own.
                let mut first = 0;
                while first < cfg.grid {
                    let blocks = per_launch.min(cfg.grid - first);
                    let skip = first as usize * cfg.block as usize;
                    let part = LaunchConfig { grid: blocks, ..cfg };
                    let (scratch, partials) = (p.scratch.wrapping_add(skip), p.partials.wrapping_add(first as usize));
                    // SAFETY: forwarded from the caller: the scratch copy holds n elements and the
                    // partials one per block, so this part's `n - skip` elements (skip < n, as
                    // block `first` exists) and `blocks` partials are inside them.
                    unsafe { backend.launch(k, part, (scratch, partials, n - skip as u32))? };
                    first += blocks;
                }
                Ok(())
            }
            Finish::Nested(Nesting::PerLevel(k)) => {
                let half = LaunchConfig { block: cfg.block / 2, ..cfg };
                // SAFETY: as above; each block owns `cfg.block` elements, folded by half as many
                // threads.
                unsafe { backend.launch(k, half, (p.scratch, p.partials, n, cfg.block / 2, cfg.block)) }
            }
        }
    }

    /// Additions a value passes through in the finish of `grid` blocks of `block` threads: the
    /// host's pairwise tree over the partials, a chain of `grid` atomic adds in arrival order,
    /// or the last block's `⌈grid / block⌉` adds per thread and its five warp and five block
    /// levels (the `depth` of a float sum's bound, `reduce_scan::cpu::float_sum_bound`).
    pub fn depth(&self, grid: u64, block: u64) -> u64 {
        let needs = self.needs(grid, block as u32);
        match self {
            Finish::AtomicAccumulate(_) => grid,
            Finish::LastBlock(_) => grid.div_ceil(block.max(1)) + 10,
            Finish::HostAdds(_) | Finish::HostAddsInPlace(_) | Finish::HostAddsClocked(..) | Finish::Nested(_) => {
                64 - needs.host_adds.saturating_sub(1).leading_zeros() as u64
            }
        }
    }

    /// Does it leave the whole answer on the device (no host-side finish)?
    pub fn on_device(&self) -> bool {
        self.needs(1, 32).host_adds == 0
    }
}

/// Device addresses of the buffers of one launch (null where the finish needs none).
#[derive(Clone, Copy, Debug)]
pub struct Pointers<T = i32> {
    /// The first input element.
    pub input: *const T,
    /// The first element of the scratch copy, for in-place kernels.
    pub scratch: *mut T,
    /// Per-block (or per-thread) partials.
    pub partials: *mut T,
    /// The last-block ticket.
    pub ticket: *mut u32,
    /// The result word(s).
    pub result: *mut T,
    /// Two `clock64()` stamps per block.
    pub clocks: *mut u64,
}

/// What a variant runs on one element type `T` (one operator): the kernel, inside its
/// finish, and the figures that follow the type (a 64-bit type reads 8 elements per trip of
/// 128-bit loads, not 16, and takes twice the shared slots).
#[derive(Clone, Copy, Debug)]
pub struct Row<T: 'static = i32> {
    /// The kernel, and who turns what it writes into the answer.
    pub finish: Finish<T>,
    /// Elements a thread consumes before the block reduction (or per loop trip).
    pub items_per_thread: u32,
    /// Shared memory.
    pub shared: SharedMem,
}

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
    /// What the finish needs at this grid.
    pub needs: Needs,
}

impl Grid {
    /// `(grid, block)` for `n` elements. `resident` answers how many blocks of this kernel one
    /// SM holds (asked only by the grids that depend on it); `sms` is the multiprocessors.
    pub fn size(
        self,
        n: usize,
        block: u32,
        items: u32,
        sms: u32,
        resident: impl FnOnce() -> Result<u32>,
    ) -> Result<(u64, u32)> {
        let per_items = (n as u64).div_ceil(block as u64 * items.max(1) as u64);
        let whole_gpu = |r: u32| r.max(1) as u64 * sms.max(1) as u64;
        Ok(match self {
            Grid::PerItems => (per_items, block),
            Grid::Resident => {
                let most = (MAX_GRID_THREADS as u64 / block.max(1) as u64).max(1);
                (per_items.min(whole_gpu(resident()?)).min(most), block)
            }
            Grid::PerMultiprocessor => (whole_gpu(resident()?), block),
            Grid::OneBlock => (1, block),
            Grid::OneThread => (1, 1),
        })
    }

    /// Does the block size asked for matter (and so must follow the variant's rule)?
    pub fn uses_block(self) -> bool {
        match self {
            Grid::PerItems | Grid::Resident | Grid::PerMultiprocessor | Grid::OneBlock => true,
            Grid::OneThread => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn grid_axis() {
        let size = |g: Grid, n, block, items, sms| g.size(n, block, items, sms, || Ok(4)).unwrap();
        assert_eq!(size(Grid::PerItems, 1025, 512, 1, 2), (3, 512));
        assert_eq!(size(Grid::PerItems, 1 << 20, 256, 8, 2), (512, 256));
        assert_eq!(size(Grid::Resident, 1 << 20, 256, 8, 2), (8, 256));
        assert_eq!(size(Grid::Resident, 100, 256, 8, 2), (1, 256));
        assert_eq!(size(Grid::PerMultiprocessor, 100, 256, 1, 132), (528, 256));
        assert_eq!(size(Grid::OneBlock, 1 << 20, 256, 1, 132), (1, 256));
        assert_eq!(size(Grid::OneThread, 1 << 20, 256, 1, 132), (1, 1));
        // A resident grid stays within the 32-bit indices of the grid-stride loads, whatever
        // blocks per SM is asked for: 1000 SMs × 4096 blocks of 1024 would be 2^32 threads.
        let huge = Grid::Resident.size(u32::MAX as usize, 1024, 4, 1000, || Ok(4096)).unwrap();
        assert_eq!(huge, ((MAX_GRID_THREADS / 1024) as u64, 1024));
        // PerItems never asks the occupancy calculator.
        assert!(Grid::PerItems.size(10, 32, 1, 1, || Err(Error::Invalid("asked".into()))).is_ok());
    }

    #[test]
    fn finish_axis() {
        let atomic = find("atomic_accumulate").unwrap().finish;
        assert!(atomic.on_device());
        assert_eq!(atomic.needs(100, 256).result_words, 2);
        let last = find("single_pass").unwrap().finish;
        assert!(last.on_device() && last.needs(100, 256).ticket);
        assert_eq!(last.needs(100, 256).partials, 100);
        let per_thread = find("squares_chunked").unwrap().finish;
        assert_eq!(per_thread.needs(1, 256).host_adds, 256);
        assert!(!find("warp_shuffle").unwrap().finish.on_device());
    }
}
