//! How a scan row runs on one input: its preconditions ([`check`]), its launches (built into
//! the buffers of a scan workspace) and its [`ScanGeometry`].

use super::kind::Kind;
use super::registry::{
    BitBuildArgs, BitQueryArgs, BlellochBlockArgs, BlellochReduceArgs, LookbackArgs, LookbackValuesArgs, ScanInstance,
    ScanPlan, ScanVariant,
};
use crate::backend::{Backend, Kernel, LaunchConfig};
use crate::error::{Error, Result};
use crate::reduce::MAX_GRID;

/// A single-pass variant's launch on `n` elements: the kernel, its launch configuration, and
/// the status words it needs (one per tile; for the warp-specialized scan two for a 64-bit type,
/// `spacing` for a 32-bit one; the persistent scans' ticket counter after them).
pub(crate) fn single_pass_launch<T>(
    backend: &Backend,
    inst: &ScanInstance<T>,
    n: usize,
) -> Result<(Kernel<LookbackArgs<T>>, LaunchConfig, usize)> {
    let tiles = n.div_ceil(inst.plan.tile() as usize);
    match inst.plan {
        ScanPlan::DecoupledLookback { kernel, threads, .. } => Ok((kernel, config(tiles, threads), tiles)),
        ScanPlan::PersistentLookback { kernel, .. } => Ok((kernel, persistent_config(backend, inst, n)?, tiles + 1)),
        ScanPlan::WarpSpecialized { kernel, spacing, .. } => {
            let words = tiles * kernels::scan::warpspec_status_words(std::mem::size_of::<T>(), spacing as usize) + 1;
            Ok((kernel, warpspec_config(backend, inst, n)?, words))
        }
        ScanPlan::Fenwick { .. } | ScanPlan::ReduceThenScan { .. } | ScanPlan::DecoupledLookbackValues { .. } => {
            Err(Error::Invalid(format!("scan `{}` is not a single-pass scan of the packed status", inst.variant.name)))
        }
    }
}

/// Launch geometry of a scan, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanGeometry {
    /// Kernel launches per run.
    pub launches: usize,
    /// Blocks of the first (largest) launch.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Elements per block of the main kernel.
    pub tile: u32,
}

/// Checks every precondition of scanning `n` elements with `variant`, `kind` on a device of
/// compute capability `cc`, with buffers of `input_len` and `output_len` elements.
pub fn check(
    variant: &ScanVariant,
    kind: Kind,
    n: usize,
    input_len: usize,
    output_len: usize,
    cc: (u32, u32),
) -> Result<()> {
    let shape = Shape { name: variant.name, kinds: variant.kinds, min_cc: variant.min_cc, tile: variant.tile() };
    check_shape(&shape, kind, n, (input_len, output_len), cc)
}

/// [`check`] for any row of the scan registry.
pub fn check_of<T>(
    inst: &ScanInstance<T>,
    kind: Kind,
    n: usize,
    (input_len, output_len): (usize, usize),
    cc: (u32, u32),
) -> Result<()> {
    let v = inst.variant;
    let shape = Shape { name: v.name, kinds: v.kinds, min_cc: v.min_cc, tile: inst.plan.tile() };
    check_shape(&shape, kind, n, (input_len, output_len), cc)
}

/// What [`check_shape`] needs to know of a scan kernel: its name, kinds, oldest GPU and tile.
#[derive(Clone, Copy)]
struct Shape {
    name: &'static str,
    kinds: &'static [Kind],
    min_cc: (u32, u32),
    tile: u32,
}

/// [`check`] for any scan kernel: `(input_len, output_len)` are the buffers' lengths in
/// elements.
fn check_shape(
    variant: &Shape,
    kind: Kind,
    n: usize,
    (input_len, output_len): (usize, usize),
    cc: (u32, u32),
) -> Result<()> {
    let name = variant.name;
    if n == 0 {
        return Err(Error::Invalid(format!("scan `{name}`: n = 0; a scan needs n ≥ 1 elements")));
    }
    if n > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "scan `{name}`: n = {n} is more than the kernels' 32-bit length parameter allows (n ≤ {})",
            u32::MAX
        )));
    }
    if input_len < n {
        return Err(Error::Invalid(format!("scan `{name}`: the input holds {input_len} elements, fewer than n = {n}")));
    }
    if output_len < n {
        return Err(Error::Invalid(format!(
            "scan `{name}`: the output holds {output_len} elements, fewer than n = {n}; it must hold at least n"
        )));
    }
    if !variant.kinds.contains(&kind) {
        let kinds: Vec<_> = variant.kinds.iter().map(|k| k.name()).collect();
        return Err(Error::Unsupported(format!("scan `{name}` has no {kind} scan; it computes: {}", kinds.join(", "))));
    }
    if cc < variant.min_cc {
        return Err(Error::Unsupported(format!(
            "scan `{name}` needs compute capability {}.{} or newer; this device has {}.{}",
            variant.min_cc.0, variant.min_cc.1, cc.0, cc.1
        )));
    }
    let grid = (n as u64).div_ceil(variant.tile as u64);
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "scan `{name}`: n = {n} needs {grid} blocks; a grid holds at most {MAX_GRID}"
        )));
    }
    Ok(())
}

/// One kernel launch of a plan, with its arguments (device pointers into the input, the output
/// and buffers a [`ScanWorkspace`](super::ScanWorkspace) holds).
#[derive(Clone, Copy)]
pub(crate) enum Launch<T: 'static> {
    BitBuild(Kernel<BitBuildArgs<T>>, LaunchConfig, BitBuildArgs<T>),
    BitQuery(Kernel<BitQueryArgs<T>>, LaunchConfig, BitQueryArgs<T>),
    BlellochBlock(Kernel<BlellochBlockArgs<T>>, LaunchConfig, BlellochBlockArgs<T>),
    BlellochReduce(Kernel<BlellochReduceArgs<T>>, LaunchConfig, BlellochReduceArgs<T>),
    /// The look-back scan: its epoch argument is filled in at each launch.
    Lookback(Kernel<LookbackArgs<T>>, LaunchConfig, LookbackArgs<T>),
    /// The look-back scan with value slots: its epoch argument is filled in at each launch.
    LookbackValues(Kernel<LookbackValuesArgs<T>>, LaunchConfig, LookbackValuesArgs<T>),
}

impl<T: Copy> Launch<T> {
    /// Enqueues this launch; a look-back launch gets `epoch` as its epoch argument.
    ///
    /// # Safety
    /// As for [`Backend::launch`]: the arguments are valid for the kernel.
    pub(crate) unsafe fn enqueue(self, backend: &Backend, epoch: u32) -> Result<()> {
        match self {
            // SAFETY: forwarded from the caller.
            Launch::BitBuild(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BitQuery(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BlellochBlock(k, c, a) => unsafe { backend.launch(&k, c, a) },
            // SAFETY: forwarded from the caller.
            Launch::BlellochReduce(k, c, a) => unsafe { backend.launch(&k, c, a) },
            Launch::Lookback(k, c, mut a) => {
                a.4 = epoch;
                // SAFETY: forwarded from the caller.
                unsafe { backend.launch(&k, c, a) }
            }
            Launch::LookbackValues(k, c, mut a) => {
                a.5 = epoch;
                // SAFETY: forwarded from the caller.
                unsafe { backend.launch(&k, c, a) }
            }
        }
    }

    pub(crate) fn config(&self) -> LaunchConfig {
        match self {
            Launch::BitBuild(_, c, _)
            | Launch::BitQuery(_, c, _)
            | Launch::BlellochBlock(_, c, _)
            | Launch::BlellochReduce(_, c, _)
            | Launch::Lookback(_, c, _)
            | Launch::LookbackValues(_, c, _) => *c,
        }
    }
}

/// The launch of a [`ScanPlan::PersistentLookback`] variant on `n` elements: its dynamic shared
/// memory, its block, and as many blocks as fit on the device at once (at most one per
/// tile): persistent blocks that draw their tiles by ticket.
fn persistent_config<T>(backend: &Backend, inst: &ScanInstance<T>, n: usize) -> Result<LaunchConfig> {
    let ScanPlan::PersistentLookback { kernel, threads, items, stages } = inst.plan else {
        return Err(Error::Invalid(format!("scan `{}` is not a persistent scan", inst.variant.name)));
    };
    let shared = kernels::scan::lookback_persistent_shared_bytes(threads, items, stages);
    backend.allow_dynamic_shared(kernel.entry(), shared as usize)?;
    let per_sm = backend.occupancy(kernel.entry(), threads, shared as usize)?.max(1);
    let resident = per_sm as usize * backend.info().multiprocessors.max(1) as usize;
    let grid = n.div_ceil(inst.plan.tile() as usize).min(resident);
    Ok(LaunchConfig { grid: grid as u32, block: threads, shared_bytes: shared })
}

/// The launch of a [`ScanPlan::WarpSpecialized`] variant on `n` elements: its ring in dynamic
/// shared memory (`stages` tiles of `T`), its block (compute warps, the producer and the
/// look-ahead warps), and as many blocks as fit on the device at once (at most one per tile):
/// persistent blocks that draw their tiles by ticket.
fn warpspec_config<T>(backend: &Backend, inst: &ScanInstance<T>, n: usize) -> Result<LaunchConfig> {
    let ScanPlan::WarpSpecialized { kernel, warps, items, stages, lookaheads, .. } = inst.plan else {
        return Err(Error::Invalid(format!("scan `{}` is not a warp-specialized scan", inst.variant.name)));
    };
    // `items` elements of T are items × size / 4 words.
    let shared = kernels::scan::warpspec_shared_bytes(warps, items * std::mem::size_of::<T>() as u32 / 4, stages);
    let threads = kernels::scan::warpspec_threads_with(warps, lookaheads);
    backend.allow_dynamic_shared(kernel.entry(), shared as usize)?;
    let per_sm = backend.occupancy(kernel.entry(), threads, shared as usize)?.max(1);
    let resident = per_sm as usize * backend.info().multiprocessors.max(1) as usize;
    let grid = n.div_ceil(inst.plan.tile() as usize).min(resident);
    Ok(LaunchConfig { grid: grid as u32, block: threads, shared_bytes: shared })
}

pub(crate) fn config(grid: usize, block: u32) -> LaunchConfig {
    LaunchConfig { grid: grid as u32, block, shared_bytes: 0 }
}
