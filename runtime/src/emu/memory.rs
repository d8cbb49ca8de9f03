//! The emulator's device memory: the allocations a backend made, and the checks every global
//! access of a kernel passes before it touches host memory (memcheck and initcheck, and the
//! cross-block part of racecheck).
//!
//! Every emulator buffer registers here when it is allocated ([`DeviceMemory::register`]) and
//! leaves when it is freed; the last [`FREED_KEPT`] freed ones are remembered so that a stale
//! pointer is reported as a use after free, not as a stray address. A launch takes a
//! [`Snapshot`] of the live allocations; each access is looked up in it by binary search.
//!
//! Per allocation the emulator keeps:
//! * one *initialised* bit per 4-byte word, set by the host's writes and copies and by kernel
//!   stores ([`Backend::alloc`](crate::backend::Backend::alloc) zero-fills, so its words start
//!   initialised; [`Backend::alloc_uninit`](crate::backend::Backend::alloc_uninit)'s do not);
//! * for the cross-block race check, per 4-byte word (per element of a buffer of 1- or 2-byte
//!   elements: two blocks may store neighbouring bytes, as on a GPU) the last block of the
//!   current launch that accessed it with a plain load or store, and who and where (two `u64`s
//!   per word, made on the first plain access of a launch, side by side; buffers whose shadow
//!   would pass 4 × [`CROSS_BLOCK_MAX_BYTES`] are not covered).

use std::collections::{HashMap, VecDeque};
use std::panic::Location;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use device::emu::Site;

/// Freed allocations remembered for use-after-free reports.
pub const FREED_KEPT: usize = 4096;
/// Buffers up to this size get the cross-block race check (its shadow is 4× the buffer; 8× or
/// 16× for 2- or 1-byte elements, whose buffers get it up to a half or a quarter of this).
pub const CROSS_BLOCK_MAX_BYTES: usize = 1 << 28;

/// Where a device allocation is and what it holds: what a report says about a buffer.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    /// Host address of byte 0 (256-byte aligned).
    pub start: usize,
    /// Bytes.
    pub bytes: usize,
    /// Bytes per element of the buffer's type.
    pub elem: usize,
    /// Where the host allocated it.
    pub origin: &'static Location<'static>,
}

impl Span {
    /// One past the last byte.
    pub fn end(&self) -> usize {
        self.start + self.bytes
    }

    /// `a buffer of 128 × 4-byte elements (512 bytes) at 0x…, allocated at file:line`.
    pub fn describe(&self) -> String {
        let origin = super::site_line(self.origin);
        if self.elem > 0 && self.bytes.is_multiple_of(self.elem) {
            format!(
                "a buffer of {} × {}-byte elements ({} bytes) at {:#x}, allocated at {origin}",
                self.bytes / self.elem,
                self.elem,
                self.bytes,
                self.start
            )
        } else {
            format!("a buffer of {} bytes at {:#x}, allocated at {origin}", self.bytes, self.start)
        }
    }

    /// `element 7` where byte offset `offset` starts an element, else `byte offset 30`.
    pub fn element(&self, offset: usize) -> String {
        element_at(offset, self.elem)
    }

    /// `element 7 of a buffer of …`: where `addr` (inside the buffer) is.
    pub fn place(&self, addr: usize) -> String {
        format!("{} of {}", self.element(addr - self.start), self.describe())
    }
}

/// Where byte offset `offset` is in memory of `elem`-byte elements (0: not known): `element 7`
/// where it starts one, else `byte offset 30`. Global buffers and shared arrays are named alike.
pub(super) fn element_at(offset: usize, elem: usize) -> String {
    if elem > 0 && offset.is_multiple_of(elem) {
        format!("element {}", offset / elem)
    } else {
        format!("byte offset {offset}")
    }
}

/// One device allocation of the emulator.
pub struct Alloc {
    /// Where it is.
    pub span: Span,
    /// One bit per 4-byte word: written since allocation.
    init: Box<[AtomicU64]>,
    /// Cross-block race shadow, made on first use.
    cross: OnceLock<CrossShadow>,
    /// The generation of the last launch that was given it as a writable parameter (the
    /// race checks track it in that launch only).
    pub written_in: AtomicU16,
}

impl std::ops::Deref for Alloc {
    type Target = Span;
    fn deref(&self) -> &Span {
        &self.span
    }
}

impl Alloc {
    fn words(&self) -> usize {
        self.bytes.div_ceil(4)
    }

    /// Marks bytes `[from, to)` (offsets) as written.
    pub fn mark_init(&self, from: usize, to: usize) {
        let (first, last) = (from / 4, to.div_ceil(4).min(self.words()));
        let mut w = first;
        while w < last {
            let (slot, bit) = (w / 64, w % 64);
            if bit == 0 && w + 64 <= last {
                self.init[slot].store(u64::MAX, Ordering::Relaxed);
                w += 64;
                continue;
            }
            let b = 1u64 << bit;
            if self.init[slot].load(Ordering::Relaxed) & b == 0 {
                self.init[slot].fetch_or(b, Ordering::Relaxed);
            }
            w += 1;
        }
    }

    /// The first offset in `[from, to)` whose word was never written, if any.
    pub fn first_uninit(&self, from: usize, to: usize) -> Option<usize> {
        (from / 4..to.div_ceil(4).min(self.words()))
            .find(|&w| self.init[w / 64].load(Ordering::Relaxed) & (1 << (w % 64)) == 0)
            .map(|w| (w * 4).max(from))
    }

    /// Copies the initialised bits of `src`'s bytes `[from, from + bytes)` onto this
    /// allocation's first `bytes` (a device-to-device copy carries initialisation with the
    /// data); `from` is a multiple of 4 (elements are 4 or 8 bytes).
    pub fn copy_init_from(&self, src: &Alloc, from: usize, bytes: usize) {
        let first = from / 4;
        let words = bytes.div_ceil(4).min(self.words()).min(src.words().saturating_sub(first));
        if first == 0 {
            // Whole 64-word slots at once, then the bits of the last, partial one.
            for slot in 0..words / 64 {
                self.init[slot].store(src.init[slot].load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        let start = if first == 0 { words / 64 * 64 } else { 0 };
        for w in start..words {
            let s = first + w;
            let b = 1u64 << (w % 64);
            if src.init[s / 64].load(Ordering::Relaxed) & (1 << (s % 64)) != 0 {
                self.init[w / 64].fetch_or(b, Ordering::Relaxed);
            } else {
                self.init[w / 64].fetch_and(!b, Ordering::Relaxed);
            }
        }
    }

    fn cross(&self) -> Option<&CrossShadow> {
        if self.bytes / self.granule() * 4 > CROSS_BLOCK_MAX_BYTES {
            return None;
        }
        Some(self.cross.get_or_init(|| CrossShadow::new(self.bytes.div_ceil(self.granule()))))
    }

    /// Bytes per cell of the cross-block shadow: 4, or the element for 1- and 2-byte elements.
    fn granule(&self) -> usize {
        granule(self.elem)
    }
}

/// The allocations of one emulator (shared by its clones: they are one device).
pub struct DeviceMemory {
    live: RwLock<Vec<Arc<Alloc>>>,
    freed: Mutex<VecDeque<Span>>,
    /// Launch generation for the cross-block shadow (never 0).
    generation: AtomicU16,
}

impl Default for DeviceMemory {
    fn default() -> Self {
        Self { live: RwLock::new(Vec::new()), freed: Mutex::new(VecDeque::new()), generation: AtomicU16::new(0) }
    }
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceMemory({} live allocations)", self.live.read().unwrap().len())
    }
}

impl DeviceMemory {
    /// Registers `bytes` bytes at `start` (elements of `elem` bytes) allocated at `origin`;
    /// `initialised` when the host filled them (zeroes count).
    pub fn register(
        &self,
        start: usize,
        bytes: usize,
        elem: usize,
        origin: &'static Location<'static>,
        initialised: bool,
    ) -> Arc<Alloc> {
        let words = bytes.div_ceil(4);
        let fill = if initialised { u64::MAX } else { 0 };
        let init = (0..words.div_ceil(64)).map(|_| AtomicU64::new(fill)).collect();
        let alloc = Arc::new(Alloc {
            span: Span { start, bytes, elem, origin },
            init,
            cross: OnceLock::new(),
            written_in: AtomicU16::new(0),
        });
        let mut live = self.live.write().unwrap();
        let at = live.partition_point(|a| a.start < start);
        live.insert(at, alloc.clone());
        // The address may be a freed one's again: it is live now.
        self.freed.lock().unwrap().retain(|f| f.start + f.bytes <= start || start + bytes <= f.start);
        alloc
    }

    /// Forgets `alloc` (the host freed it), remembering it as freed.
    pub fn unregister(&self, alloc: &Arc<Alloc>) {
        self.live.write().unwrap().retain(|a| !Arc::ptr_eq(a, alloc));
        let mut freed = self.freed.lock().unwrap();
        if freed.len() == FREED_KEPT {
            freed.pop_front();
        }
        freed.push_back(alloc.span);
    }

    /// The live allocations and the launch generation, for one launch.
    pub fn snapshot(&self) -> Snapshot {
        let mut generation = self.generation.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        if generation == 0 {
            // Wrapped: shadows may hold every generation; start them over.
            generation = self.generation.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            for a in self.live.read().unwrap().iter() {
                if let Some(c) = a.cross.get() {
                    c.clear();
                }
            }
        }
        let live = self.live.read().unwrap().clone();
        Snapshot {
            ranges: live.iter().map(|a| (a.start, a.end())).collect(),
            live,
            freed: self.freed.lock().unwrap().iter().copied().collect(),
            generation,
        }
    }

    /// The live allocation holding `addr`, if any (for the host's own copies).
    pub fn find(&self, addr: usize) -> Option<Arc<Alloc>> {
        let live = self.live.read().unwrap();
        let at = live.partition_point(|a| a.start <= addr);
        at.checked_sub(1).map(|i| live[i].clone()).filter(|a| addr < a.start + a.bytes)
    }
}

/// What a launch sees of device memory.
pub struct Snapshot {
    /// `(start, end)` of each live allocation, sorted: what the search reads.
    ranges: Vec<(usize, usize)>,
    live: Vec<Arc<Alloc>>,
    freed: Vec<Span>,
    /// This launch's generation in the cross-block shadows.
    pub generation: u16,
}

/// Why a global access was refused.
pub enum Refusal {
    /// Not inside any live allocation; says where it is against the nearest one.
    OutOfBounds(String),
    /// Inside an allocation that was freed; says where in it.
    AfterFree(String),
    /// The address is not a multiple of the access's alignment.
    Misaligned {
        /// The alignment the access needs.
        align: usize,
        /// Where it is in its buffer.
        place: String,
    },
}

impl Snapshot {
    /// The live allocation holding `addr`, if any (`hint` as for [`check`](Self::check)).
    pub fn holder(&self, addr: usize, hint: &std::cell::Cell<usize>) -> Option<&Alloc> {
        let h = hint.get();
        if let Some(&(start, end)) = self.ranges.get(h)
            && start <= addr
            && addr < end
        {
            return Some(&*self.live[h]);
        }
        let at = self.ranges.partition_point(|&(start, _)| start <= addr);
        let i = at.checked_sub(1).filter(|&i| addr < self.ranges[i].1)?;
        hint.set(i);
        Some(&*self.live[i])
    }

    /// The live allocation holding all of `[addr, addr + bytes)`, or why none does.
    /// `hint` is the index of the allocation the caller's last access hit (updated here): a
    /// thread's accesses mostly stay in one buffer.
    #[inline]
    pub fn check(&self, addr: usize, bytes: usize, hint: &std::cell::Cell<usize>) -> Result<&Alloc, Refusal> {
        let h = hint.get();
        let at = match self.ranges.get(h) {
            Some(&(start, end)) if start <= addr && addr < end => h + 1,
            _ => self.ranges.partition_point(|&(start, _)| start <= addr),
        };
        let holder = at.checked_sub(1).filter(|&i| addr < self.ranges[i].1);
        if let Some(i) = holder
            && addr + bytes <= self.ranges[i].1
        {
            hint.set(i);
            let a = &*self.live[i];
            let align = bytes.clamp(1, 16);
            if !addr.is_multiple_of(align) {
                let place = format!("byte offset {} of {}", addr - a.start, a.describe());
                return Err(Refusal::Misaligned { align, place });
            }
            return Ok(a);
        }
        let holder = holder.map(|i| &*self.live[i]);
        if holder.is_none()
            && let Some(f) = self.freed.iter().rev().find(|f| f.start <= addr && addr < f.end())
        {
            return Err(Refusal::AfterFree(format!("{}, and freed before this launch", f.place(addr))));
        }
        Err(Refusal::OutOfBounds(self.nearest(addr, bytes, holder, at)))
    }

    /// Where an invalid access lies against the nearest live buffer: past its end or before
    /// its start, in bytes (compute-sanitizer's "N bytes after the nearest allocation").
    fn nearest(&self, addr: usize, bytes: usize, holder: Option<&Alloc>, at: usize) -> String {
        let past_end = |a: &Span| {
            let offset = addr - a.start;
            if addr < a.end() {
                let over = addr + bytes - a.end();
                format!(
                    "{}, whose {bytes}-byte access runs {over} bytes past the end of {}",
                    a.element(offset),
                    a.describe()
                )
            } else {
                format!("{}, {} bytes past the end of {}", a.element(offset), addr - a.end(), a.describe())
            }
        };
        if let Some(a) = holder {
            return past_end(a);
        }
        let before = at.checked_sub(1).map(|i| &self.live[i].span);
        let after = self.live.get(at).map(|a| &a.span);
        match (before, after) {
            (Some(b), Some(a)) if addr - b.end() <= a.start - addr => past_end(b),
            (Some(b), None) => past_end(b),
            (_, Some(a)) => format!("{} bytes before the start of {}", a.start - addr, a.describe()),
            (None, None) => "no device buffer is live".into(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Cross-block races

/// Per 4-byte word: the last plain access of this launch by another block than the current
/// one's, as `generation | state << 16 | block << 18 | releases << 48`, and who and where as
/// `site address << 16 | thread`.
struct CrossShadow(Box<[CrossCell]>);

/// The two halves of one word's cross-block record, side by side (one cache line).
#[repr(C, align(16))]
struct CrossCell {
    word: AtomicU64,
    who: AtomicU64,
}

/// A word read by one block of this launch.
const READ: u64 = 1;
/// A word written by one block of this launch.
const WRITTEN: u64 = 2;
/// A word read by several blocks (none wrote it).
const SHARED_READ: u64 = 3;
/// Blocks above this linear index are not tracked across blocks.
pub const CROSS_BLOCK_MAX_BLOCKS: u64 = 1 << 30;

impl CrossCell {
    /// The other side of a hazard on this word: its last plain access, by block `owner`.
    fn side(&self, owner: u64, state: u64) -> CrossSide {
        let other = self.who.load(Ordering::Relaxed);
        let other_site = other >> 16;
        CrossSide {
            block: owner,
            thread: (other_site != 0).then_some((other & 0xffff) as u32),
            // SAFETY: a non-zero site address was stored from a `&'static Location`.
            site: (other_site != 0).then(|| unsafe { &*(other_site as *const Location<'static>) }),
            wrote: state == WRITTEN,
        }
    }
}

impl CrossShadow {
    fn new(words: usize) -> Self {
        Self((0..words).map(|_| CrossCell { word: AtomicU64::new(0), who: AtomicU64::new(0) }).collect())
    }

    fn clear(&self) {
        for c in self.0.iter() {
            c.word.store(0, Ordering::Relaxed);
        }
    }
}

/// Bytes per cross-block shadow cell for elements of `elem` bytes: a 4-byte word, or one
/// element of 1 or 2 bytes (neighbouring bytes are no race between blocks, as on a GPU).
fn granule(elem: usize) -> usize {
    match elem {
        0 | 4.. => 4,
        e => e,
    }
}

/// One side of a hazard between two blocks.
pub struct CrossSide {
    /// The block's linear index.
    pub block: u64,
    /// The thread, when recorded.
    pub thread: Option<u32>,
    /// Where, when recorded.
    pub site: Option<Site>,
    /// A store?
    pub wrote: bool,
}

/// A plain access `[addr, addr + bytes)` of `alloc` by thread `thread` of block `block` at
/// `site`, in the launch of generation `generation`: the other block's access it races with,
/// if any. `ordered(x, releases)` says whether this block has acquired what block `x`
/// released after its access (`releases` = block x's release count at that access).
#[allow(clippy::too_many_arguments)]
pub fn cross_block(
    alloc: &Alloc,
    addr: usize,
    bytes: usize,
    write: bool,
    generation: u16,
    me: (u64, u32, Site, u32),
    ordered: impl Fn(u64, u32) -> bool,
) -> Option<CrossSide> {
    let (block, thread, site, releases) = me;
    if block >= CROSS_BLOCK_MAX_BLOCKS {
        return None;
    }
    let shadow = alloc.cross()?;
    let generation = u64::from(generation);
    let mine = |state: u64| generation | state << 16 | block << 18 | u64::from(releases.min(0xffff)) << 48;
    let who = ((site as *const _ as u64) << 16) | u64::from(thread & 0xffff);
    let g = alloc.granule();
    let first = (addr - alloc.start) / g;
    let last = (addr + bytes - alloc.start).div_ceil(g);
    for w in first..last {
        let cell = &shadow.0[w];
        // A plain load and store, not a compare-and-swap: a worker runs one block at a time,
        // and two blocks that touch one word at the same instant are racing anyway (one of the
        // two records may then be lost: the check keeps the last access of each word).
        let cur = cell.word.load(Ordering::Relaxed);
        let (state, owner, rel) = ((cur >> 16) & 3, (cur >> 18) & (CROSS_BLOCK_MAX_BLOCKS - 1), (cur >> 48) as u32);
        let next = if cur & 0xffff != generation || state == 0 {
            // The first plain access of this launch.
            mine(if write { WRITTEN } else { READ })
        } else if !write && state != WRITTEN {
            // Reads after reads never race; the latest reader is remembered.
            if owner == block {
                continue;
            }
            mine(SHARED_READ)
        } else if owner == block {
            // After this block's own access: a write after its write (same releases) or a read
            // after its write changes nothing. A write after reads by several blocks, this one
            // last, cannot name the others: not checked.
            if !write || (state == WRITTEN && rel == releases.min(0xffff)) {
                continue;
            }
            mine(WRITTEN)
        } else if ordered(owner, rel) {
            mine(if write { WRITTEN } else { READ })
        } else {
            return Some(cell.side(owner, state));
        };
        cell.word.store(next, Ordering::Relaxed);
        cell.who.store(who, Ordering::Relaxed);
    }
    None
}

/// An atomic access `[addr, addr + bytes)` of `alloc` by block `block` in the launch of
/// generation `generation`: the other block's plain access it races with, if any. Atomics never
/// race with each other, but an atomic and a plain access of another block do unless a release
/// and an acquire order them (`ordered`, as for [`cross_block`]): the last-block finish whose
/// writer stores its partial and takes its ticket with no fence between, read back by the last
/// block with `ld.relaxed`. Nothing is recorded: the shadow keeps plain accesses only.
pub fn cross_block_atomic(
    alloc: &Alloc,
    addr: usize,
    bytes: usize,
    write: bool,
    generation: u16,
    block: u64,
    ordered: impl Fn(u64, u32) -> bool,
) -> Option<CrossSide> {
    if block >= CROSS_BLOCK_MAX_BLOCKS {
        return None;
    }
    // No plain access of this launch made the shadow: nothing to race with.
    let shadow = alloc.cross.get()?;
    let generation = u64::from(generation);
    let g = alloc.granule();
    let first = (addr - alloc.start) / g;
    let last = (addr + bytes - alloc.start).div_ceil(g);
    for cell in &shadow.0[first..last] {
        let cur = cell.word.load(Ordering::Relaxed);
        let (state, owner, rel) = ((cur >> 16) & 3, (cur >> 18) & (CROSS_BLOCK_MAX_BLOCKS - 1), (cur >> 48) as u32);
        if cur & 0xffff != generation || state == 0 || owner == block || (state != WRITTEN && !write) {
            continue;
        }
        if !ordered(owner, rel) {
            return Some(cell.side(owner, state));
        }
    }
    None
}

/// Per block, the release count of that block it has acquired (a map that costs nothing to
/// make: every emulated thread has one).
pub type Known = HashMap<u64, u32, std::hash::BuildHasherDefault<super::race::WordHasher>>;

/// What the atomics of one launch published: per word, for each block that released into it,
/// its release count at that time (the join of every release into the word).
#[derive(Default)]
pub struct SyncWords(Mutex<HashMap<usize, HashMap<u64, u32>>>);

impl SyncWords {
    /// Block `block` released into the word at `addr` with release count `releases`.
    pub fn publish(&self, addr: usize, block: u64, releases: u32) {
        let mut words = self.0.lock().unwrap();
        let known = words.entry(addr).or_default().entry(block).or_insert(0);
        *known = (*known).max(releases);
    }

    /// Joins what was released into `addr` into `into`.
    pub fn acquire(&self, addr: usize, into: &mut Known) {
        let words = self.0.lock().unwrap();
        if let Some(w) = words.get(&addr) {
            for (&b, &r) in w {
                let k = into.entry(b).or_insert(0);
                *k = (*k).max(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two blocks storing neighbouring bytes of one word race only where the buffer's elements
    /// are words: a `u8` buffer's neighbouring elements are apart (as on a GPU), the same byte
    /// is not.
    #[test]
    fn the_cross_block_shadow_keeps_narrow_elements_apart() {
        assert_eq!((granule(1), granule(2), granule(4), granule(8), granule(0)), (1, 2, 4, 4, 4));
        let site = Location::caller();
        let memory = DeviceMemory::default();
        let races = |elem: usize, second: usize| {
            let alloc = memory.register(1 << 20, 64, elem, site, true);
            let store = |block: u64, addr: usize| {
                cross_block(&alloc, addr, 1, true, 1, (block, 0, site, 0), |_, _| false).is_some()
            };
            let first = store(0, alloc.start);
            let raced = store(1, alloc.start + second);
            memory.unregister(&alloc);
            (first, raced)
        };
        assert_eq!(races(1, 1), (false, false), "bytes 0 and 1 of a u8 buffer");
        assert_eq!(races(1, 0), (false, true), "byte 0 of a u8 buffer twice");
        assert_eq!(races(2, 2), (false, false), "elements 0 and 1 of a u16 buffer");
        assert_eq!(races(4, 1), (false, true), "bytes 0 and 1 of one element of a u32 buffer");
    }
}
