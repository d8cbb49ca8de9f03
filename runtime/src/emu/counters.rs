//! The emulator's profiler counters: what Nsight Compute counts of a kernel's memory accesses,
//! computed from the addresses each warp's lanes touch (`docs/emulator.md`, "Counters").
//!
//! **How lanes become one request.** A GPU issues a memory instruction for a warp at once; the
//! emulator runs the warp's lanes one after another. It groups them back: the `k`-th execution
//! of one source site (the `file:line:column` of the device-layer call) by the lanes of one warp,
//! between two block barriers, is one request, and the lanes that made it are its active lanes.
//! That is exact when the source site is one instruction and the lanes of a warp run it the
//! same number of times up to that point (a branch that some lanes skip leaves them inactive in
//! that request, as SIMT does). It is a model where the compiler does otherwise: it may merge
//! two source accesses into one instruction, keep a value in a register instead of loading it
//! again, or split a loop.
//!
//! Per request:
//! * **global** (loads and stores apart): the 32-byte sectors its lanes' bytes fall in, and the
//!   bytes they asked for; efficiency = bytes / (32 × sectors), ncu's
//!   `smsp__sass_average_data_bytes_per_sector_mem_global_op_{ld,st}.pct` summed over requests;
//! * **shared**: wavefronts, the passes the 32 banks of 4 bytes need. The lanes are served in
//!   phases of 128 bytes (32 lanes of a 4-byte access, 16 of an 8-byte one, 8 of a 16-byte one);
//!   a phase takes as many wavefronts as the most distinct 4-byte words any one bank holds among
//!   its lanes' bytes (lanes reading the same word share it: a broadcast). Bank conflicts =
//!   wavefronts − phases, the wavefronts a conflict-free access would not need.
//! * **active lanes**: summed over every global and shared request (the divergence measure).
//!
//! Atomics (`atom`, `red`) are counted apart, not as loads or stores; `ld.acquire`/`ld.relaxed`
//! and `st.release`/`st.relaxed` count as loads and stores. The asynchronous copies count where
//! ncu counts them (the device layer tells their path, [`Path`]): a `cp.async` (SASS `LDGSTS`)
//! as an LDGSTS request of its warp with its sectors and bytes, apart from the global loads
//! (ncu's L1 request and sector counts add the two, its load efficiency does not: the host's
//! `metrics::emulated_launch` maps them so), and its shared side in no shared counter; a bulk copy (`cp.async.bulk`, the tensor memory
//! accelerator) as no request at all, only the bytes of the 32-byte sectors its global side
//! touches, loads (into shared memory) and stores (out of it) apart.

use std::collections::HashMap;

use device::emu::{Access, Path, Site, WarpOp};

/// Bytes in a sector of global memory.
pub const SECTOR: usize = 32;
/// Banks of shared memory, 4 bytes wide.
pub const BANKS: usize = 32;
/// The alignment of a device-side launch's parameter buffer: CUDA's Programming Guide
/// (dynamic parallelism, "Parameter Buffer Layout") guarantees 64 bytes.
pub const PARAMETER_BUFFER_ALIGN: usize = 64;

/// What one launch (or the part of it that was counted) did, summed over its blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Global load requests, the sectors they touched, and the bytes they asked for.
    pub gld_requests: u64,
    /// See [`gld_requests`](Self::gld_requests).
    pub gld_sectors: u64,
    /// See [`gld_requests`](Self::gld_requests).
    pub gld_bytes: u64,
    /// Global store requests, sectors and bytes.
    pub gst_requests: u64,
    /// See [`gst_requests`](Self::gst_requests).
    pub gst_sectors: u64,
    /// See [`gst_requests`](Self::gst_requests).
    pub gst_bytes: u64,
    /// Shared load requests, their wavefronts, and the wavefronts a conflict-free access needs.
    pub shared_ld_requests: u64,
    /// See [`shared_ld_requests`](Self::shared_ld_requests).
    pub shared_ld_wavefronts: u64,
    /// See [`shared_ld_requests`](Self::shared_ld_requests).
    pub shared_ld_ideal: u64,
    /// Shared store requests, wavefronts and ideal wavefronts.
    pub shared_st_requests: u64,
    /// See [`shared_st_requests`](Self::shared_st_requests).
    pub shared_st_wavefronts: u64,
    /// See [`shared_st_requests`](Self::shared_st_requests).
    pub shared_st_ideal: u64,
    /// `cp.async` requests (SASS `LDGSTS`, one per warp and execution, as a load's), the
    /// sectors of their global side, and the bytes they asked for.
    pub ldgsts_requests: u64,
    /// See [`ldgsts_requests`](Self::ldgsts_requests).
    pub ldgsts_sectors: u64,
    /// See [`ldgsts_requests`](Self::ldgsts_requests).
    pub ldgsts_bytes: u64,
    /// Bulk copies into shared memory (`cp.async.bulk`, TMA loads): the bytes of the 32-byte
    /// sectors their global side touches.
    pub bulk_ld_bytes: u64,
    /// Bulk copies out of shared memory (TMA stores): the bytes of the global sectors written.
    pub bulk_st_bytes: u64,
    /// Active lanes summed over every global, shared and LDGSTS request.
    pub request_lanes: u64,
    /// Block barriers passed, counted once per block.
    pub barriers: u64,
    /// `__syncwarp`s, counted once per warp.
    pub warp_syncs: u64,
    /// Shuffles, votes and `redux`, counted once per warp.
    pub warp_collectives: u64,
    /// Global atomics that return the old value (PTX `atom`, SASS `ATOMG`): warp requests and the
    /// sectors their lanes' words fall in (ncu's `l1tex__t_{requests,sectors}_…_global_op_atom`).
    pub gatom_requests: u64,
    /// See [`gatom_requests`](Self::gatom_requests).
    pub gatom_sectors: u64,
    /// Global atomics whose old value is not returned (PTX `red`, SASS `REDG`): warp requests and
    /// sectors (ncu's `…_global_op_red`).
    pub gred_requests: u64,
    /// See [`gred_requests`](Self::gred_requests).
    pub gred_sectors: u64,
    /// Shared atomics (SASS `ATOMS`): warp instructions, their wavefronts, and the wavefronts a
    /// conflict-free one needs (ncu's `…_op_shared_atom`).
    pub shared_atom_requests: u64,
    /// See [`shared_atom_requests`](Self::shared_atom_requests).
    pub shared_atom_wavefronts: u64,
    /// See [`shared_atom_requests`](Self::shared_atom_requests).
    pub shared_atom_ideal: u64,
    /// Atomic read-modify-writes (`atom`, `red`), global and shared, counted once per lane.
    pub atomics: u64,
    /// The global ones among [`atomics`](Self::atomics), counted once per lane (CUDA C's
    /// `atomicAdd` on a global address, by each thread that calls it).
    pub global_atomics: u64,
    /// Blocks counted.
    pub blocks: u64,
    /// Warps counted (the warps of the counted blocks).
    pub warps: u64,
}

impl Counters {
    /// Adds `other` to these.
    pub fn add(&mut self, o: &Counters) {
        for (a, b) in self.fields_mut().into_iter().zip(o.fields()) {
            *a += b;
        }
    }

    /// Subtracts `o` (an earlier state of these counters).
    pub fn subtract(&mut self, o: &Counters) {
        for (a, b) in self.fields_mut().into_iter().zip(o.fields()) {
            *a -= b;
        }
    }

    fn fields(&self) -> [u64; 32] {
        let c = self;
        [
            c.gld_requests,
            c.gld_sectors,
            c.gld_bytes,
            c.gst_requests,
            c.gst_sectors,
            c.gst_bytes,
            c.ldgsts_requests,
            c.ldgsts_sectors,
            c.ldgsts_bytes,
            c.bulk_ld_bytes,
            c.bulk_st_bytes,
            c.shared_ld_requests,
            c.shared_ld_wavefronts,
            c.shared_ld_ideal,
            c.shared_st_requests,
            c.shared_st_wavefronts,
            c.shared_st_ideal,
            c.request_lanes,
            c.barriers,
            c.warp_syncs,
            c.warp_collectives,
            c.gatom_requests,
            c.gatom_sectors,
            c.gred_requests,
            c.gred_sectors,
            c.shared_atom_requests,
            c.shared_atom_wavefronts,
            c.shared_atom_ideal,
            c.atomics,
            c.global_atomics,
            c.blocks,
            c.warps,
        ]
    }

    fn fields_mut(&mut self) -> [&mut u64; 32] {
        let c = self;
        [
            &mut c.gld_requests,
            &mut c.gld_sectors,
            &mut c.gld_bytes,
            &mut c.gst_requests,
            &mut c.gst_sectors,
            &mut c.gst_bytes,
            &mut c.ldgsts_requests,
            &mut c.ldgsts_sectors,
            &mut c.ldgsts_bytes,
            &mut c.bulk_ld_bytes,
            &mut c.bulk_st_bytes,
            &mut c.shared_ld_requests,
            &mut c.shared_ld_wavefronts,
            &mut c.shared_ld_ideal,
            &mut c.shared_st_requests,
            &mut c.shared_st_wavefronts,
            &mut c.shared_st_ideal,
            &mut c.request_lanes,
            &mut c.barriers,
            &mut c.warp_syncs,
            &mut c.warp_collectives,
            &mut c.gatom_requests,
            &mut c.gatom_sectors,
            &mut c.gred_requests,
            &mut c.gred_sectors,
            &mut c.shared_atom_requests,
            &mut c.shared_atom_wavefronts,
            &mut c.shared_atom_ideal,
            &mut c.atomics,
            &mut c.global_atomics,
            &mut c.blocks,
            &mut c.warps,
        ]
    }

    /// Every memory request, global, LDGSTS and shared.
    pub fn requests(&self) -> u64 {
        self.gld_requests + self.gst_requests + self.ldgsts_requests + self.shared_ld_requests + self.shared_st_requests
    }

    /// Global load efficiency, %: bytes asked for / bytes of the sectors fetched (0 without loads).
    pub fn gld_efficiency_pct(&self) -> f64 {
        efficiency_pct(self.gld_bytes, self.gld_sectors)
    }

    /// Global store efficiency, % (as [`gld_efficiency_pct`](Self::gld_efficiency_pct)).
    pub fn gst_efficiency_pct(&self) -> f64 {
        efficiency_pct(self.gst_bytes, self.gst_sectors)
    }

    /// `cp.async` (LDGSTS) efficiency, % (as [`gld_efficiency_pct`](Self::gld_efficiency_pct)).
    pub fn ldgsts_efficiency_pct(&self) -> f64 {
        efficiency_pct(self.ldgsts_bytes, self.ldgsts_sectors)
    }

    /// Shared load bank conflicts: wavefronts beyond the conflict-free number.
    pub fn shared_ld_conflicts(&self) -> u64 {
        self.shared_ld_wavefronts - self.shared_ld_ideal
    }

    /// Shared store bank conflicts.
    pub fn shared_st_conflicts(&self) -> u64 {
        self.shared_st_wavefronts - self.shared_st_ideal
    }

    /// Shared atomic bank conflicts: wavefronts beyond the conflict-free number.
    pub fn shared_atom_conflicts(&self) -> u64 {
        self.shared_atom_wavefronts - self.shared_atom_ideal
    }

    /// Active lanes per global or shared request (0 without requests).
    pub fn lanes_per_request(&self) -> f64 {
        if self.requests() == 0 { 0.0 } else { self.request_lanes as f64 / self.requests() as f64 }
    }
}

fn efficiency_pct(bytes: u64, sectors: u64) -> f64 {
    if sectors == 0 { 0.0 } else { 100.0 * bytes as f64 / (SECTOR as u64 * sectors) as f64 }
}

/// Where an access went, for grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Space {
    GlobalLoad,
    GlobalStore,
    /// The global side of a `cp.async`.
    Ldgsts,
    SharedLoad,
    SharedStore,
    /// A global `atom` (the old value returned) or `red` (`returns` false).
    GlobalAtomic {
        returns: bool,
    },
    /// A shared atomic; `compare`: two operands a lane (a compare-and-swap).
    SharedAtomic {
        compare: bool,
    },
}

/// One warp request being gathered: each active lane's address, and the access size.
#[derive(Default)]
struct Request {
    bytes: usize,
    lanes: Vec<(u32, usize)>,
}

/// A map of the counting, hashed by the emulator's [`WordHasher`](super::race::WordHasher).
type Keyed<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<super::race::WordHasher>>;

/// One block's counting: the requests of the current barrier interval, each thread's
/// executions per site in it, and the block's totals so far.
#[derive(Default)]
pub struct BlockCounting {
    /// Keyed by (warp, site, the warp's convergence epoch, k, space).
    requests: Keyed<(u32, usize, u32, u32, Space), Request>,
    /// Each thread's executions of a site in its warp's epoch, keyed (thread, site, space, epoch).
    executions: Keyed<(u32, usize, Space, u32), u32>,
    /// Each warp's convergence epoch: how many whole-warp collectives it has completed. The
    /// lanes are converged there, so the count of executions starts again from each.
    epochs: Vec<u32>,
    /// The block's totals.
    pub totals: Counters,
    /// Every access of every interval, when this block is traced ([`Trace`]).
    pub trace: Option<Trace>,
}

/// One lane's access, as a trace keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracedAccess {
    /// The thread (linear index in the block).
    pub thread: u32,
    /// The address and the bytes.
    pub addr: usize,
    /// See [`addr`](Self::addr).
    pub bytes: u32,
    /// Global memory (else shared).
    pub global: bool,
    /// A store (an atomic counts as one).
    pub write: bool,
    /// The start of the allocation (global) or shared array the access is in: the picture
    /// never draws two of them as one buffer, however close the allocator put them.
    pub region: usize,
}

/// One barrier interval of a traced block: every lane's access, and what its requests came to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracedInterval {
    /// The accesses, in the order the emulator ran them.
    pub accesses: Vec<TracedAccess>,
    /// The interval's counters (its requests, sectors, wavefronts…).
    pub counters: Counters,
}

/// What one block did, interval by interval: the stuff of `reduce trace`'s pictures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Threads in the block.
    pub threads: u32,
    /// Its barrier intervals, in order (the last ends with the block).
    pub intervals: Vec<TracedInterval>,
    current: Vec<TracedAccess>,
    /// The block's totals when the current interval began.
    since: Counters,
}

impl BlockCounting {
    /// A block of `threads` threads starts; `traced` keeps every access of it.
    pub fn start(threads: u32, traced: bool) -> Self {
        let totals = Counters { blocks: 1, warps: u64::from(threads.div_ceil(32)), ..Counters::default() };
        let trace = traced.then(|| Trace { threads, since: totals, ..Trace::default() });
        Self { totals, trace, ..Self::default() }
    }

    /// Thread `thread` makes `access` of `bytes` at `addr` at `site`, in global memory or not,
    /// in the allocation or shared array that starts at `region`, on `path`.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        thread: u32,
        (global, region): (bool, usize),
        addr: usize,
        bytes: usize,
        access: Access,
        path: Path,
        site: Site,
    ) {
        if let Some(t) = &mut self.trace {
            let write = access.writes();
            t.current.push(TracedAccess { thread, addr, bytes: bytes as u32, global, write, region });
        }
        let space = match (path, global, access) {
            // A copy's shared side, an mbarrier's word, a prefetch: in no counter of ncu's.
            (Path::AsyncCopy | Path::Bulk, false, _) | (Path::Barrier | Path::Prefetch, _, _) => return,
            (Path::Bulk, true, a) => {
                let sector_bytes = SECTOR as u64 * sectors(&[(0, addr)], bytes);
                if a.writes() {
                    self.totals.bulk_st_bytes += sector_bytes;
                } else {
                    self.totals.bulk_ld_bytes += sector_bytes;
                }
                return;
            }
            (Path::AsyncCopy, true, _) => Space::Ldgsts,
            (Path::Atomic(op), global, _) => {
                self.totals.atomics += 1;
                self.totals.global_atomics += u64::from(global);
                if global {
                    Space::GlobalAtomic { returns: op.returns }
                } else {
                    Space::SharedAtomic { compare: op.compare }
                }
            }
            (Path::Lsu, true, Access::AtomicRmw) => {
                self.totals.atomics += 1;
                self.totals.global_atomics += 1;
                Space::GlobalAtomic { returns: true }
            }
            (Path::Lsu, true, a) if a.writes() => Space::GlobalStore,
            (Path::Lsu, true, _) => Space::GlobalLoad,
            (Path::Lsu, false, a) if a.writes() => Space::SharedStore,
            (Path::Lsu, false, _) => Space::SharedLoad,
        };
        let key = site as *const _ as usize;
        let epoch = self.epochs.get((thread / 32) as usize).copied().unwrap_or(0);
        let k = self.executions.entry((thread, key, space, epoch)).or_insert(0);
        let request = self.requests.entry((thread / 32, key, epoch, *k, space)).or_default();
        *k += 1;
        request.bytes = bytes;
        request.lanes.push((thread % 32, addr));
    }

    /// A device-side launch by one thread: its stores of the child's parameters, of `sizes`
    /// bytes, into the device runtime's parameter buffer (`device::launch`: on the GPU, a store
    /// per parameter at an offset aligned to its size, by the launching thread alone). Each is a
    /// global store request of one active lane; the buffer is [`PARAMETER_BUFFER_ALIGN`]-byte
    /// aligned, so the parameter's offset gives its sectors. The device runtime's own work
    /// (`cudaGetParameterBufferV2`, `cudaLaunchDeviceV2`) is not counted: `docs/counters.md`,
    /// "The nested kernels".
    pub fn parameter_buffer(&mut self, sizes: &[usize]) {
        let mut offset = 0;
        for &size in sizes {
            offset = device::launch::param_offset(offset, size);
            let t = &mut self.totals;
            t.gst_requests += 1;
            t.gst_sectors += sectors(&[(0, offset)], size);
            t.gst_bytes += size as u64;
            t.request_lanes += 1;
            offset += size;
        }
    }

    /// A warp operation completed for the lanes of warp `warp`; `whole` when its mask held
    /// every lane of the warp, which are then converged: the k-th executions of each site are
    /// counted afresh from here (a store under a per-lane condition in a loop with a shuffle
    /// or ballot a trip is one request a trip, as the warp issues it, however many trips each
    /// lane stored in).
    pub fn warp_op(&mut self, op: &WarpOp, warp: usize, whole: bool) {
        match op {
            WarpOp::Sync => self.totals.warp_syncs += 1,
            _ => self.totals.warp_collectives += 1,
        }
        if whole {
            if self.epochs.len() <= warp {
                self.epochs.resize(warp + 1, 0);
            }
            self.epochs[warp] += 1;
        }
    }

    /// The block passed a barrier: its interval's requests are counted.
    pub fn barrier(&mut self) {
        self.totals.barriers += 1;
        self.flush();
    }

    /// Counts the interval's requests into the totals (and, when tracing, into the interval's
    /// record).
    pub fn flush(&mut self) {
        self.count_requests();
        if let Some(t) = &mut self.trace {
            let mut counters = self.totals;
            counters.subtract(&t.since);
            t.since = self.totals;
            let accesses = std::mem::take(&mut t.current);
            if !accesses.is_empty() || counters != Counters::default() {
                t.intervals.push(TracedInterval { accesses, counters });
            }
        }
    }

    fn count_requests(&mut self) {
        for ((_, _, _, _, space), r) in self.requests.drain() {
            let t = &mut self.totals;
            if let Space::GlobalAtomic { .. } | Space::SharedAtomic { .. } = space {
                count_atomic(t, space, &r);
                continue;
            }
            t.request_lanes += r.lanes.len() as u64;
            let asked = (r.lanes.len() * r.bytes) as u64;
            match space {
                Space::GlobalLoad => {
                    t.gld_requests += 1;
                    t.gld_sectors += sectors(&r.lanes, r.bytes);
                    t.gld_bytes += asked;
                }
                Space::GlobalStore => {
                    t.gst_requests += 1;
                    t.gst_sectors += sectors(&r.lanes, r.bytes);
                    t.gst_bytes += asked;
                }
                Space::Ldgsts => {
                    t.ldgsts_requests += 1;
                    t.ldgsts_sectors += sectors(&r.lanes, r.bytes);
                    t.ldgsts_bytes += asked;
                }
                Space::GlobalAtomic { .. } | Space::SharedAtomic { .. } => {}
                Space::SharedLoad | Space::SharedStore => {
                    let (w, ideal) = wavefronts(&r.lanes, r.bytes);
                    if space == Space::SharedLoad {
                        (t.shared_ld_requests, t.shared_ld_wavefronts, t.shared_ld_ideal) =
                            (t.shared_ld_requests + 1, t.shared_ld_wavefronts + w, t.shared_ld_ideal + ideal);
                    } else {
                        (t.shared_st_requests, t.shared_st_wavefronts, t.shared_st_ideal) =
                            (t.shared_st_requests + 1, t.shared_st_wavefronts + w, t.shared_st_ideal + ideal);
                    }
                }
            }
        }
        self.executions.clear();
    }
}

/// Counts one warp request of atomics into `t`: a global one's sectors, as a load's; a shared
/// one's wavefronts, as a load's of its width, twice that for a compare-and-swap (`ATOMS.CAS`
/// and the `ATOMS.CAST` loops: ncu on the H200 counted 2 wavefronts for 32 lanes of a 32-bit
/// one, 4 of a 64-bit one, 2 for 5 lanes of a 64-bit one). Atomics stay out of the active lanes
/// per request, which measure the loads and stores.
fn count_atomic(t: &mut Counters, space: Space, r: &Request) {
    match space {
        Space::GlobalAtomic { returns: true } => {
            t.gatom_requests += 1;
            t.gatom_sectors += sectors(&r.lanes, r.bytes);
        }
        Space::GlobalAtomic { returns: false } => {
            t.gred_requests += 1;
            t.gred_sectors += sectors(&r.lanes, r.bytes);
        }
        Space::SharedAtomic { compare } => {
            let (w, ideal) = wavefronts(&r.lanes, r.bytes);
            let (w, ideal) = if compare { (2 * w, 2 * ideal) } else { (w, ideal) };
            t.shared_atom_requests += 1;
            t.shared_atom_wavefronts += w;
            t.shared_atom_ideal += ideal;
        }
        _ => {}
    }
}

/// The distinct 32-byte sectors that `bytes` bytes at each lane's address fall in.
pub fn sectors(lanes: &[(u32, usize)], bytes: usize) -> u64 {
    let mut s: Vec<usize> =
        lanes.iter().flat_map(|&(_, a)| (a / SECTOR..=(a + bytes.max(1) - 1) / SECTOR).collect::<Vec<_>>()).collect();
    s.sort_unstable();
    s.dedup();
    s.len() as u64
}

/// Wavefronts of a shared request, and the wavefronts a conflict-free one of as many phases
/// needs: lanes in phases of 128 bytes (by lane number), each phase as many wavefronts as the
/// most distinct 4-byte words one bank holds among its lanes' bytes.
pub fn wavefronts(lanes: &[(u32, usize)], bytes: usize) -> (u64, u64) {
    let per_phase = (128 / bytes.clamp(4, 16)) as u32;
    let mut phases: Vec<Vec<usize>> = Vec::new();
    for &(lane, addr) in lanes {
        let p = (lane / per_phase) as usize;
        if phases.len() <= p {
            phases.resize(p + 1, Vec::new());
        }
        phases[p].extend((addr / 4..(addr + bytes.max(4)).div_ceil(4)).map(|w| w * 4));
    }
    let (mut total, mut ideal) = (0u64, 0u64);
    for words in phases.iter_mut().filter(|w| !w.is_empty()) {
        words.sort_unstable();
        words.dedup();
        let mut per_bank = [0u64; BANKS];
        for w in words.iter() {
            per_bank[w / 4 % BANKS] += 1;
        }
        total += per_bank.iter().copied().max().unwrap_or(0);
        ideal += 1;
    }
    (total, ideal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(addrs: impl IntoIterator<Item = usize>) -> Vec<(u32, usize)> {
        addrs.into_iter().enumerate().map(|(l, a)| (l as u32, a)).collect()
    }

    #[test]
    fn sectors_of_coalesced_and_strided_warps() {
        assert_eq!(sectors(&lanes((0..32).map(|l| 4096 + 4 * l)), 4), 4, "128 consecutive bytes");
        assert_eq!(sectors(&lanes((0..32).map(|l| 4096 + 8 * l)), 4), 8, "every other word");
        assert_eq!(sectors(&lanes((0..32).map(|l| 4096 + 128 * l)), 4), 32, "a sector per lane");
        assert_eq!(sectors(&lanes((0..32).map(|l| 4096 + 16 * l)), 16), 16, "512 bytes of int4");
        assert_eq!(sectors(&lanes([4096 + 30]), 4), 2, "straddling two sectors");
    }

    #[test]
    fn bank_conflicts_by_stride_and_width() {
        // 32 lanes, consecutive words: one wavefront.
        assert_eq!(wavefronts(&lanes((0..32).map(|l| 4 * l)), 4), (1, 1));
        // Stride 2 words: two lanes per bank.
        assert_eq!(wavefronts(&lanes((0..32).map(|l| 8 * l)), 4), (2, 1));
        // Stride 32 words: every lane in bank 0.
        assert_eq!(wavefronts(&lanes((0..32).map(|l| 128 * l)), 4), (32, 1));
        // The same word for every lane: a broadcast.
        assert_eq!(wavefronts(&lanes((0..32).map(|_| 64)), 4), (1, 1));
        // 8-byte, consecutive: two phases of 16 lanes, one wavefront each.
        assert_eq!(wavefronts(&lanes((0..32).map(|l| 8 * l)), 8), (2, 2));
        // 16-byte, consecutive: four phases of 8 lanes.
        assert_eq!(wavefronts(&lanes((0..32).map(|l| 16 * l)), 16), (4, 4));
    }

    #[test]
    fn the_kth_execution_of_a_site_by_a_warp_is_one_request() {
        let site: Site = std::panic::Location::caller();
        let mut b = BlockCounting::start(64, false);
        for round in 0..2usize {
            for t in 0..64u32 {
                b.access(t, (true, 0), 4096 + 4 * (t as usize + 64 * round), 4, Access::Read, Path::Lsu, site);
            }
        }
        b.flush();
        // Two warps × two executions: four requests, each 128 consecutive bytes.
        assert_eq!((b.totals.gld_requests, b.totals.gld_sectors, b.totals.gld_bytes), (4, 16, 512));
        assert_eq!((b.totals.request_lanes, b.totals.warps, b.totals.blocks), (128, 2, 1));
    }

    /// A store under a per-lane condition in a loop with a whole-warp collective a trip (a
    /// ballot compaction): each trip's stores are one request, as the warp issues them, though
    /// each lane stored in a different number of trips before.
    #[test]
    fn a_whole_warp_collective_starts_the_count_of_executions_again() {
        let site: Site = std::panic::Location::caller();
        let mut b = BlockCounting::start(32, false);
        for trip in 0..4usize {
            b.warp_op(&WarpOp::Sync, 0, true);
            // Lanes of the trip's parity store, at consecutive words of the trip's 64 bytes.
            for t in (0..32u32).filter(|t| (*t as usize + trip).is_multiple_of(2)) {
                b.access(t, (true, 0), 4096 + 64 * trip + 4 * (t as usize / 2), 4, Access::Write, Path::Lsu, site);
            }
        }
        b.flush();
        // Four requests of 16 lanes, each 64 consecutive bytes in 2 sectors.
        assert_eq!((b.totals.gst_requests, b.totals.gst_sectors, b.totals.gst_bytes), (4, 8, 256));
        // Without the collective, the lanes' k-th stores came from different trips.
        let mut b = BlockCounting::start(32, false);
        for trip in 0..4usize {
            for t in (0..32u32).filter(|t| (*t as usize + trip).is_multiple_of(2)) {
                b.access(t, (true, 0), 4096 + 64 * trip + 4 * (t as usize / 2), 4, Access::Write, Path::Lsu, site);
            }
        }
        b.flush();
        assert_eq!(b.totals.gst_requests, 2);
    }

    /// Issue 40: ncu counts `cp.async` as LDGSTS, apart from the global loads, and a bulk copy
    /// as bytes, not as requests; the copies' shared sides are in no shared counter, nor are an
    /// `mbarrier`'s operations.
    #[test]
    fn the_copies_count_apart_from_the_loads_and_stores() {
        let site: Site = std::panic::Location::caller();
        let mut b = BlockCounting::start(32, false);
        for t in 0..32u32 {
            // One cp.async per lane: 16 consecutive bytes each, 512 bytes in 16 sectors.
            b.access(t, (true, 0), 4096 + 16 * t as usize, 16, Access::Read, Path::AsyncCopy, site);
            b.access(t, (false, 0), 16 * t as usize, 16, Access::Write, Path::AsyncCopy, site);
        }
        // One bulk copy of 4,096 bytes in (128 sectors), one of 80 bytes out, over parts of 3 sectors.
        b.access(0, (true, 0), 8192, 4096, Access::Read, Path::Bulk, site);
        b.access(0, (false, 0), 0, 4096, Access::Write, Path::Bulk, site);
        b.access(0, (true, 0), 65_536 + 16, 80, Access::Write, Path::Bulk, site);
        // An mbarrier's init, arrivals and polls (SASS SYNCS.*): no shared request in ncu.
        b.access(0, (false, 0), 8192, 8, Access::Write, Path::Barrier, site);
        for t in 0..32u32 {
            b.access(t, (false, 0), 8192, 8, Access::AtomicRmw, Path::Barrier, site);
            b.access(t, (false, 0), 8192, 8, Access::AtomicLoad { acquire: true }, Path::Barrier, site);
        }
        b.flush();
        let t = &b.totals;
        assert_eq!((t.ldgsts_requests, t.ldgsts_sectors, t.ldgsts_bytes), (1, 16, 512));
        assert_eq!((t.bulk_ld_bytes, t.bulk_st_bytes), (4096, 96));
        assert_eq!((t.gld_requests, t.gst_requests, t.shared_ld_requests, t.shared_st_requests), (0, 0, 0, 0));
        assert_eq!((t.requests(), t.request_lanes), (1, 32), "the LDGSTS request and its 32 lanes");
        assert_eq!(t.ldgsts_efficiency_pct(), 100.0);
    }

    /// Issue #59: atomics count apart from loads and stores, as ncu on the H200 counted them
    /// (`docs/counters.md`, "Atomics"): a global `atom` and `red` per warp with their sectors; a
    /// shared `ATOMS.ADD` on 32 consecutive words one wavefront, at stride 2 two (one conflict),
    /// at stride 32 thirty-two; an `ATOMS.CAS` on consecutive words two, without a conflict.
    #[test]
    fn atomics_count_apart_as_ncu_counts_them() {
        let site: Site = std::panic::Location::caller();
        let (s1, s2, s3, s4): (Site, Site, Site, Site) = (
            std::panic::Location::caller(),
            std::panic::Location::caller(),
            std::panic::Location::caller(),
            std::panic::Location::caller(),
        );
        let op = |name, returns, compare| Path::Atomic(device::emu::AtomicOp { name, returns, compare });
        let mut b = BlockCounting::start(32, false);
        for t in 0..32usize {
            let lane = t as u32;
            b.access(lane, (true, 0), 4096 + 4 * t, 4, Access::AtomicRmw, op("atomicAdd", true, false), site);
            b.access(lane, (true, 0), 8192, 4, Access::AtomicRmw, op("atomicAdd", false, false), s1);
            b.access(lane, (false, 0), 4 * t, 4, Access::AtomicRmw, op("atomicAdd", true, false), s2);
            b.access(lane, (false, 0), 8 * t, 4, Access::AtomicRmw, op("atomicAdd", true, false), s3);
            b.access(lane, (false, 0), 128 * t, 4, Access::AtomicRmw, op("atomicAdd", true, false), s4);
            b.access(lane, (false, 0), 1024 + 4 * t, 4, Access::AtomicRmw, op("atomicCAS", true, true), site);
        }
        b.flush();
        let t = &b.totals;
        assert_eq!((t.gatom_requests, t.gatom_sectors, t.gred_requests, t.gred_sectors), (1, 4, 1, 1));
        assert_eq!(
            (t.shared_atom_requests, t.shared_atom_wavefronts, t.shared_atom_conflicts()),
            (4, 1 + 2 + 32 + 2, 1 + 31)
        );
        assert_eq!((t.atomics, t.global_atomics), (6 * 32, 2 * 32));
        assert_eq!((t.requests(), t.request_lanes), (0, 0), "atomics are not in the loads' and stores' requests");
    }

    /// A device-side launch's parameters, `(GlobalMut<i32>, GlobalMut<i32>, u32)` as the
    /// nested reductions pass them: three stores of one lane, 8 + 8 + 4 bytes at offsets 0, 8
    /// and 16 of the 64-byte aligned buffer, one sector each.
    #[test]
    fn a_device_side_launch_stores_each_parameter_once() {
        let mut b = BlockCounting::start(128, false);
        b.parameter_buffer(&[8, 8, 4]);
        b.parameter_buffer(&[4, 8]); // offsets 0 and 8
        let t = &b.totals;
        assert_eq!((t.gst_requests, t.gst_sectors, t.gst_bytes, t.request_lanes), (5, 5, 32, 5));
        assert_eq!(t.gld_requests, 0);
    }

    #[test]
    fn a_trace_keeps_each_interval_with_its_own_counters() {
        let site: Site = std::panic::Location::caller();
        let mut b = BlockCounting::start(32, true);
        for t in 0..32u32 {
            b.access(t, (true, 0), 4096 + 4 * t as usize, 4, Access::Read, Path::Lsu, site);
        }
        b.barrier();
        for t in 0..32u32 {
            // Stride 2: every other word, two requests' worth of sectors in one.
            b.access(t, (false, 0), 8 * t as usize, 4, Access::Write, Path::Lsu, site);
        }
        b.flush();
        let trace = b.trace.as_ref().unwrap();
        assert_eq!((trace.threads, trace.intervals.len()), (32, 2));
        let (first, second) = (&trace.intervals[0], &trace.intervals[1]);
        assert_eq!(first.accesses.len(), 32);
        assert!(first.accesses.iter().all(|a| a.global && !a.write && a.bytes == 4));
        assert_eq!((first.counters.gld_requests, first.counters.gld_sectors, first.counters.barriers), (1, 4, 1));
        assert_eq!(first.counters.shared_st_requests, 0);
        assert!(second.accesses.iter().all(|a| !a.global && a.write));
        assert_eq!((second.counters.shared_st_requests, second.counters.shared_st_wavefronts), (1, 2));
        assert_eq!((second.counters.gld_requests, second.counters.barriers), (0, 0));
        let mut sum = first.counters;
        sum.add(&second.counters);
        sum.blocks += 1;
        sum.warps += 1;
        assert_eq!(sum, b.totals, "the intervals add up to the block");
    }
}
