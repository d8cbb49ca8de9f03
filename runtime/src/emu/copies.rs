//! Asynchronous copies, as the GPU runs them: issued now, completed later.
//!
//! A `cp.async` (16 bytes, global → shared), a `cp.async.bulk` into shared memory and a bulk
//! store out of it are checked where they are issued, as accesses of the issuing thread (the
//! device layer does that through the usual access hooks, so memcheck, initcheck, racecheck and
//! the counters see them there). Their bytes move only when they complete:
//!
//! | copy | completes at | until then |
//! |---|---|---|
//! | `cp.async` | the issuing thread's `cp.async.wait_group N` that covers its group (`cp.async.commit_group` closes a group; a copy in no closed group never completes) | its shared destination is in flight |
//! | `cp.async.bulk` global → shared | a wait on its `mbarrier` (`mbarrier.try_wait.parity`, by any thread): the bytes land, the barrier's byte count goes down, and the phase may complete | its shared destination is in flight |
//! | `cp.async.bulk` shared → global | the issuing thread's `cp.async.bulk.wait_group.read N` that covers its bulk group: it reads shared memory and writes global memory | its shared source may not be written; the block may not exit |
//!
//! Any access to a destination in flight, or a store to a bulk store's source, is reported as
//! [`EmuErrorKind::InFlight`] with the thread, its source line, the shared array and offset,
//! and the copy (who issued it, where, and what completes it): on the GPU that access would
//! read stale or poisoned bytes, or corrupt the copy. So is a block whose threads all exit
//! while a bulk store has not read its bytes.
//!
//! The `mbarrier` word keeps its phase, its pending arrivals and its pending bytes, as the
//! hardware's does ([`step`]); an arrival releases the arriving thread's accesses into the
//! phase, the bytes of a landed bulk copy count as stores of the barrier's copy engine (a
//! pseudo-thread of the race check), and a wait that sees the phase complete acquires all of
//! it ([`super::race`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use device::emu::{AsyncCopy, CopyDone, MbarrierOp, Site};

use super::EmuErrorKind;
use super::block::{BlockCtx, SharedArray, ThreadCtx, dim, stop_with_report};

/// The emulator's `mbarrier` word: pending bytes (low 32 bits, signed), pending arrivals (bits
/// 32..43), expected arrivals (bits 43..54), phase parity (bit 63).
mod word {
    pub(super) const ARRIVALS: u32 = 32;
    pub(super) const EXPECTED: u32 = 43;
    pub(super) const PHASE: u32 = 63;
    pub(super) const FIELD: u64 = (1 << 11) - 1;
}

/// The word of a barrier just initialised for `count` arrivals per phase (phase 0).
fn fresh(count: u32) -> u64 {
    let c = u64::from(count) & word::FIELD;
    (c << word::EXPECTED) | (c << word::ARRIVALS)
}

/// The word after `arrivals` arrivals and `bytes` more (or, negative, fewer) pending bytes:
/// when both reach zero the phase completes and the counts start over. `None` when more
/// arrivals come than the phase has left.
fn step(word: u64, arrivals: u64, bytes: i64) -> Option<u64> {
    let tx = (word as u32 as i32 as i64) + bytes;
    let pending = ((word >> word::ARRIVALS) & word::FIELD).checked_sub(arrivals)?;
    let expected = (word >> word::EXPECTED) & word::FIELD;
    let phase = word >> word::PHASE;
    Some(if pending == 0 && tx == 0 {
        ((phase ^ 1) << word::PHASE) | (expected << word::EXPECTED) | (expected << word::ARRIVALS)
    } else {
        (phase << word::PHASE) | (expected << word::EXPECTED) | (pending << word::ARRIVALS) | (tx as i32 as u32 as u64)
    })
}

/// A copy issued and not yet completed.
#[derive(Clone, Copy)]
struct Pending {
    copy: AsyncCopy,
    /// The issuing thread.
    thread: u32,
    /// Where it was issued.
    site: Site,
}

/// One thread's copies of one kind: those of its open group, then its committed groups, oldest
/// first.
#[derive(Default)]
struct Queue {
    open: Vec<Pending>,
    committed: VecDeque<Vec<Pending>>,
}

impl Queue {
    fn iter(&self) -> impl Iterator<Item = &Pending> {
        self.open.iter().chain(self.committed.iter().flatten())
    }
}

/// One thread's `cp.async` groups and bulk-store groups.
#[derive(Default)]
struct Queues {
    copies: Queue,
    stores: Queue,
}

/// What the emulator keeps of one `mbarrier` besides its word.
struct Mbar {
    /// The word's host address.
    word: usize,
    /// Its copy engine's number (pseudo-thread `threads + engine` of the race check).
    engine: usize,
    /// Bulk copies that complete on it and have not landed.
    copies: Vec<Pending>,
    /// What the current phase's arrivals and landed copies released.
    released: Vec<u32>,
    /// What the last completed phase of each parity published.
    done: [Vec<u32>; 2],
}

/// The asynchronous copies of one block.
#[derive(Default)]
pub(super) struct BlockCopies {
    /// Per thread (grown on first use), its groups.
    queues: Vec<Queues>,
    /// The block's `mbarrier`s, in the order they were initialised.
    bars: Vec<Mbar>,
    /// Copies issued and not yet completed (0: no access needs a look at the in-flight marks).
    pub in_flight: usize,
}

impl BlockCopies {
    fn queues(&mut self, thread: u32) -> &mut Queues {
        let t = thread as usize;
        if self.queues.len() <= t {
            self.queues.resize_with(t + 1, Queues::default);
        }
        &mut self.queues[t]
    }

    /// The pending copy whose destination (`incoming`) or bulk-store source (not `incoming`)
    /// holds the shared byte `addr`.
    fn covering(&self, addr: usize, incoming: bool) -> Option<Pending> {
        let bulk = self.bars.iter().flat_map(|b| &b.copies);
        let mine = self.queues.iter().flat_map(|q| q.copies.iter().chain(q.stores.iter()));
        bulk.chain(mine).copied().find(|p| {
            let (at, into_shared) = match p.copy.done {
                CopyDone::BulkGroup => (p.copy.src, false),
                CopyDone::Group | CopyDone::Mbarrier(_) => (p.copy.dst, true),
            };
            into_shared == incoming && at <= addr && addr < at + p.copy.bytes
        })
    }
}

/// The shared array of block `b` holding `[addr, addr + bytes)`, given to `f` with the
/// offset of `addr` in it.
fn with_array<R>(b: &BlockCtx<'_>, addr: usize, bytes: usize, f: impl FnOnce(&mut SharedArray, usize) -> R) -> R {
    let mut arrays = b.static_shared.borrow_mut();
    let mut dynamic = b.dynamic_shared.borrow_mut();
    let array = arrays
        .iter_mut()
        .chain(std::iter::once(&mut *dynamic))
        .find(|a| a.start() <= addr && addr + bytes <= a.start() + a.buf.len() * 16)
        .expect("the device layer checked the copy's shared side against its array");
    let from = addr - array.start();
    f(array, from)
}

/// The shared side of a copy: its address, and whether it is the destination (else the source
/// of a bulk store).
fn shared_side(copy: &AsyncCopy) -> (usize, bool) {
    match copy.done {
        CopyDone::BulkGroup => (copy.src, false),
        CopyDone::Group | CopyDone::Mbarrier(_) => (copy.dst, true),
    }
}

/// Thread `t` issued `copy` at `site` (both sides already checked): its shared side is marked
/// in flight, and the copy waits for what completes it.
pub(super) fn issue(t: &ThreadCtx<'_>, copy: AsyncCopy, site: Site) {
    let b = t.block;
    let (at, incoming) = shared_side(&copy);
    let pending = Pending { copy, thread: t.linear, site };
    {
        let mut copies = b.copies.borrow_mut();
        match copy.done {
            CopyDone::Group => copies.queues(t.linear).copies.open.push(pending),
            CopyDone::BulkGroup => copies.queues(t.linear).stores.open.push(pending),
            CopyDone::Mbarrier(word) => {
                let Some(m) = copies.bars.iter_mut().find(|m| m.word == word) else {
                    drop(copies);
                    stop_with_report(
                        EmuErrorKind::Uninitialized,
                        format!(
                            "thread {} started a bulk copy at {} that completes on an mbarrier no thread of this \
                             block initialised (mbarrier.init) at shared address {word:#x}",
                            dim(t.idx),
                            super::site_line(site)
                        ),
                    )
                };
                m.copies.push(pending);
            }
        }
        copies.in_flight += 1;
    }
    with_array(b, at, copy.bytes, |a, from| a.mark_in_flight(from, from + copy.bytes, incoming, true));
}

/// `cp.async.commit_group` (or, `bulk`, `cp.async.bulk.commit_group`) by thread `t`.
pub(super) fn commit(t: &ThreadCtx<'_>, bulk: bool) {
    let mut copies = t.block.copies.borrow_mut();
    let q = copies.queues(t.linear);
    let q = if bulk { &mut q.stores } else { &mut q.copies };
    let group = std::mem::take(&mut q.open);
    q.committed.push_back(group);
}

/// `cp.async.wait_group pending` (or, `bulk`, `cp.async.bulk.wait_group.read pending`) by thread
/// `t`: every committed group but the newest `pending` completes.
pub(super) fn wait(t: &ThreadCtx<'_>, bulk: bool, pending: u32) {
    let b = t.block;
    loop {
        let group = {
            let mut copies = b.copies.borrow_mut();
            let q = copies.queues(t.linear);
            let q = if bulk { &mut q.stores } else { &mut q.copies };
            if q.committed.len() <= pending as usize {
                return;
            }
            q.committed.pop_front().expect("more committed groups than pending")
        };
        for p in group {
            complete(b, &p);
        }
    }
}

/// Moves the bytes of `p` and takes its in-flight marks off.
fn complete(b: &BlockCtx<'_>, p: &Pending) {
    let (at, incoming) = shared_side(&p.copy);
    // SAFETY: both sides were checked when the copy was issued (bounds, a live allocation, the
    // block's own shared array), and nothing frees memory while a kernel runs.
    unsafe { std::ptr::copy_nonoverlapping(p.copy.src as *const u8, p.copy.dst as *mut u8, p.copy.bytes) };
    with_array(b, at, p.copy.bytes, |a, from| a.mark_in_flight(from, from + p.copy.bytes, incoming, false));
    b.copies.borrow_mut().in_flight -= 1;
}

/// The word of the `mbarrier` at host address `word` (8-byte aligned shared memory of this
/// block: the device layer checked it).
fn barrier_word(word: usize) -> &'static AtomicU64 {
    // SAFETY: an 8-byte aligned word of the block's shared memory, which outlives the call;
    // only the worker running the block touches it.
    unsafe { AtomicU64::from_ptr(word as *mut u64) }
}

/// Applies `arrivals` and `bytes` to the barrier `m`, reporting an arrival too many; when the
/// phase completes, what it released is published under its parity.
fn advance(m: &mut Mbar, arrivals: u64, bytes: i64, t: &ThreadCtx<'_>, site: Site) {
    let w = barrier_word(m.word);
    let old = w.load(Ordering::Relaxed);
    let Some(new) = step(old, arrivals, bytes) else {
        stop_with_report(
            EmuErrorKind::BarrierDivergence,
            format!(
                "thread {} arrived at {} on the mbarrier at shared address {:#x}, whose current phase expects no more \
                 arrivals (it was initialised for {} per phase): an arrival too many",
                dim(t.idx),
                super::site_line(site),
                m.word,
                (old >> word::EXPECTED) & word::FIELD
            ),
        )
    };
    w.store(new, Ordering::Relaxed);
    if new >> word::PHASE != old >> word::PHASE {
        m.done[(old >> word::PHASE) as usize & 1] = std::mem::take(&mut m.released);
    }
}

/// An operation of thread `t` on the `mbarrier` at host address `word`; see
/// [`Hooks::mbarrier`](device::emu::Hooks::mbarrier).
pub(super) fn mbarrier(t: &ThreadCtx<'_>, word: usize, op: MbarrierOp, site: Site) -> bool {
    let b = t.block;
    if let MbarrierOp::Init { count } = op {
        barrier_word(word).store(fresh(count), Ordering::Relaxed);
        let mut copies = b.copies.borrow_mut();
        let engine = copies.bars.len();
        match copies.bars.iter_mut().find(|m| m.word == word) {
            Some(m) => (m.released, m.done) = (Vec::new(), Default::default()),
            None => copies.bars.push(Mbar {
                word,
                engine,
                copies: Vec::new(),
                released: Vec::new(),
                done: Default::default(),
            }),
        }
        return false;
    }
    let index = b.copies.borrow().bars.iter().position(|m| m.word == word);
    let Some(index) = index else {
        stop_with_report(
            EmuErrorKind::Uninitialized,
            format!(
                "thread {} used the mbarrier at shared address {word:#x} at {}, which no thread of this block \
                 initialised (mbarrier.init)",
                dim(t.idx),
                super::site_line(site)
            ),
        )
    };
    match op {
        MbarrierOp::Init { .. } => false,
        MbarrierOp::Arrive { tx } => {
            let released = if b.race_on { Some(b.race.borrow_mut().release(t.linear)) } else { None };
            let mut copies = b.copies.borrow_mut();
            let m = &mut copies.bars[index];
            if let Some(v) = released {
                join(&mut m.released, &v);
            }
            advance(m, 1, i64::from(tx), t, site);
            false
        }
        MbarrierOp::TryWait { parity } => {
            land(b, index, t, site);
            let copies = b.copies.borrow();
            let m = &copies.bars[index];
            let complete = (barrier_word(m.word).load(Ordering::Relaxed) >> word::PHASE) as u32 != (parity & 1);
            if complete && b.race_on {
                b.race.borrow_mut().acquire(t.linear, &m.done[(parity & 1) as usize]);
            }
            complete
        }
    }
}

/// Lands every bulk copy that completes on barrier `index`: its bytes, its engine's stores, and
/// its bytes off the barrier's count.
fn land(b: &BlockCtx<'_>, index: usize, t: &ThreadCtx<'_>, site: Site) {
    let landing = std::mem::take(&mut b.copies.borrow_mut().bars[index].copies);
    for p in landing {
        complete(b, &p);
        let engine = b.copies.borrow().bars[index].engine;
        let stores = if b.race_on {
            Some(b.race.borrow_mut().engine_write(engine, p.copy.dst, p.copy.bytes, p.site))
        } else {
            None
        };
        let mut copies = b.copies.borrow_mut();
        let m = &mut copies.bars[index];
        if let Some((thread, clock)) = stores {
            if m.released.len() <= thread {
                m.released.resize(thread + 1, 0);
            }
            m.released[thread] = m.released[thread].max(clock);
        }
        advance(m, 0, -(p.copy.bytes as i64), t, site);
    }
}

/// `a` joined with `b`, entry by entry.
fn join(a: &mut Vec<u32>, b: &[u32]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// What completes `p`, for reports.
fn describe(p: &Pending) -> String {
    let (t, at) = (p.thread, super::site_line(p.site));
    match p.copy.done {
        CopyDone::Group => format!(
            "the cp.async that thread {t} issued at {at}, which lands only at that thread's cp.async.wait_group \
             covering its group (closed by cp.async.commit_group)"
        ),
        CopyDone::Mbarrier(_) => format!(
            "the cp.async.bulk that thread {t} issued at {at}, which lands only at a wait on its mbarrier \
             (mbarrier.try_wait.parity)"
        ),
        CopyDone::BulkGroup => format!(
            "the bulk store (cp.async.bulk, shared to global) that thread {t} issued at {at}, which reads it only by \
             that thread's cp.async.bulk.wait_group.read"
        ),
    }
}

/// Thread `t`'s access (`writes`: a store) of `bytes` bytes at `at` touched shared bytes in
/// flight (`incoming`: a copy's destination; else a bulk store's source): the report, naming
/// `place` (the array and offset) and the copy.
pub(super) fn in_flight(
    t: &ThreadCtx<'_>,
    addr: usize,
    (bytes, writes): (usize, bool),
    at: Site,
    incoming: bool,
    place: &str,
) -> ! {
    let copy = t.block.copies.borrow().covering(addr, incoming);
    let copy = copy.map_or_else(|| "an asynchronous copy".to_string(), |p| describe(&p));
    let verb = if writes { "wrote" } else { "read" };
    let (what, role) = if incoming {
        ("an asynchronous copy has not written yet", "the destination")
    } else {
        ("a bulk store is still reading", "the source")
    };
    stop_with_report(
        EmuErrorKind::InFlight,
        format!(
            "thread {} {verb} {bytes} bytes at {} that {what} (a missing wait): {place} is {role} of {copy}",
            dim(t.idx),
            super::site_line(at)
        ),
    )
}

/// At the end of a block whose threads all finished: a bulk store that has not read its shared
/// bytes is an error (the block's shared memory ends with it).
pub(super) fn at_block_end(b: &BlockCtx<'_>) -> Result<(), (EmuErrorKind, String)> {
    let copies = b.copies.borrow();
    let Some(p) = copies.queues.iter().flat_map(|q| q.stores.iter()).next() else { return Ok(()) };
    let place = with_array(b, p.copy.src, p.copy.bytes, |a, from| a.place(from));
    Err((
        EmuErrorKind::InFlight,
        format!(
            "every thread of the block exited while {} had not read {place}: a block's shared memory ends with it, so \
             the issuing thread waits (cp.async.bulk.wait_group.read) before it exits",
            describe(p)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::word::{ARRIVALS, EXPECTED, PHASE};
    use super::{fresh, step};

    #[test]
    fn a_phase_completes_when_its_arrivals_and_bytes_are_in() {
        let w = step(fresh(1), 1, 4096).unwrap(); // arrive, expecting 4096 bytes
        assert_eq!(w >> PHASE, 0, "bytes still pending");
        let w = step(w, 0, -4000).unwrap();
        assert_eq!(w >> PHASE, 0, "96 bytes still pending");
        let w = step(w, 0, -96).unwrap();
        assert_eq!(w, (1 << PHASE) | fresh(1), "phase 1 starts with the counts reset");
        // The bytes may land before the arrival that expects them.
        let w = step(step(w, 0, -64).unwrap(), 1, 64).unwrap();
        assert_eq!(w, fresh(1), "phase 2 (parity 0) starts");
        assert_eq!(fresh(3) >> ARRIVALS & 0x7ff, 3);
        assert_eq!(fresh(3) >> EXPECTED & 0x7ff, 3);
    }

    #[test]
    fn a_phase_waits_for_every_arrival_and_refuses_one_too_many() {
        let w = step(fresh(3), 1, 0).unwrap();
        let w = step(w, 1, 0).unwrap();
        assert_eq!(w >> PHASE, 0);
        assert_eq!(step(w, 1, 0).unwrap() >> PHASE, 1);
        let waiting_for_bytes = step(fresh(1), 1, 64).unwrap();
        assert_eq!(step(waiting_for_bytes, 1, 0), None, "its one arrival is in; the bytes are not");
    }
}
