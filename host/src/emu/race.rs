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
//! Per word the block keeps its last store and the loads since, stamped with their interval, in
//! a hash map reused from block to block; per thread, its lane's vector clock.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use kernels::device::emu::{Access, Site};

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

/// Loads of a word since its last store.
#[derive(Clone, Debug, Default)]
enum Reads {
    #[default]
    None,
    One(Side),
    Many(Vec<Side>),
}

impl Reads {
    fn iter(&self) -> impl Iterator<Item = &Side> {
        let (one, many): (Option<&Side>, &[Side]) = match self {
            Reads::None => (None, &[]),
            Reads::One(s) => (Some(s), &[]),
            Reads::Many(v) => (None, v),
        };
        one.into_iter().chain(many.iter())
    }

    fn add(&mut self, side: Side) {
        match self {
            Reads::None => *self = Reads::One(side),
            Reads::One(s) if s.thread == side.thread => *s = side,
            Reads::One(s) => *self = Reads::Many(vec![*s, side]),
            Reads::Many(v) => match v.iter_mut().find(|s| s.thread == side.thread) {
                Some(s) => *s = side,
                None => v.push(side),
            },
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Word {
    interval: u32,
    write: Option<Side>,
    reads: Reads,
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

/// A fast hash for word addresses (multiples of 4).
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
        self.0 = ((x as u64) >> 2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The race-check state of the block a worker runs (kept between blocks for its memory).
#[derive(Default)]
pub struct BlockRace {
    interval: u32,
    words: HashMap<usize, Word, BuildHasherDefault<WordHasher>>,
    /// Per thread, its lane's clocks of the 32 lanes of its warp.
    clocks: Vec<[u32; 32]>,
}

impl BlockRace {
    /// Starts a block of `threads` threads.
    pub fn reset(&mut self, threads: usize) {
        self.interval = 0;
        self.words.clear();
        self.clocks.clear();
        self.clocks.extend((0..threads).map(|t| {
            let mut c = [0u32; 32];
            c[t % 32] = 1;
            c
        }));
    }

    /// Every thread of the block passed a `sync_threads`: a new interval.
    pub fn barrier(&mut self) {
        self.interval = self.interval.wrapping_add(1);
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

    /// Thread `me` makes `access` to the `bytes` bytes at `addr` at `site`: the hazard it
    /// completes, if any (the access is recorded either way).
    pub fn access(&mut self, addr: usize, bytes: usize, access: Access, me: u32, site: Site) -> Option<Hazard> {
        let clocks = &self.clocks;
        let side =
            Side { thread: me, clock: clocks[me as usize][(me % 32) as usize], site, atomic: access.is_atomic() };
        let (reads, writes) = (access.reads(), access.writes());
        let mut found = None;
        let mut at = addr & !3;
        while at < addr + bytes {
            let interval = self.interval;
            let word = self.words.entry(at).or_default();
            if word.interval != interval {
                *word = Word { interval, write: None, reads: Reads::None };
            }
            if found.is_none() {
                found = hazard(clocks, word, &side, reads, writes);
            }
            if writes {
                word.write = Some(side);
                word.reads = Reads::None;
            } else {
                word.reads.add(side);
            }
            at += 4;
        }
        found
    }
}

/// Is `earlier` ordered before the current point of thread `me`?
fn ordered(clocks: &[[u32; 32]], earlier: &Side, me: u32) -> bool {
    earlier.thread == me
        || (earlier.thread / 32 == me / 32 && clocks[me as usize][(earlier.thread % 32) as usize] >= earlier.clock)
}

/// The hazard between `word`'s earlier accesses and `side`'s, if any.
fn hazard(clocks: &[[u32; 32]], word: &Word, side: &Side, reads: bool, writes: bool) -> Option<Hazard> {
    let races = |other: &Side| !(other.atomic && side.atomic) && !ordered(clocks, other, side.thread);
    if let Some(w) = word.write.as_ref().filter(|w| (reads || writes) && races(w)) {
        return Some(Hazard { earlier: *w, earlier_wrote: true, later: *side, later_wrote: writes });
    }
    if writes && let Some(r) = word.reads.iter().find(|r| races(r)) {
        return Some(Hazard { earlier: *r, earlier_wrote: false, later: *side, later_wrote: true });
    }
    None
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
