//! The one definition of a launch plan. A reduction variant is a kernel plus two independent
//! axes, each matched here and nowhere else, exhaustively:
//!
//! * [`Grid`] — how many blocks a launch gets: one per `block × items` elements, as many as
//!   the GPU holds at once, a fixed count per multiprocessor, one block, or one thread;
//! * [`Finish`] — what the kernel leaves behind and who turns it into the one answer: the
//!   host adds per-block (or per-thread) partials, the last block adds them on the device, or
//!   every block adds its partial into the result with an atomic.
//!
//! The fields every plan shares (items per thread, blocks per SM, shared memory, allowed
//! blocks) live in [`Variant`]. [`geometry`] turns a variant, `n`
//! and a block size into a [`Geometry`], once; [`super::Reduction`] allocates what the
//! finish needs and launches.

use crate::backend::{Backend, Kernel, LaunchConfig};
use crate::error::{Error, Result};

use super::registry::Variant;

/// Arguments of a kernel that reads its input: `(g_idata, g_odata, n)`; block `b` writes its
/// partial result to `g_odata[b]`.
pub type ReadArgs = (*const i32, *mut i32, u32);
/// Arguments of a kernel that works in place on a scratch copy: `(g_idata, g_odata, n)`.
pub type InPlaceArgs = (*mut i32, *mut i32, u32);
/// Arguments of a last-block kernel: `(g_idata, g_partials, g_ticket, g_out, n)`. Blocks
/// write partials to `g_partials[blockIdx.x]`; the last block to finish (it draws the last
/// ticket from `*g_ticket`, which it then resets to 0) adds them and writes `*g_out`.
pub type SinglePassArgs = (*const i32, *mut i32, *mut u32, *mut i32, u32);
/// Arguments of an accumulating kernel: `(g_idata, g_acc, n, epoch)`. Every block adds its
/// partial into `g_acc[epoch % 2]` (which must be 0 at the start) and block 0 clears the other
/// word for the next launch; the host passes consecutive epochs.
pub type AccumulateArgs = (*const i32, *mut i32, u32, u32);
/// Arguments of `atomic_accumulate_to_host`: `(g_idata, g_tally, n, h_value, h_flag, seq)`.
/// Every block adds its sum and a count of one into the tally word (0 at the start); the last
/// block resets it, writes the sum into `h_value` and then `seq` into `h_flag`
/// ([`crate::backend::AnswerSlot`]).
pub type ToHostArgs = (*const i32, *mut u64, u32, *mut u64, *mut u32, u32);
/// CUDA's default limit of pending device-side launches (`cudaLimitDevRuntimePendingLaunchCount`).
pub const DEFAULT_PENDING_LAUNCHES: usize = 2048;

/// The pending device-side launches a per-block nested grid of `grid` blocks of `block` needs
/// at once. Each block's chain makes `log2(block) - 1` launches (down to a 2-thread child).
/// - Children that start after their parent grid (the tail-launch stream): one pending child
///   per block, and the chain's own while it runs: `grid + 24`.
/// - Children that start at once (the fire-and-forget stream): every chain may have all its
///   launches pending together. On the H100, `recursive_reduce_nosync` with `grid + 24` failed
///   every run (the launch refused, so the kernel trapped).
///
/// Not more than that: a larger pool makes every device-side launch slower. On the H100,
/// `recursive_reduce` at 2^20 + 7 in blocks of 128 took 0.65 s with `grid + 24` and 1.07 s with
/// the fire-and-forget bound (`docs/nested.md`). At least CUDA's default.
pub fn per_block_pending_launches(grid: u32, block: u32, children: Children) -> usize {
    (grid as usize * pending_per_chain(block, children) + kernels::device::launch::MAX_DEPTH as usize)
        .max(DEFAULT_PENDING_LAUNCHES)
}

/// The launches of one block's chain that may be pending at once: its one tail-launched child,
/// or every launch of a fire-and-forget chain (`log2(block) - 1`, down to a 2-thread child).
fn pending_per_chain(block: u32, children: Children) -> usize {
    match children {
        Children::AfterTheGrid => 1,
        Children::AtOnce => block.max(2).ilog2().saturating_sub(1) as usize,
    }
}

/// Blocks per host launch of a per-block nested grid of `grid` blocks of `block`, when the
/// device grants `room` pending device-side launches: the whole grid where its launches fit
/// ([`per_block_pending_launches`]), else the grid cut into as few launches of equal size as fit
/// (the last may be shorter). A host launch completes only once every child it made has, so
/// each launch starts with the pool empty. `None` when not even one block's chain fits.
///
/// On the H100 the driver grants at most 599,186: `recursive_reduce_nosync` at 2^24 in blocks of
/// 128 (131,072 chains of 6 launches) runs as two launches of 65,536 blocks.
pub fn blocks_per_nested_launch(grid: u32, block: u32, children: Children, room: usize) -> Option<u32> {
    if per_block_pending_launches(grid, block, children) <= room {
        return Some(grid);
    }
    let most =
        room.checked_sub(kernels::device::launch::MAX_DEPTH as usize)? / pending_per_chain(block, children).max(1);
    let most = u32::try_from(most).unwrap_or(u32::MAX);
    if most == 0 {
        return None;
    }
    let launches = grid.div_ceil(most);
    Some(grid.div_ceil(launches))
}

/// When a per-block nested kernel's children start, which decides how many launches may be
/// pending at once ([`per_block_pending_launches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Children {
    /// After the launching grid has completed (`DeviceStream::Tail`).
    AfterTheGrid,
    /// At once, unordered with the launching grid (`DeviceStream::FireAndForget`).
    AtOnce,
}

/// Arguments of a nested kernel with one grid per level (`recursive_reduce2`): `(g_idata,
/// g_odata, n, stride, dim)`. Each block folds its `dim` elements in place with `stride =
/// blockDim` threads, block 0 launches the next level; the last level writes one partial per
/// block.
pub type LevelArgs = (*mut i32, *mut i32, u32, u32, u32);
/// Arguments of a clocked kernel (the sum-of-squares steps): `(g_idata, g_result, g_clocks,
/// n)`. It writes one result per thread or per block (see [`Per`]) and, per block,
/// `clock64()` at its start and end to `g_clocks[2b]` and `g_clocks[2b + 1]`.
pub type ClockedArgs = (*const i32, *mut i32, *mut u64, u32);

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
#[derive(Clone, Copy, Debug)]
pub enum Finish {
    /// Reads its input, writes one partial per block; the host adds the partials (untimed).
    HostAdds(KernelSel<ReadArgs>),
    /// Overwrites its input (the host hands it a scratch copy, made before timing), writes one
    /// partial per block; the host adds the partials.
    HostAddsInPlace(KernelSel<InPlaceArgs>),
    /// Writes one partial per block or thread and two `clock64()` stamps per block; the host
    /// adds the partials.
    HostAddsClocked(Kernel<ClockedArgs>, Per),
    /// One launch: the last block to finish adds the per-block partials on the device.
    LastBlock(Kernel<SinglePassArgs>),
    /// One launch: each block adds its partial into the result word with an atomic.
    AtomicAccumulate(Kernel<AccumulateArgs>),
    /// Launches from the device (dynamic parallelism), in place on a scratch copy, one partial
    /// per block that the host adds.
    Nested(Nesting),
}

/// How a nested kernel recurses ([`Finish::Nested`]).
#[derive(Clone, Copy, Debug)]
pub enum Nesting {
    /// Each block launches its own chain of one-block grids: `(g_idata, g_odata, n)`, launched
    /// with the block asked for; the children start as the second field says.
    PerBlock(Kernel<InPlaceArgs>, Children),
    /// One grid per level, launched by block 0: `(g_idata, g_odata, n, block / 2, block)`,
    /// launched with half the block asked for (each block still owns `block` elements).
    PerLevel(Kernel<LevelArgs>),
}

impl Nesting {
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

impl Finish {
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
    /// `cfg` is the geometry [`geometry`] returned for this variant at `n` and `cfg.block`;
    /// `p.input` (or `p.scratch`, for in-place kernels) holds `n` elements and every other
    /// pointer the sizes [`Finish::needs`] gave, all buffers of `backend`; for the atomic
    /// finish, `p.result[epoch % 2]` is 0 (the previous launch of this workspace had epoch
    /// `epoch - 1`, or the words are fresh and `epoch` < 2).
    pub unsafe fn launch(&self, backend: &Backend, cfg: LaunchConfig, p: Pointers, n: u32, epoch: u32) -> Result<()> {
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

    /// Does it leave the whole answer on the device (no host-side finish)?
    pub fn on_device(&self) -> bool {
        self.needs(1, 32).host_adds == 0
    }
}

/// Device addresses of the buffers of one launch (null where the finish needs none).
#[derive(Clone, Copy, Debug)]
pub struct Pointers {
    /// The first input element.
    pub input: *const i32,
    /// The first element of the scratch copy, for in-place kernels.
    pub scratch: *mut i32,
    /// Per-block (or per-thread) partials.
    pub partials: *mut i32,
    /// The last-block ticket.
    pub ticket: *mut u32,
    /// The result word(s).
    pub result: *mut i32,
    /// Two `clock64()` stamps per block.
    pub clocks: *mut u64,
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

/// Checks the preconditions that do not depend on the device's size: `n`, the block rule,
/// the compute capability, and that the variant has a kernel for the block.
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
    let rule = v.blocks;
    if v.grid.uses_block() && !rule.allows(block) {
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
    if v.finish.symbol_for(block).is_none() {
        return Err(Error::Invalid(format!("variant `{}` has no kernel for block {block}", v.name)));
    }
    Ok(())
}

/// Resident blocks per SM of `v` at `block` threads: its fixed `blocks_per_sm`, else the
/// occupancy calculator's answer (asked once per [`super::Reduction`]).
pub fn resident_per_sm(backend: &Backend, v: &Variant, block: u32) -> Result<u32> {
    match v.blocks_per_sm {
        Some(k) => Ok(k),
        None => {
            let symbol = v.finish.symbol_for(block).unwrap_or(v.name);
            Ok(backend.occupancy(symbol, block, v.shared.dynamic_bytes(block) as usize)?.max(1))
        }
    }
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

/// Checks every precondition of running `v` on `n` elements with `block` threads per block
/// on `backend`, and returns the launch geometry. `resident` is [`resident_per_sm`]'s answer
/// when the caller has it cached (`None`: asked here, if the grid needs it).
pub fn geometry(backend: &Backend, v: &Variant, n: usize, block: u32, resident: Option<u32>) -> Result<Geometry> {
    let info = backend.info();
    check(v, n, block, info.compute_capability)?;
    if matches!(v.finish, Finish::Nested(_)) {
        // On a GPU: their PTX module linked with the device runtime, or one line saying why not.
        backend.nested_ready().map_err(|e| match e {
            Error::Unsupported(why) => {
                Error::Unsupported(format!("variant `{}` launches kernels from the device: {why}", v.name))
            }
            e => e,
        })?;
    }
    let ask = || resident.map_or_else(|| resident_per_sm(backend, v, block), Ok);
    let (grid, block) = v.grid.size(n, block, v.items_per_thread, info.multiprocessors, ask)?;
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} needs {grid} blocks of {block}; a grid holds at most {MAX_GRID}",
            v.name
        )));
    }
    Ok(Geometry {
        grid: grid as u32,
        block,
        dynamic_shared: v.shared.dynamic_bytes(block),
        shared_bytes: v.shared.bytes(block),
        needs: v.finish.needs(grid, block),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    #[test]
    fn a_per_block_nested_grid_has_room_for_the_launches_its_children_keep_pending() {
        use Children::{AfterTheGrid, AtOnce};
        // Fire and forget, 2049 blocks of 512: 8 launches per chain (256 … 2 threads) at once,
        // plus the nesting depth.
        assert_eq!(per_block_pending_launches(2049, 512, AtOnce), 2049 * 8 + 24);
        assert_eq!(per_block_pending_launches(524_288, 32, AtOnce), 524_288 * 4 + 24);
        // Tail launches: one pending child per block.
        assert_eq!(per_block_pending_launches(32_769, 32, AfterTheGrid), 32_769 + 24);
        // Never below CUDA's default, even for a grid that needs less.
        assert_eq!(per_block_pending_launches(1, 32, AtOnce), DEFAULT_PENDING_LAUNCHES);
        assert_eq!(per_block_pending_launches(2049, 512, AfterTheGrid), 2049 + 24);
        assert_eq!(per_block_pending_launches(1000, 512, AfterTheGrid), DEFAULT_PENDING_LAUNCHES);
        assert_eq!(per_block_pending_launches(1, 2, AtOnce), DEFAULT_PENDING_LAUNCHES);
    }

    #[test]
    fn a_nested_grid_past_the_room_the_device_grants_is_cut_into_launches_that_fit() {
        use Children::{AfterTheGrid, AtOnce};
        const H100: usize = crate::emu::nested::MAX_PENDING_LAUNCHES;
        // Fits: the whole grid in one launch.
        assert_eq!(blocks_per_nested_launch(8193, 128, AtOnce, H100), Some(8193));
        assert_eq!(blocks_per_nested_launch(131_072, 128, AfterTheGrid, H100), Some(131_072));
        // recursive_reduce_nosync at 2^24 in blocks of 128: 786,456 needed, at most 99,860
        // chains of 6 fit, so two launches of 65,536.
        assert_eq!(blocks_per_nested_launch(131_072, 128, AtOnce, H100), Some(65_536));
        // At 2^24 + 7 the last launch is one block shorter.
        assert_eq!(blocks_per_nested_launch(131_073, 128, AtOnce, H100), Some(65_537));
        // Blocks of 32 at 2^24: 524,288 chains of 4, 149,790 fit: four launches of 131,072.
        assert_eq!(blocks_per_nested_launch(524_288, 32, AtOnce, H100), Some(131_072));
        // Not even one chain (4 launches and the depth) fits in 27.
        assert_eq!(blocks_per_nested_launch(10, 32, AtOnce, 27), None);
        assert_eq!(blocks_per_nested_launch(10, 32, AtOnce, 28), Some(1));
    }

    #[test]
    fn a_nested_reduction_runs_in_parts_where_the_device_grants_too_little_room() {
        use crate::emu::Emulator;
        // A device granting 3,000: 1,000 chains of 4 fire-and-forget launches need 4,024, so the
        // plan launches two parts of 500 blocks (at most 744 fit), each with its own segments.
        let b = Backend::with_emulator(Emulator::new().granting_at_most(3000));
        let n = 1000 * 32 - 7;
        let data: Vec<i32> = (0..n).map(|i| ((i as i64 * 7919 % 2003) - 1001) as i32).collect();
        let want = data.iter().fold(0i32, |a, &x| a.wrapping_add(x));
        let input = b.upload(&data).unwrap();
        for name in ["recursive_reduce_nosync", "recursive_reduce"] {
            let mut r = crate::reduce::Reduction::new(&b, find(name).unwrap(), &input, n, 32).unwrap();
            r.reset().unwrap();
            r.launch().unwrap_or_else(|e| panic!("{name} n={n} block=32: {e}"));
            assert_eq!(r.result().unwrap(), want, "{name} n={n} block=32: expected {want}");
        }
        // The same grid as one launch does not fit: the kernel's own launch faults.
        let mut scratch = b.upload(&data).unwrap();
        let mut out = b.alloc::<i32>(1000).unwrap();
        let (p, o) = (scratch.as_mut_ptr(), out.as_mut_ptr());
        let fire = crate::kernel_ref!(kernels::reduce::recursive_reduce_nosync(p, o, n));
        let cfg = LaunchConfig { grid: 1000, block: 32, shared_bytes: 0 };
        // SAFETY: the buffers hold n and 1000 elements (the kernel's documented launch).
        let e = unsafe { b.launch(&fire, cfg, (p, o, n as u32)) }.unwrap_err().to_string();
        assert!(e.contains("3000 device-side launches are already pending"), "{e}");
    }

    #[test]
    fn geometry_rejects_bad_requests_with_reasons() {
        let b = Backend::emulator();
        let v = find("interleaved").unwrap();
        let e = geometry(&b, v, 0, 512, None).unwrap_err().to_string();
        assert!(e.contains("n ≥ 1"), "{e}");
        let e = geometry(&b, v, 100, 48, None).unwrap_err().to_string();
        assert!(e.contains("block 48") && e.contains("power of two in 32..=1024"), "{e}");
        let e = geometry(&b, v, 100, 2048, None).unwrap_err().to_string();
        assert!(e.contains("block 2048"), "{e}");
        let g = geometry(&b, v, 1025, 512, None).unwrap();
        assert_eq!((g.grid, g.block, g.needs.host_adds), (3, 512, 3));
        assert!(g.needs.scratch);
        let e = check(v, 10, 64, (6, 1)).unwrap_err().to_string();
        assert!(e.contains("compute capability 7.0"), "{e}");
    }

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
