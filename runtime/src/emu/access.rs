//! The checks every memory access of a kernel passes in the emulator, before it happens: the
//! device layer's `global_access`, `shared_access` and `fence` hooks. A refused access unwinds
//! the thread with one report line; host memory is never touched out of bounds.

use std::cell::RefCell;
use std::sync::atomic::Ordering;

use device::emu::{Access, Path, Site};

use super::EmuErrorKind;
use super::block::{BlockCtx, ThreadCtx, dim, stop_with_report};
use super::memory::{Alloc, CrossSide, Refusal, cross_block, cross_block_atomic};
use super::race::Hazard;

fn site(s: Site) -> String {
    super::site_line(s)
}

/// Stops the calling thread with a report.
fn report(kind: EmuErrorKind, detail: String) -> ! {
    stop_with_report(kind, detail)
}

/// `read` / `wrote` for a load / a store (a read-modify-write is a store); for an atomic
/// read-modify-write its CUDA C name: `made an atomicAdd of`.
fn verb(access: Access, path: Path) -> String {
    match path {
        Path::Atomic(op) => format!("made an {} of", op.name),
        Path::Prefetch => "prefetched".into(),
        _ if access.writes() => "wrote".into(),
        _ => "read".into(),
    }
}

/// `access`, or an atomic's CUDA C name.
fn kind_of(path: Path) -> &'static str {
    if let Path::Atomic(op) = path { op.name } else { "access" }
}

/// Element `index` of a shared array or checked buffer (of `len` elements of `bytes` bytes at host
/// address `base`), as an out-of-bounds atomic names it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Element {
    /// The host address of element 0.
    pub base: usize,
    /// The index used.
    pub index: usize,
    /// The elements the array or buffer holds.
    pub len: usize,
    /// Bytes per element.
    pub bytes: usize,
}

/// An atomic `name` at an index at or past the length of a checked buffer (`global`) or shared
/// array, by the current thread `t`: reported with the address and what lies there, and the
/// thread stops (nothing was touched).
pub(super) fn atomic_out_of_bounds(t: &ThreadCtx<'_>, name: &str, global: bool, e: Element, at: Site) -> ! {
    let addr = e.base.wrapping_add(e.index.wrapping_mul(e.bytes));
    let (kind, whose, place) = if global {
        let place = match t.block.launch.memory.check(addr, e.bytes, &t.last_alloc) {
            Ok(a) => a.place(addr),
            Err(Refusal::OutOfBounds(p) | Refusal::AfterFree(p) | Refusal::Misaligned { place: p, .. }) => p,
        };
        (EmuErrorKind::GlobalOutOfBounds, "a buffer", format!("global address {addr:#x} is {place}"))
    } else {
        let b = t.block;
        let arrays = b.static_shared.borrow();
        let dynamic = b.dynamic_shared.borrow();
        let array = arrays
            .iter()
            .chain(std::iter::once(&*dynamic))
            .find(|a| a.start() <= e.base && e.base < a.start() + a.buf.len() * 16);
        let place = match array {
            Some(a) => a.place(addr - a.start()),
            None => "in no shared array of this block".into(),
        };
        (EmuErrorKind::SharedOutOfBounds, "an array", format!("shared address {addr:#x} is {place}"))
    };
    report(
        kind,
        format!(
            "thread {} made an {name} at index {} of {whose} of {} elements at {}, out of bounds: {place}",
            dim(t.idx),
            e.index,
            e.len,
            site(at)
        ),
    )
}

/// A global access of `bytes` at `addr` by the current thread `t`, on `path` (counted there).
pub(super) fn global(t: &ThreadCtx<'_>, addr: usize, bytes: usize, access: Access, path: Path, at: Site) {
    settle(t);
    let b = t.block;
    let launch = b.launch;
    let who = || format!("thread {}", dim(t.idx));
    let alloc = match launch.memory.check(addr, bytes, &t.last_alloc) {
        Ok(a) => a,
        Err(Refusal::Misaligned { align, place }) => report(
            EmuErrorKind::Misaligned,
            format!(
                "{} made a {bytes}-byte {} at {} to misaligned address {addr:#x} (a multiple of {align} is \
                 required): {place}",
                who(),
                kind_of(path),
                site(at)
            ),
        ),
        Err(Refusal::AfterFree(place)) => report(
            EmuErrorKind::UseAfterFree,
            format!(
                "{} {} {bytes} bytes at {} after they were freed: global address {addr:#x} is {place}",
                who(),
                verb(access, path),
                site(at)
            ),
        ),
        Err(Refusal::OutOfBounds(nearest)) => report(
            EmuErrorKind::GlobalOutOfBounds,
            format!(
                "{} {} {bytes} bytes at {}, out of bounds: global address {addr:#x} is {nearest}",
                who(),
                verb(access, path),
                site(at)
            ),
        ),
    };
    if let Path::Prefetch = path {
        // A hint that moves no data: its address is all there is to check.
        return;
    }
    let (from, to) = (addr - alloc.start, addr - alloc.start + bytes);
    let checks = launch.checks;
    if checks.initcheck && access.reads() && alloc.first_uninit(from, to).is_some() {
        note_uninit(b, || {
            format!(
                "{} read {bytes} bytes at {} that nothing had written: global address {addr:#x} is {}, without \
                 being filled, and no host copy or kernel store wrote it since",
                who(),
                site(at),
                alloc.place(addr)
            )
        });
    }
    if checks.racecheck && alloc.written_in.load(Ordering::Relaxed) == launch.memory.generation {
        let place = || format!("global memory at {addr:#x} ({})", alloc.place(addr));
        if b.race_on
            && let Some(h) = b.race.borrow_mut().access(addr, bytes, access, t.linear, at)
        {
            race(h, &place());
        }
        if access.is_atomic() {
            if b.race_on && launch.grid.volume() > 1 {
                atomic_between_blocks(t, alloc, addr, bytes, (access, path), at, &place);
            }
            synchronise(t, addr, access);
        } else if b.race_on && launch.grid.volume() > 1 {
            between_blocks(t, alloc, addr, bytes, access, at, place);
        }
    }
    if access.writes() {
        alloc.mark_init(from, to);
    }
    if let Some(c) = &b.counting {
        c.borrow_mut().access(t.linear, (true, alloc.start), addr, bytes, access, path, at);
    }
}

/// The launch passed `addr` to thread `t` as a writable parameter: its allocation is raced on
/// in this launch (the race checks skip the others: only a store can race).
pub(super) fn writable(t: &ThreadCtx<'_>, addr: usize) {
    let launch = t.block.launch;
    if let Some(alloc) = launch.memory.holder(addr, &t.last_alloc) {
        let generation = launch.memory.generation;
        if alloc.written_in.load(Ordering::Relaxed) != generation {
            alloc.written_in.store(generation, Ordering::Relaxed);
        }
    }
}

/// A shared access of `bytes` at `addr` (inside one of the block's arrays: `Shared` checked
/// the index) by the current thread `t`, on `path` (counted there).
pub(super) fn shared(t: &ThreadCtx<'_>, addr: usize, bytes: usize, access: Access, path: Path, at: Site) {
    let b = t.block;
    if let Path::Atomic(op) = path
        && !addr.is_multiple_of(bytes.max(1))
    {
        report(
            EmuErrorKind::Misaligned,
            format!(
                "thread {} made a {bytes}-byte {} at {} to misaligned shared address {addr:#x} (a multiple of {bytes} \
                 is required)",
                dim(t.idx),
                op.name,
                site(at)
            ),
        )
    }
    let checks = b.launch.checks;
    let copies = b.copies.borrow().in_flight > 0;
    if !b.race_on && !checks.initcheck && b.counting.is_none() && !copies {
        return;
    }
    // The array (name, bytes, the access's offset), the bytes in flight there, and whether they
    // were written.
    let (name, size, from, in_flight, written, region) = {
        let mut arrays = b.static_shared.borrow_mut();
        let mut dynamic = b.dynamic_shared.borrow_mut();
        let array = arrays
            .iter_mut()
            .chain(std::iter::once(&mut *dynamic))
            .find(|a| a.start() <= addr && addr + bytes <= a.start() + a.buf.len() * 16);
        let Some(array) = array else {
            report(
                EmuErrorKind::SharedOutOfBounds,
                format!(
                    "thread {} accessed {bytes} bytes at {addr:#x}, in no shared array of this block, at {}",
                    dim(t.idx),
                    site(at)
                ),
            )
        };
        let from = addr - array.start();
        let in_flight = if copies { array.in_flight(from, from + bytes, access.writes()) } else { None };
        let written = !checks.initcheck || array.touch(from, from + bytes, access.writes());
        (array.name, (array.bytes, array.elem), from, in_flight, written, array.start())
    };
    let place = || super::block::shared_place(name, size.0, size.1, from);
    if let Some(incoming) = in_flight {
        super::copies::in_flight(t, addr, (bytes, access.writes()), at, incoming, &place());
    }
    if access.reads() && !written {
        note_uninit(b, || {
            format!(
                "thread {} read {bytes} bytes at {} that no thread of this block had written: {}",
                dim(t.idx),
                site(at),
                place()
            )
        });
    }
    if b.race_on
        && let Some(h) = b.race.borrow_mut().access(addr, bytes, access, t.linear, at)
    {
        race(h, &place());
    }
    if let Some(c) = &b.counting {
        c.borrow_mut().access(t.linear, (false, region), addr, bytes, access, path, at);
    }
}

/// Who made one side of a hazard: `thread N`, or the copy engine of a bulk copy (a
/// pseudo-thread numbered from the block's thread count on).
fn who(side: &super::race::Side, threads: usize) -> String {
    if side.thread as usize >= threads {
        format!("the bulk copy issued at {}", site(side.site))
    } else {
        format!("thread {}", side.thread)
    }
}

/// `__threadfence()` by the current thread: a release (this block's accesses so far are
/// published by its next atomic store) and an acquire (what its atomic loads observed).
pub(super) fn fence(t: &ThreadCtx<'_>, _at: Site) {
    if !t.block.launch.checks.racecheck {
        return;
    }
    settle(t);
    let b = t.block;
    b.releases.set(b.releases.get() + 1);
    t.fenced.set(true);
    let mut knows = b.knows.borrow_mut();
    for addr in t.observed.borrow_mut().drain(..) {
        b.launch.syncs.acquire(addr, &mut knows);
    }
}

/// What the current thread's acquire loads read joins its block's knowledge: called at its next
/// global access, fence or barrier, when those loads have happened.
pub(super) fn settle(t: &ThreadCtx<'_>) {
    let mut acquired = t.acquired.borrow_mut();
    if acquired.is_empty() {
        return;
    }
    let mut knows = t.block.knows.borrow_mut();
    for addr in acquired.drain(..) {
        t.block.launch.syncs.acquire(addr, &mut knows);
    }
}

/// Notes the word at `addr` in `words` (once).
fn note(words: &RefCell<Vec<usize>>, addr: usize) {
    let mut w = words.borrow_mut();
    if !w.contains(&addr) {
        w.push(addr);
    }
}

/// Keeps the first load of unwritten memory of this interval, reported when the interval ends
/// (unless another thread's store to it is reported as a race first).
fn note_uninit(b: &BlockCtx<'_>, detail: impl FnOnce() -> String) {
    let mut slot = b.uninit.borrow_mut();
    if slot.is_none() {
        *slot = Some(detail());
    }
}

/// How a race report says what one side did: `wrote`, `read`, and for an atomic side
/// `atomically updated` (a read-modify-write) or `atomically read`.
fn side_verb(wrote: bool, atomic: bool) -> &'static str {
    match (wrote, atomic) {
        (true, false) => "wrote",
        (false, false) => "read",
        (true, true) => "atomically updated",
        (false, true) => "atomically read",
    }
}

/// Stops the thread with the report of hazard `h` on `place`.
fn race(h: Hazard, place: &str) -> ! {
    let threads = super::block::current().block.launch.block.volume() as usize;
    if h.earlier.thread as usize >= threads {
        // The earlier side is a bulk copy's bytes, which only a wait on its mbarrier orders.
        report(
            EmuErrorKind::Race,
            format!(
                "{} race on {place}: {} wrote it, then {} {} it at {}, without waiting for the mbarrier phase that \
                 completes the copy (mbarrier.try_wait.parity, or a barrier after another thread's wait)",
                h.kind(),
                who(&h.earlier, threads),
                who(&h.later, threads),
                if h.later_wrote { "wrote" } else { "read" },
                site(h.later.site)
            ),
        )
    }
    report(
        EmuErrorKind::Race,
        format!(
            "{} race on {place}: thread {} {} it at {}, then thread {} {} it at {}, in the same barrier interval with \
             nothing ordering them (sync_threads, CUDA's __syncthreads, orders the block; sync_warp, __syncwarp, or a \
             .sync warp operation orders the lanes of its mask)",
            h.kind(),
            h.earlier.thread,
            side_verb(h.earlier_wrote, h.earlier.atomic),
            site(h.earlier.site),
            h.later.thread,
            side_verb(h.later_wrote, h.later.atomic),
            site(h.later.site)
        ),
    )
}

/// An atomic access's part in the cross-block ordering: a release publishes this block's
/// accesses so far into the word; an acquire takes what was published there.
fn synchronise(t: &ThreadCtx<'_>, addr: usize, access: Access) {
    let b = t.block;
    let syncs = &b.launch.syncs;
    match access {
        Access::AtomicLoad { acquire: true } => note(&t.acquired, addr),
        Access::AtomicLoad { acquire: false } => note(&t.observed, addr),
        Access::AtomicStore { release } => {
            if release {
                b.releases.set(b.releases.get() + 1);
            }
            if release || t.fenced.get() {
                syncs.publish(addr, b.linear, b.releases.get());
            }
        }
        Access::AtomicRmw => {
            note(&t.observed, addr);
            if t.fenced.get() {
                syncs.publish(addr, b.linear, b.releases.get());
            }
        }
        Access::Read | Access::Write => {}
    }
}

/// A plain global access's check against the other blocks of the launch.
fn between_blocks(
    t: &ThreadCtx<'_>,
    alloc: &Alloc,
    addr: usize,
    bytes: usize,
    access: Access,
    at: Site,
    place: impl Fn() -> String,
) {
    let b = t.block;
    let generation = b.launch.memory.generation;
    let me = (b.linear, t.linear, at, b.releases.get());
    let knows = b.knows.borrow();
    let ordered = |x: u64, rel: u32| knows.get(&x).is_some_and(|&k| k > rel);
    let Some(other) = cross_block(alloc, addr, bytes, access.writes(), generation, me, ordered) else { return };
    report_between_blocks(t, other, access, Path::Lsu, at, &place())
}

/// An atomic access's check against the plain accesses of the other blocks of the launch: a
/// partial stored plainly and read back with `ld.relaxed` by the last block, with no fence
/// before the writer's ticket, races.
fn atomic_between_blocks(
    t: &ThreadCtx<'_>,
    alloc: &Alloc,
    addr: usize,
    bytes: usize,
    (access, path): (Access, Path),
    at: Site,
    place: &dyn Fn() -> String,
) {
    let b = t.block;
    let knows = b.knows.borrow();
    let ordered = |x: u64, rel: u32| knows.get(&x).is_some_and(|&k| k > rel);
    let generation = b.launch.memory.generation;
    if let Some(other) = cross_block_atomic(alloc, addr, bytes, access.writes(), generation, b.linear, ordered) {
        drop(knows);
        report_between_blocks(t, other, access, path, at, &place());
    }
}

/// Stops the thread with the report of a race between its access at `at` and `other`, a plain
/// access of another block, on `place`.
fn report_between_blocks(t: &ThreadCtx<'_>, other: CrossSide, access: Access, path: Path, at: Site, place: &str) -> ! {
    let kind = match (other.wrote, access.writes()) {
        (true, false) => "read after write",
        (false, true) => "write after read",
        _ => "write after write",
    };
    let who = match (other.thread, other.site) {
        (Some(th), Some(s)) => format!(
            "thread {th} of block {} {} it at {}",
            other.block,
            if other.wrote { "wrote" } else { "read" },
            site(s)
        ),
        _ => format!("block {} {} it", other.block, if other.wrote { "wrote" } else { "read" }),
    };
    report(
        EmuErrorKind::Race,
        format!(
            "{kind} race between blocks on {place}: {who}, then thread {} of this block {} it at {}, in the same \
             launch with no release and acquire between them (thread_fence, CUDA's __threadfence, or a store_release \
             before the writer's atomic, and an atomic or a load_acquire that the reader's block observed)",
            t.linear,
            verb(access, path),
            site(at)
        ),
    )
}
