//! racecheck inside a block: hazards between two threads of one block on the same 4-byte word,
//! in shared or global memory, that nothing orders.
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
//! **A hazard** is a store and another access (load or store) of the same word by two different
//! threads, in one interval, unordered, not both atomic: read after write, write after read,
//! write after write. The first one found stops the launch, so each is reported once, with both
//! sides (thread, `file:line`, load or store).
//!
//! Per 4-byte word the block keeps its last store and the loads since, stamped with the
//! interval they belong to, in a shadow of 32 bytes per word: pages of [`PAGE_WORDS`] words
//! looked up by address (the last page is remembered, so a thread streaming through a buffer
//! finds its page without a lookup). A word read by several threads in one interval keeps its
//! readers in a side table. Stamps make the shadow of a finished interval or block stale
//! without clearing it, so a worker reuses its pages from block to block and launch to launch.
//! A block that touches more than [`MAX_PAGES`] pages (a footprint of 64 MiB) starts its
//! shadow over: hazards between accesses on both sides of that point are not seen.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use kernels::device::emu::{Access, Site};

/// Words per shadow page (4 KiB of memory, 32 KiB of shadow).
pub const PAGE_WORDS: usize = 1024;
/// Pages a worker keeps before it starts its shadow over.
pub const MAX_PAGES: usize = 16 * 1024;
/// Pages a worker keeps between launches.
const KEPT_PAGES: usize = 1024;

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
    atomic: bool,
}

/// The shadow of one word: its last store and its reader (or a mark that its readers are in
/// the side table), in the interval `stamp`.
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
    writer_site: Option<Site>,
    reader_site: Option<Site>,
}

const ATOMIC: u16 = 0x8000;
const MANY: u16 = 0x7fff;

impl Entry {
    fn side(who: u16, clock: u32, site: Option<Site>) -> Option<Side> {
        let site = site?;
        (who & !ATOMIC != 0).then_some(Side {
            thread: u32::from(who & !ATOMIC) - 1,
            clock,
            site,
            atomic: who & ATOMIC != 0,
        })
    }

    fn pack(side: &Side) -> u16 {
        (side.thread as u16 + 1) | if side.atomic { ATOMIC } else { 0 }
    }
}

type Page = Box<[Entry; PAGE_WORDS]>;

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

/// A fast hash for page numbers and word addresses.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, x: usize) {
        self.0 = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Fast<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// The race-check state of the block a worker runs (kept between blocks and launches for its
/// memory).
#[derive(Default)]
pub struct BlockRace {
    /// The current interval's stamp: unique over every block and interval this state served.
    stamp: u32,
    /// Page number (address / 4 / PAGE_WORDS) → index in `pages`.
    index: Fast<usize, u32>,
    pages: Vec<Page>,
    /// The last page used: (page number, index).
    last: Option<(usize, u32)>,
    /// The readers of words read by several threads in one interval: (stamp, readers).
    many: Fast<usize, (u32, Vec<Side>)>,
    /// Per thread, its lane's clocks of the 32 lanes of its warp.
    clocks: Vec<[u32; 32]>,
    /// One thread: nothing to race with.
    alone: bool,
}

impl BlockRace {
    /// Starts a block of `threads` threads.
    pub fn reset(&mut self, threads: usize) {
        if self.pages.len() > MAX_PAGES {
            self.forget();
        }
        self.next_stamp();
        self.alone = threads == 1;
        self.clocks.clear();
        self.clocks.extend((0..threads).map(|t| {
            let mut c = [0u32; 32];
            c[t % 32] = 1;
            c
        }));
    }

    /// Drops every page (their records are stale or may be lost).
    fn forget(&mut self) {
        self.index.clear();
        self.pages.clear();
        self.last = None;
        self.many.clear();
    }

    /// Shrinks what is kept between launches.
    pub fn trim(&mut self) {
        if self.pages.len() > KEPT_PAGES {
            self.forget();
            self.pages.shrink_to_fit();
            self.index.shrink_to_fit();
        }
        self.many.clear();
    }

    fn next_stamp(&mut self) {
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
        for l in lanes {
            let c = &mut self.clocks[base + l];
            *c = joined;
            c[l] += 1;
        }
    }

    /// The shadow page of word address `word` (a multiple of 4), made on first use.
    #[inline]
    fn page(&mut self, number: usize) -> u32 {
        if let Some((n, i)) = self.last
            && n == number
        {
            return i;
        }
        if self.pages.len() >= MAX_PAGES && !self.index.contains_key(&number) {
            // A footprint past the cap: start over (records of this interval are lost).
            self.forget();
        }
        let pages = &mut self.pages;
        let i = *self.index.entry(number).or_insert_with(|| {
            pages.push(Box::new([Entry::default(); PAGE_WORDS]));
            (pages.len() - 1) as u32
        });
        self.last = Some((number, i));
        i
    }

    /// Thread `me` makes `access` to the `bytes` bytes at `addr` at `site`: the hazard it
    /// completes, if any (the access is recorded either way).
    pub fn access(&mut self, addr: usize, bytes: usize, access: Access, me: u32, site: Site) -> Option<Hazard> {
        if self.alone {
            return None;
        }
        let side =
            Side { thread: me, clock: self.clocks[me as usize][(me % 32) as usize], site, atomic: access.is_atomic() };
        let writes = access.writes();
        let mut found = None;
        let mut word = addr & !3;
        while word < addr + bytes {
            let number = word / 4 / PAGE_WORDS;
            let page = self.page(number) as usize;
            let e = &mut self.pages[page][word / 4 % PAGE_WORDS];
            if e.stamp != self.stamp {
                *e = Entry { stamp: self.stamp, ..Entry::default() };
            }
            if found.is_none() {
                found = hazard(&self.clocks, e, self.many.get(&word), self.stamp, &side, writes);
            }
            if writes {
                e.writer = Entry::pack(&side);
                e.writer_clock = side.clock;
                e.writer_site = Some(site);
                e.reader = 0;
            } else {
                add_reader(e, &mut self.many, word, self.stamp, side);
            }
            word += 4;
        }
        found
    }
}

/// Records `side` as a reader of `e` (the word at `word`).
fn add_reader(e: &mut Entry, many: &mut Fast<usize, (u32, Vec<Side>)>, word: usize, stamp: u32, side: Side) {
    let packed = Entry::pack(&side);
    if e.reader == 0 || e.reader & !ATOMIC == packed & !ATOMIC {
        (e.reader, e.reader_clock, e.reader_site) = (packed, side.clock, Some(side.site));
        return;
    }
    let readers = many.entry(word).or_insert((stamp, Vec::new()));
    if e.reader != MANY {
        // The second reader: both go to the side table.
        readers.0 = stamp;
        readers.1.clear();
        readers.1.extend(Entry::side(e.reader, e.reader_clock, e.reader_site));
        e.reader = MANY;
    }
    match readers.1.iter_mut().find(|s| s.thread == side.thread) {
        Some(s) => *s = side,
        None => readers.1.push(side),
    }
}

/// Is `earlier` ordered before the current point of thread `me`?
fn ordered(clocks: &[[u32; 32]], earlier: &Side, me: u32) -> bool {
    earlier.thread == me
        || (earlier.thread / 32 == me / 32 && clocks[me as usize][(earlier.thread % 32) as usize] >= earlier.clock)
}

/// The hazard between the word's earlier accesses (`e`, and its readers in `many` when
/// several) and `side`'s, if any.
fn hazard(
    clocks: &[[u32; 32]],
    e: &Entry,
    many: Option<&(u32, Vec<Side>)>,
    stamp: u32,
    side: &Side,
    writes: bool,
) -> Option<Hazard> {
    let races = |other: &Side| !(other.atomic && side.atomic) && !ordered(clocks, other, side.thread);
    if let Some(w) = Entry::side(e.writer, e.writer_clock, e.writer_site).filter(|w| races(w)) {
        return Some(Hazard { earlier: w, earlier_wrote: true, later: *side, later_wrote: writes });
    }
    if !writes {
        return None;
    }
    let earlier = if e.reader == MANY {
        many.filter(|m| m.0 == stamp).and_then(|m| m.1.iter().find(|r| races(r)).copied())
    } else {
        Entry::side(e.reader, e.reader_clock, e.reader_site).filter(|r| races(r))
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
}
