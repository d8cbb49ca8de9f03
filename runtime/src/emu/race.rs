//! racecheck inside a block: hazards between two threads of one block on the same bytes, in
//! shared or global memory, that nothing orders.
//!
//! **What orders two accesses of a block.** A *barrier interval* is the stretch between two
//! `sync_threads` of the block: accesses in different intervals never race. Within one
//! interval, two accesses of the same thread are ordered (program order); two threads of the
//! same warp are ordered by a warp-synchronising operation between the accesses that names both
//! lanes in its mask (`__syncwarp`, and every `.sync` shuffle, vote and `redux`), tracked with
//! a vector clock per lane over the 32 lanes of its warp; threads of different warps are not
//! ordered within an interval. Two atomic accesses never race. Warps are **not** assumed to run
//! in lock step, as none do since Volta: the book's warp-synchronous last warp without
//! `__syncwarp` races here, as it does on the hardware.
//!
//! **Beyond warps and block barriers.** A named barrier (`bar.sync id, count`) orders the
//! threads that meet at it, and an `mbarrier` orders every arrival of a phase before every wait
//! that sees the phase complete (an arrival releases, a completed wait acquires). Both are
//! tracked with a second vector clock per thread over every thread of the block, allocated only
//! for a thread that acquires something that way (most kernels never do). The bytes a bulk copy
//! lands count as stores of a *copy engine*, one pseudo-thread per `mbarrier` (numbered after
//! the block's threads), whose clock the barrier's phase publishes: a thread that reads them
//! without having waited for that phase races with the engine.
//!
//! **A hazard** is a store and another access (load or store) of the same word by two different
//! threads, in one interval, unordered, not both atomic: read after write, write after read,
//! write after write. The first one found stops the launch, so each is reported once, with both
//! sides (thread, `file:line`, load or store).
//!
//! Per 4-byte word the block keeps its last store and the loads since, stamped with the interval
//! they belong to (per byte, once an access narrower than the word touched it in the interval: a
//! byte or 16-bit store beside another thread's is no hazard, as on a GPU): 32 bytes per word
//! touched in the interval, in an open-addressing table keyed by address (linear probing;
//! neighbouring words land in neighbouring slots). A new stamp at every barrier and block start
//! empties the table at once without clearing it, so a worker reuses the same table, warm in its
//! caches, from interval to interval and block to block. A word read by several threads in one
//! interval keeps its readers in a side table. An interval that touches more than
//! [`MAX_SLOTS`]` / 2` words (16 MiB of memory) starts its table over: hazards between accesses
//! on both sides of that point are not seen.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use device::emu::{Access, Site};

/// Slots of a new table (4096 words, the interval of a block of 1024 threads × 4 words).
const FIRST_SLOTS: usize = 1 << 13;
/// The most slots a table grows to (8 Mi: 256 MiB of table for 16 MiB of memory touched).
pub const MAX_SLOTS: usize = 1 << 23;
/// Slots a worker keeps between launches.
const KEPT_SLOTS: usize = 1 << 16;

/// One access, as the race check remembers it.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    /// The thread (linear index in the block).
    pub thread: u32,
    /// The thread's own clock when it made the access.
    clock: u32,
    /// Where.
    pub site: Site,
    /// An atomic access?
    pub atomic: bool,
}

/// The shadow of one word (20 bytes): its last store and its reader (or a mark that its
/// readers are in the side table), in the interval `stamp`. Sites are numbers in the
/// worker's site table.
#[derive(Clone, Copy, Default)]
struct Entry {
    stamp: u32,
    /// `thread + 1` of the last store (0: none), [`ATOMIC`] set for an atomic one.
    writer: u16,
    /// `thread + 1` of the reader since that store (0: none; [`MANY`]: several, in the side
    /// table), [`ATOMIC`] set for an atomic one.
    reader: u16,
    writer_clock: u32,
    reader_clock: u32,
    writer_site: u16,
    reader_site: u16,
    /// Is the word followed byte by byte in this interval (a narrower access touched it)? Its
    /// bytes' shadows are then the slots keyed `BYTE_KEY | address`, and this one is unused.
    split: bool,
}

const ATOMIC: u16 = 0x8000;
/// The key of a byte's own shadow (a word split by a narrower access): its address with this
/// bit set, which no word address has.
const BYTE_KEY: usize = 1 << 62;
const MANY: u16 = 0x7fff;

impl Entry {
    fn side(who: u16, clock: u32, site: u16, sites: &[Site]) -> Option<Side> {
        (who & !ATOMIC != 0).then(|| Side {
            thread: u32::from(who & !ATOMIC) - 1,
            clock,
            site: sites[site as usize],
            atomic: who & ATOMIC != 0,
        })
    }

    fn pack(side: &Side) -> u16 {
        (side.thread as u16 + 1) | if side.atomic { ATOMIC } else { 0 }
    }
}

/// A slot of the table: a word's address and its shadow (empty unless `entry.stamp` is the
/// current interval's).
#[derive(Clone, Copy, Default)]
struct Slot {
    word: usize,
    entry: Entry,
}

/// Two unordered accesses of one word, the earlier first.
#[derive(Clone, Copy, Debug)]
pub struct Hazard {
    /// The earlier access.
    pub earlier: Side,
    /// Was it a store?
    pub earlier_wrote: bool,
    /// The access that found the hazard.
    pub later: Side,
    /// Was it a store?
    pub later_wrote: bool,
}

impl Hazard {
    /// `read after write`, `write after read` or `write after write`.
    pub fn kind(&self) -> &'static str {
        match (self.earlier_wrote, self.later_wrote) {
            (true, false) => "read after write",
            (false, true) => "write after read",
            _ => "write after write",
        }
    }
}

/// The emulator's hash for its own integer keys (page numbers, word addresses, the counters'
/// warp × site × space tuples): one multiply per integer (FxHash's step). The keys are the
/// emulator's, not an attacker's, so SipHash's defence against chosen keys buys nothing (the
/// counting's maps used it, and it showed in `perf` profiles of a counted run).
#[derive(Default)]
pub struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.add(u64::from(b)));
    }
    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
}

type Fast<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// The race-check state of the block a worker runs (kept between blocks and launches for its
/// memory).
#[derive(Default)]
pub struct BlockRace {
    /// The current interval's stamp: unique over every block and interval this state served.
    stamp: u32,
    /// The open-addressing table (a power of two of slots).
    slots: Vec<Slot>,
    /// Slots of the current interval.
    live: usize,
    /// The most slots an interval of the current block used.
    peak: usize,
    /// The readers of words read by several threads in one interval: (stamp, readers).
    many: Fast<usize, (u32, Vec<Side>)>,
    /// Per thread, its lane's clocks of the 32 lanes of its warp.
    clocks: Vec<[u32; 32]>,
    /// Per thread, what it learnt of every thread's (and copy engine's) clock through named
    /// barriers and `mbarrier`s, indexed by thread (engines after the threads); empty until it
    /// learns anything that way.
    far: Vec<Vec<u32>>,
    /// Threads in the block.
    threads: usize,
    /// The copy engines' clocks (pseudo-thread `threads + k` is engine `k`).
    engines: Vec<u32>,
    /// One thread: nothing to race with.
    alone: bool,
    /// The site table: number → site, and back (with the last one looked up).
    sites: Vec<Site>,
    site_numbers: Fast<usize, u16>,
    last_site: Option<(usize, u16)>,
}

impl BlockRace {
    /// Starts a block of `threads` threads.
    pub fn reset(&mut self, threads: usize) {
        // A table grown for an earlier, larger block is cut back to what the last block
        // needed: a smaller table stays in the cache.
        let fits = (4 * self.peak).next_power_of_two().max(FIRST_SLOTS);
        if self.slots.len() > 2 * fits {
            self.slots = vec![Slot::default(); fits];
        }
        self.peak = 0;
        self.next_stamp();
        self.alone = threads == 1;
        self.clocks.clear();
        self.clocks.extend((0..threads).map(|t| {
            let mut c = [0u32; 32];
            c[t % 32] = 1;
            c
        }));
        self.far.iter_mut().for_each(Vec::clear);
        self.far.resize_with(threads, Vec::new);
        self.threads = threads;
        self.engines.clear();
    }

    /// Thread `me`'s knowledge of every clock: what it learnt through named barriers and
    /// `mbarrier`s, joined with its lane clocks (its own clock included).
    fn knowledge(&self, me: usize) -> Vec<u32> {
        let mut v = self.far[me].clone();
        let base = me / 32 * 32;
        let lanes = (self.threads - base).min(32);
        if v.len() < base + lanes {
            v.resize(base + lanes, 0);
        }
        for (k, c) in v[base..base + lanes].iter_mut().zip(&self.clocks[me]) {
            *k = (*k).max(*c);
        }
        v
    }

    /// A release by thread `me` (an `mbarrier` arrival): what it knows, to be published; its
    /// later accesses are not covered by it.
    pub fn release(&mut self, me: u32) -> Vec<u32> {
        let v = self.knowledge(me as usize);
        self.clocks[me as usize][(me % 32) as usize] += 1;
        v
    }

    /// An acquire by thread `me` (a wait that saw a phase complete) of what the phase published.
    pub fn acquire(&mut self, me: u32, published: &[u32]) {
        join(&mut self.far[me as usize], published);
    }

    /// The threads `members` met at a named barrier: each knows what any of them knew.
    pub fn named_barrier(&mut self, members: &[u32]) {
        let mut all = Vec::new();
        for &m in members {
            join(&mut all, &self.knowledge(m as usize));
        }
        for &m in members {
            join(&mut self.far[m as usize], &all);
            self.clocks[m as usize][(m % 32) as usize] += 1;
        }
    }

    /// Copy engine `engine` wrote the `bytes` bytes at `addr` (a bulk copy landed; `site` is
    /// where it was issued): recorded as the engine's stores, unchecked (the issuing thread's
    /// store was checked when it issued the copy). Returns the engine's pseudo-thread and the
    /// clock of these stores, for the `mbarrier` phase that publishes them.
    pub fn engine_write(&mut self, engine: usize, addr: usize, bytes: usize, site: Site) -> (usize, u32) {
        if self.engines.len() <= engine {
            self.engines.resize(engine + 1, 0);
        }
        self.engines[engine] += 1;
        let (thread, clock) = (self.threads + engine, self.engines[engine]);
        if !self.alone {
            let side = Side { thread: thread as u32, clock, site, atomic: false };
            self.record(addr, bytes, side, true, false);
        }
        (thread, clock)
    }

    /// Drops every page (their records are stale or may be lost).
    fn forget(&mut self) {
        self.slots.iter_mut().for_each(|s| s.entry.stamp = 0);
        self.live = 0;
        self.many.clear();
    }

    /// The number of `site` in the site table (a full table starts over, with every record).
    #[inline]
    fn site_number(&mut self, site: Site) -> u16 {
        let key = site as *const _ as usize;
        if let Some((k, n)) = self.last_site
            && k == key
        {
            return n;
        }
        if self.sites.len() > usize::from(u16::MAX) && !self.site_numbers.contains_key(&key) {
            self.forget();
            self.sites.clear();
            self.site_numbers.clear();
            self.next_stamp();
        }
        let sites = &mut self.sites;
        let n = *self.site_numbers.entry(key).or_insert_with(|| {
            sites.push(site);
            (sites.len() - 1) as u16
        });
        self.last_site = Some((key, n));
        n
    }

    /// Shrinks what is kept between launches.
    pub fn trim(&mut self) {
        if self.slots.len() > KEPT_SLOTS {
            self.slots = Vec::new();
            self.live = 0;
        }
        self.many.clear();
    }

    fn next_stamp(&mut self) {
        self.peak = self.peak.max(self.live);
        self.live = 0;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: an old page may hold any stamp.
            self.forget();
            self.stamp = 1;
        }
    }

    /// Every thread of the block passed a `sync_threads`: a new interval.
    pub fn barrier(&mut self) {
        self.next_stamp();
    }

    /// The lanes of `mask` in warp `warp` completed a warp-synchronising operation together.
    pub fn warp_sync(&mut self, warp: usize, mask: u32) {
        let base = warp * 32;
        let threads = self.clocks.len();
        let lanes = (0..32usize).filter(|l| mask & (1 << l) != 0 && base + l < threads);
        let mut joined = [0u32; 32];
        for l in lanes.clone() {
            for (j, c) in joined.iter_mut().zip(&self.clocks[base + l]) {
                *j = (*j).max(*c);
            }
        }
        if lanes.clone().any(|l| !self.far[base + l].is_empty()) {
            let mut far = Vec::new();
            for l in lanes.clone() {
                join(&mut far, &self.far[base + l]);
            }
            for l in lanes.clone() {
                self.far[base + l].clone_from(&far);
            }
        }
        for l in lanes {
            let c = &mut self.clocks[base + l];
            *c = joined;
            c[l] += 1;
        }
    }

    /// The slot of word address `word` in the current interval, made empty on first use.
    #[inline(always)]
    fn slot(&mut self, word: usize) -> usize {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); FIRST_SLOTS];
        }
        loop {
            let mask = self.slots.len() - 1;
            let mut i = home(word, mask);
            loop {
                let s = &mut self.slots[i];
                if s.entry.stamp != self.stamp {
                    break;
                }
                if s.word == word {
                    return i;
                }
                i = (i + 1) & mask;
            }
            if 2 * (self.live + 1) <= self.slots.len() {
                self.live += 1;
                self.slots[i] = Slot { word, entry: Entry { stamp: self.stamp, ..Entry::default() } };
                return i;
            }
            self.grow();
        }
    }

    /// Doubles the table (or, at [`MAX_SLOTS`], starts it over).
    fn grow(&mut self) {
        if self.slots.len() >= MAX_SLOTS {
            self.forget();
            return;
        }
        let bigger = vec![Slot::default(); 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.entry.stamp == self.stamp) {
            let mut i = home(s.word, mask);
            while self.slots[i].entry.stamp == self.stamp {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Thread `me` makes `access` to the `bytes` bytes at `addr` at `site`: the hazard it
    /// completes, if any (the access is recorded either way).
    pub fn access(&mut self, addr: usize, bytes: usize, access: Access, me: u32, site: Site) -> Option<Hazard> {
        if self.alone {
            return None;
        }
        let side =
            Side { thread: me, clock: self.clocks[me as usize][(me % 32) as usize], site, atomic: access.is_atomic() };
        self.record(addr, bytes, side, access.writes(), true)
    }

    /// Records `side`'s access (a store when `writes`) to the `bytes` bytes at `addr`; with
    /// `check`, returns the first hazard it completes. A word is followed whole until an access
    /// covers only part of it (a byte, a 16-bit value, an unaligned access); from then on, in
    /// this interval, byte by byte, so that two threads writing different bytes of one word do
    /// not race (they do not on a GPU) while a word-wide access still meets every byte's.
    fn record(&mut self, addr: usize, bytes: usize, side: Side, writes: bool, check: bool) -> Option<Hazard> {
        let number = self.site_number(side.site);
        let mut found = None;
        let (mut word, end) = (addr & !3, addr + bytes);
        while word < end {
            let i = self.slot(word);
            if !self.slots[i].entry.split && word >= addr && word + 4 <= end {
                self.record_at(i, word, (side, number), writes, check, &mut found);
            } else {
                let split = self.slots[i].entry.split;
                let bytes = (addr.max(word), end.min(word + 4));
                self.record_bytes((word, split), bytes, (side, number), writes, check, &mut found);
            }
            word += 4;
        }
        found
    }

    /// Records one access on slot `i`, the shadow keyed `key` (a word, or a byte of a split
    /// word); with `check` and no hazard `found` yet, the hazard it completes goes there.
    #[inline(always)]
    fn record_at(
        &mut self,
        i: usize,
        key: usize,
        (side, number): (Side, u16),
        writes: bool,
        check: bool,
        found: &mut Option<Hazard>,
    ) {
        let e = &mut self.slots[i].entry;
        if check && found.is_none() {
            let many = if e.reader == MANY { self.many.get(&key) } else { None };
            let order = Order { clocks: &self.clocks, far: &self.far, threads: self.threads };
            *found = hazard(&order, &self.sites, e, many, self.stamp, &side, writes);
        }
        if writes {
            (e.writer, e.writer_clock, e.writer_site) = (Entry::pack(&side), side.clock, number);
            e.reader = 0;
        } else {
            add_reader(e, &mut self.many, &self.sites, key, self.stamp, (side, number));
        }
    }

    /// Records an access to bytes `lo..hi` of the word at `word` (part of it, or all of a word
    /// already `split`) byte by byte, splitting the word first where it is not yet.
    #[cold]
    #[inline(never)]
    fn record_bytes(
        &mut self,
        (word, split): (usize, bool),
        (lo, hi): (usize, usize),
        side: (Side, u16),
        writes: bool,
        check: bool,
        found: &mut Option<Hazard>,
    ) {
        if !split {
            self.split(word);
        }
        for byte in lo..hi {
            let key = BYTE_KEY | byte;
            let at = self.slot(key);
            self.record_at(at, key, side, writes, check, found);
        }
    }

    /// Follows the word at `word` byte by byte from now on in this interval: each byte's shadow
    /// starts as the word's (its store, its readers).
    #[inline(never)]
    fn split(&mut self, word: usize) {
        let at = self.slot(word);
        let whole = self.slots[at].entry;
        let readers = if whole.reader == MANY { self.many.get(&word).cloned() } else { None };
        for byte in word..word + 4 {
            let key = BYTE_KEY | byte;
            let i = self.slot(key);
            self.slots[i].entry = Entry { split: false, ..whole };
            if let Some(r) = &readers {
                self.many.insert(key, r.clone());
            }
        }
        let i = self.slot(word);
        self.slots[i].entry.split = true;
    }
}

/// The first slot to try for word address `word` in a table of `mask + 1` slots: runs of 16
/// consecutive words keep consecutive slots (a thread or warp streaming through memory stays in
/// one stretch of the table), and the runs are scattered by a multiplicative hash, so that two
/// arrays whose addresses agree in their low bits do not pile up in one cluster.
#[inline]
fn home(word: usize, mask: usize) -> usize {
    let key = (word >> 2) as u64;
    let run = ((key >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize;
    ((run << 4) | (key & 15) as usize) & mask
}

/// Records `side` as a reader of `e` (the word at `word`).
#[inline(always)]
fn add_reader(
    e: &mut Entry,
    many: &mut Fast<usize, (u32, Vec<Side>)>,
    sites: &[Site],
    word: usize,
    stamp: u32,
    (side, number): (Side, u16),
) {
    let packed = Entry::pack(&side);
    if e.reader == 0 || e.reader & !ATOMIC == packed & !ATOMIC {
        (e.reader, e.reader_clock, e.reader_site) = (packed, side.clock, number);
        return;
    }
    let readers = many.entry(word).or_insert((stamp, Vec::new()));
    if e.reader != MANY {
        // The second reader: both go to the side table.
        readers.0 = stamp;
        readers.1.clear();
        readers.1.extend(Entry::side(e.reader, e.reader_clock, e.reader_site, sites));
        e.reader = MANY;
    }
    // Kept sorted by thread (threads mostly arrive in order, so this is mostly a push): a
    // word that a whole block reads costs a binary search per read, not a scan.
    match readers.1.binary_search_by_key(&side.thread, |s| s.thread) {
        Ok(i) => readers.1[i] = side,
        Err(i) => readers.1.insert(i, side),
    }
}

/// `a` joined with `b`, entry by entry (the longer length).
fn join(a: &mut Vec<u32>, b: &[u32]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// What orders two accesses: the lane clocks, the far clocks, and where the engines start.
struct Order<'a> {
    clocks: &'a [[u32; 32]],
    far: &'a [Vec<u32>],
    threads: usize,
}

/// Is `earlier` ordered before the current point of thread `me`?
fn ordered(order: &Order<'_>, earlier: &Side, me: u32) -> bool {
    let (t, m) = (earlier.thread as usize, me as usize);
    t == m
        || (t < order.threads && t / 32 == m / 32 && order.clocks[m][t % 32] >= earlier.clock)
        || order.far[m].get(t).is_some_and(|&c| c >= earlier.clock)
}

/// The hazard between the word's earlier accesses (`e`, and its readers in `many` when
/// several) and `side`'s, if any.
#[inline(always)]
fn hazard(
    order: &Order<'_>,
    sites: &[Site],
    e: &Entry,
    many: Option<&(u32, Vec<Side>)>,
    stamp: u32,
    side: &Side,
    writes: bool,
) -> Option<Hazard> {
    let races = |other: &Side| !(other.atomic && side.atomic) && !ordered(order, other, side.thread);
    if let Some(w) = Entry::side(e.writer, e.writer_clock, e.writer_site, sites).filter(|w| races(w)) {
        return Some(Hazard { earlier: w, earlier_wrote: true, later: *side, later_wrote: writes });
    }
    if !writes {
        return None;
    }
    let earlier = if e.reader == MANY {
        many.filter(|m| m.0 == stamp).and_then(|m| m.1.iter().find(|r| races(r)).copied())
    } else {
        Entry::side(e.reader, e.reader_clock, e.reader_site, sites).filter(|r| races(r))
    };
    earlier.map(|r| Hazard { earlier: r, earlier_wrote: false, later: *side, later_wrote: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        std::panic::Location::caller()
    }

    fn race(threads: usize) -> BlockRace {
        let mut r = BlockRace::default();
        r.reset(threads);
        r
    }

    #[test]
    fn two_threads_same_interval_race() {
        let mut r = race(64);
        assert!(r.access(0x100, 4, Access::Write, 1, site()).is_none());
        let h = r.access(0x100, 4, Access::Read, 0, site()).expect("read after write");
        assert_eq!((h.earlier.thread, h.later.thread, h.kind()), (1, 0, "read after write"));
        let mut r = race(64);
        assert!(r.access(0x100, 4, Access::Read, 0, site()).is_none());
        let h = r.access(0x100, 4, Access::Write, 40, site()).expect("write after read");
        assert_eq!((h.earlier.thread, h.later.thread, h.kind()), (0, 40, "write after read"));
    }

    #[test]
    fn barriers_and_warp_syncs_order() {
        let mut r = race(64);
        r.access(0x100, 4, Access::Write, 1, site());
        r.barrier();
        assert!(r.access(0x100, 4, Access::Read, 40, site()).is_none(), "a barrier orders every thread");
        r.access(0x200, 4, Access::Write, 5, site());
        r.warp_sync(0, u32::MAX);
        assert!(r.access(0x200, 4, Access::Read, 3, site()).is_none(), "__syncwarp orders its lanes");
        r.access(0x300, 4, Access::Write, 5, site());
        r.warp_sync(0, u32::MAX);
        assert!(r.access(0x300, 4, Access::Read, 40, site()).is_some(), "not another warp's lanes");
        r.access(0x400, 4, Access::Write, 6, site());
        r.warp_sync(0, 0x0000_00ff);
        assert!(r.access(0x400, 4, Access::Read, 7, site()).is_none(), "lanes 6 and 7 are in the mask");
        r.access(0x500, 4, Access::Write, 6, site());
        r.warp_sync(0, 0x0000_00ff);
        assert!(r.access(0x500, 4, Access::Read, 9, site()).is_some(), "lane 9 is not in the mask");
        // A write after the sync is not ordered by it.
        r.access(0x600, 4, Access::Write, 2, site());
        assert!(r.access(0x600, 4, Access::Read, 3, site()).is_some(), "no sync after the write");
    }

    #[test]
    fn atomics_do_not_race_with_atomics_and_vectors_cover_four_words() {
        let mut r = race(64);
        r.access(0x100, 4, Access::AtomicRmw, 1, site());
        assert!(r.access(0x100, 4, Access::AtomicRmw, 2, site()).is_none());
        assert!(r.access(0x100, 4, Access::Read, 3, site()).is_some(), "a plain load races with an atomic");
        let mut r = race(64);
        r.access(0x200, 16, Access::Write, 1, site());
        assert!(r.access(0x20c, 4, Access::Read, 2, site()).is_some(), "the fourth word of a 16-byte store");
        assert!(r.access(0x210, 4, Access::Read, 2, site()).is_none());
    }

    #[test]
    fn narrower_accesses_race_byte_by_byte() {
        // Two threads storing different bytes (or 16-bit halves) of one word: no hazard, as on
        // a GPU; the same byte twice, or a word-wide access over another thread's byte: one.
        let mut r = race(64);
        assert!(r.access(0x100, 1, Access::Write, 1, site()).is_none());
        assert!(r.access(0x101, 1, Access::Write, 40, site()).is_none(), "another byte of the word");
        assert!(r.access(0x102, 2, Access::Write, 2, site()).is_none(), "the other half");
        let h = r.access(0x101, 1, Access::Write, 3, site()).expect("the same byte twice");
        assert_eq!((h.earlier.thread, h.later.thread, h.kind()), (40, 3, "write after write"));
        let mut r = race(64);
        r.access(0x200, 2, Access::Write, 1, site());
        r.access(0x202, 2, Access::Write, 2, site());
        let h = r.access(0x200, 4, Access::Read, 5, site()).expect("a word over two threads' halves");
        assert_eq!((h.earlier.thread, h.kind()), (1, "read after write"));
        // A word stored whole, then split by a byte load of another thread: the store is each
        // byte's; its readers too.
        let mut r = race(64);
        r.access(0x300, 4, Access::Write, 1, site());
        assert!(r.access(0x303, 1, Access::Read, 40, site()).is_some(), "each byte keeps the word's store");
        let mut r = race(64);
        r.access(0x400, 4, Access::Read, 1, site());
        r.access(0x400, 4, Access::Read, 40, site());
        assert!(r.access(0x401, 1, Access::Write, 1, site()).is_some(), "thread 40's read of the word");
        // Unaligned: a 4-byte access over two words splits both; a barrier forgets the split.
        let mut r = race(64);
        r.access(0x502, 4, Access::Write, 1, site());
        assert!(r.access(0x500, 2, Access::Write, 2, site()).is_none());
        assert!(r.access(0x506, 2, Access::Write, 2, site()).is_none());
        assert!(r.access(0x505, 1, Access::Read, 2, site()).is_some(), "byte 5 is thread 1's");
        r.barrier();
        assert!(r.access(0x500, 4, Access::Write, 3, site()).is_none());
        assert!(r.access(0x500, 4, Access::Read, 3, site()).is_none());
    }

    #[test]
    fn many_readers_are_all_checked() {
        let mut r = race(64);
        r.access(0x100, 4, Access::Read, 1, site());
        r.access(0x100, 4, Access::Read, 40, site());
        r.access(0x100, 4, Access::Read, 2, site());
        r.warp_sync(0, u32::MAX);
        // Threads 1 and 2 are ordered before thread 3 by the warp sync; thread 40 is not.
        let h = r.access(0x100, 4, Access::Write, 3, site()).expect("write after thread 40's read");
        assert_eq!((h.earlier.thread, h.later.thread, h.kind()), (40, 3, "write after read"));
    }

    #[test]
    fn named_barriers_and_mbarriers_order_across_warps() {
        let mut r = race(96);
        r.access(0x100, 4, Access::Write, 33, site());
        r.named_barrier(&(32..96).collect::<Vec<_>>());
        assert!(r.access(0x100, 4, Access::Read, 70, site()).is_none(), "both met at the named barrier");
        r.access(0x200, 4, Access::Write, 33, site());
        r.named_barrier(&(32..96).collect::<Vec<_>>());
        assert!(r.access(0x200, 4, Access::Read, 0, site()).is_some(), "thread 0 was not at the named barrier");
        // An arrival releases, a completed wait acquires; what follows the arrival is not covered.
        r.access(0x300, 4, Access::Write, 40, site());
        let published = r.release(40);
        r.access(0x304, 4, Access::Write, 40, site());
        r.acquire(5, &published);
        assert!(r.access(0x300, 4, Access::Read, 5, site()).is_none(), "written before the arrival");
        assert!(r.access(0x304, 4, Access::Read, 5, site()).is_some(), "written after the arrival");
        // What thread 5 acquired, its warp learns at a __syncwarp.
        r.access(0x308, 4, Access::Write, 41, site());
        let published = r.release(41);
        r.acquire(5, &published);
        r.warp_sync(0, u32::MAX);
        assert!(r.access(0x308, 4, Access::Read, 6, site()).is_none(), "transitively, through the warp sync");
    }

    #[test]
    fn a_copy_engine_s_stores_are_ordered_by_the_phase_only() {
        let mut r = race(64);
        let (engine, clock) = r.engine_write(0, 0x400, 16, site());
        assert_eq!((engine, clock), (64, 1));
        let h = r.access(0x404, 4, Access::Read, 3, site()).expect("no wait: a race with the engine");
        assert_eq!((h.earlier.thread, h.kind()), (64, "read after write"));
        let mut phase = vec![0; engine + 1];
        phase[engine] = clock;
        r.acquire(40, &phase);
        assert!(r.access(0x408, 4, Access::Read, 40, site()).is_none(), "the waiter saw the phase");
    }

    #[test]
    fn the_table_grows_and_a_barrier_empties_it() {
        let mut r = race(64);
        for w in 0..100_000usize {
            assert!(r.access(0x10_0000 + 4 * w, 4, Access::Write, 0, site()).is_none());
        }
        for w in (0..100_000usize).step_by(997) {
            let h = r.access(0x10_0000 + 4 * w, 4, Access::Read, 33, site()).expect("every word still recorded");
            assert_eq!((h.earlier.thread, h.kind()), (0, "read after write"));
        }
        r.barrier();
        assert!(r.access(0x10_0000, 4, Access::Write, 33, site()).is_none(), "a new interval");
    }
}
