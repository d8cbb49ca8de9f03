//! The access picture of one block (`reduce trace`, [`crate::experiment::trace`]): a block of a
//! launch run on a tracing emulator ([`crate::emu::Emulator::with_trace`]), drawn as SVG text
//! written by hand (rectangles and text only), barrier interval by barrier interval.
//!
//! Per kernel, one band per barrier interval of block 0, top to bottom:
//!
//! * **threads**: the block's threads in rows of four warps; a thread that accessed memory in
//!   the interval is green, an idle one grey;
//! * **global memory**: each buffer the block touched, in rows of 128 words (16 sectors of 32
//!   bytes); a word read is blue, written orange, both purple, and a sector the interval
//!   fetched is shaded behind its words (a shaded word that is not coloured is a fetched byte
//!   nobody asked for: the gap between sectors and requested bytes, `gld_efficiency`);
//! * **shared memory**: each shared array as a grid of 32 columns, one per bank, so that the
//!   accesses that one bank must serve pile up in one column;
//!
//! and the interval's counters in words above it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::emu::counters::{Counters, Trace, TracedAccess, TracedInterval};

/// Block 0 of the first launch of one kernel.
#[derive(Clone, Debug)]
pub struct KernelTrace {
    /// The PTX symbol.
    pub kernel: String,
    /// Blocks in the launch's grid.
    pub grid_blocks: u64,
    /// What block 0 did.
    pub trace: Trace,
}

/// A traced run: the variant, its size, whether its result was right, and its kernels.
#[derive(Clone, Debug)]
pub struct Traced {
    /// The variant (and, for a scan, the kind).
    pub title: String,
    /// Elements, and whether the result matched the CPU reference, where the run was checked
    /// (`reduce trace`); `None` for a run of your own launches ([`crate::experiment::trace`]).
    pub checked: Option<(usize, bool)>,
    /// The address range `[start, end)` of the input buffer (labelled in the picture).
    pub input: (usize, usize),
    /// Block 0 of the first launch of each of the variant's kernels, in the variant's order
    /// (a kernel the run did not launch at this size is absent).
    pub kernels: Vec<KernelTrace>,
    /// The counters of the whole run (every block; the timed run, as `--metrics` gives them).
    pub summary: Option<crate::metrics::Summary>,
}

/// Side of a word's or thread's cell, in pixels (the pitch; cells are one pixel narrower).
const CELL: usize = 8;
/// Threads per drawn row (four warps).
const THREADS_PER_ROW: usize = 128;
/// Global words per drawn row (16 sectors).
const WORDS_PER_ROW: usize = 128;
/// Shared words per drawn row: one per bank.
const BANKS: usize = 32;
/// Left margin, for the row labels.
const LEFT: usize = 96;
/// Where the shared-memory grid starts, right of the thread and global strips.
const SHARED_X: usize = LEFT + WORDS_PER_ROW * CELL + 40;
/// Two accesses more than this many bytes apart belong to different drawn buffers.
const SAME_BUFFER_GAP: usize = 512;

const READ: &str = "#1f77b4";
const WRITE: &str = "#ff7f0e";
const BOTH: &str = "#9467bd";
const ACTIVE: &str = "#2ca02c";
const IDLE: &str = "#e4e4e4";
const SECTOR: &str = "#cfe0ef";
const EMPTY: &str = "#f5f5f5";

/// The SVG picture of `traced`.
pub fn svg(traced: &Traced) -> String {
    let mut body = String::new();
    let mut y = 10;
    let title = match traced.checked {
        Some((n, passed)) => format!("{}: n = {n}, {}", traced.title, verdict(passed)),
        None => traced.title.clone(),
    };
    text(&mut body, 10, y + 14, 16, "bold", &title);
    y += 28;
    text(&mut body, 10, y + 12, 12, "normal", LEGEND);
    y += 24;
    for k in &traced.kernels {
        y = kernel(&mut body, k, traced.input, y);
    }
    let width = SHARED_X + BANKS * CELL + 20;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{y}\" viewBox=\"0 0 {width} {y}\" \
         font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n"
    )
}

const LEGEND: &str = "green: threads that accessed memory in the interval; words read blue, written orange, both \
                      purple; shading: the 32-byte sectors fetched; shared memory drawn 32 banks wide";

fn verdict(passed: bool) -> &'static str {
    if passed { "result checked against the CPU: PASS" } else { "result checked against the CPU: FAIL" }
}

/// `s` as SVG or HTML text: `&`, `<`, `>` and `"` escaped.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One kernel's bands; returns the y below them.
fn kernel(out: &mut String, k: &KernelTrace, input: (usize, usize), mut y: usize) -> usize {
    let t = &k.trace;
    let all: Vec<&TracedAccess> = t.intervals.iter().flat_map(|i| &i.accesses).collect();
    let global = buffers(all.iter().filter(|a| a.global).copied(), 32);
    // Shared arrays start 16-byte aligned: the lowest word touched is taken as bank 0.
    let shared = buffers(all.iter().filter(|a| !a.global).copied(), 16);
    let heading = format!(
        "kernel {}: block 0 of {}, {} threads ({} warps), {} barrier intervals",
        k.kernel,
        k.grid_blocks,
        t.threads,
        t.threads.div_ceil(32),
        t.intervals.len()
    );
    text(out, 10, y + 14, 14, "bold", &heading);
    y += 24;
    for (i, interval) in t.intervals.iter().enumerate() {
        y = band(out, i, interval, t.threads as usize, (&global, &shared, input), y);
    }
    y + 16
}

/// A drawn buffer: its first byte (aligned down to a sector, or to a bank row) and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Buffer {
    pub start: usize,
    pub bytes: usize,
    /// How the whole launch used it: "read", "written" or "read, written".
    pub use_: &'static str,
}

/// The address ranges that `accesses` touch, split where two are more than
/// [`SAME_BUFFER_GAP`] bytes apart or in two allocations (shared arrays), each aligned down to
/// `align` bytes at its start.
fn buffers<'a>(accesses: impl Iterator<Item = &'a TracedAccess>, align: usize) -> Vec<Buffer> {
    // (from, to, written, the access's place in the trace, its allocation): the place orders
    // buffers that are used alike by first use, which, unlike their addresses, is the same in
    // every run.
    let mut spans: Vec<(usize, usize, bool, usize, usize)> =
        accesses.enumerate().map(|(i, a)| (a.addr, a.addr + a.bytes as usize, a.write, i, a.region)).collect();
    spans.sort_unstable();
    let mut out: Vec<(Buffer, [bool; 2], usize, usize)> = Vec::new();
    for (from, to, write, first, region) in spans {
        match out.last_mut() {
            Some((b, used, seen, r)) if *r == region && from <= b.start + b.bytes + SAME_BUFFER_GAP => {
                b.bytes = b.bytes.max(to - b.start);
                used[usize::from(write)] = true;
                *seen = (*seen).min(first);
            }
            _ => {
                let start = from - from % align;
                let mut used = [false; 2];
                used[usize::from(write)] = true;
                out.push((Buffer { start, bytes: to - start, use_: "" }, used, first, region));
            }
        }
    }
    // What the kernel reads first, what it only writes last; alike, in order of first use.
    out.sort_by_key(|(_, used, first, _)| (!used[0], used[1], *first));
    out.into_iter()
        .map(|(b, used, _, _)| {
            let use_ = match used {
                [true, true] => "read, written",
                [false, true] => "written",
                _ => "read",
            };
            Buffer { use_, ..b }
        })
        .collect()
}

/// One interval's band; returns the y below it.
fn band(
    out: &mut String,
    index: usize,
    interval: &TracedInterval,
    threads: usize,
    (global, shared, input): (&[Buffer], &[Buffer], (usize, usize)),
    y: usize,
) -> usize {
    let c = &interval.counters;
    let _ = writeln!(out, "<g class=\"interval\" data-index=\"{index}\">");
    let _ = writeln!(out, "<title>{}</title>", escape(&summary(c)));
    text(out, 10, y + 12, 12, "bold", &format!("interval {index}"));
    text(out, LEFT, y + 12, 11, "normal", &summary(c));
    let top = y + 20;
    let mut left = top;
    left = thread_rows(out, interval, threads, left);
    for (i, b) in global.iter().enumerate() {
        let label = if b.start < input.1 && b.start + b.bytes > input.0 {
            "input".to_string()
        } else {
            format!("global {} ({})", i + 1, b.use_)
        };
        let words = accessed(interval.accesses.iter().filter(|a| a.global), b);
        let sectors: BTreeSet<usize> = words.keys().map(|w| w * 4 / 32).collect();
        left = memory_rows(out, &label, b, &words, &sectors, WORDS_PER_ROW, LEFT, left);
    }
    let mut right = top;
    for (i, b) in shared.iter().enumerate() {
        let words = accessed(interval.accesses.iter().filter(|a| !a.global), b);
        let label = if shared.len() > 1 { format!("shared {i}") } else { "shared".to_string() };
        right = memory_rows(out, &label, b, &words, &BTreeSet::new(), BANKS, SHARED_X, right);
    }
    let _ = writeln!(out, "</g>");
    left.max(right) + 10
}

/// The interval's counters in one line.
fn summary(c: &Counters) -> String {
    let mut parts = Vec::new();
    if c.gld_requests > 0 {
        parts.push(format!(
            "global ld {} req, {} sectors, eff {:.1}%",
            c.gld_requests,
            c.gld_sectors,
            c.gld_efficiency_pct()
        ));
    }
    if c.gst_requests > 0 {
        parts.push(format!("global st {} req, {} sectors", c.gst_requests, c.gst_sectors));
    }
    for (what, req, wave, conflicts) in [
        ("shared ld", c.shared_ld_requests, c.shared_ld_wavefronts, c.shared_ld_conflicts()),
        ("shared st", c.shared_st_requests, c.shared_st_wavefronts, c.shared_st_conflicts()),
    ] {
        if req > 0 {
            parts.push(format!("{what} {req} req, {wave} wavefronts ({conflicts} bank conflicts)"));
        }
    }
    if c.requests() > 0 {
        parts.push(format!("{:.1} lanes/req", c.lanes_per_request()));
    }
    if c.warp_collectives > 0 {
        parts.push(format!("{} warp collectives", c.warp_collectives));
    }
    if c.barriers > 0 {
        parts.push("ends at a barrier".into());
    }
    if parts.is_empty() { "no memory access".into() } else { parts.join(" · ") }
}

/// Word index (from the buffer's start) → (read, written), for the accesses inside `b`.
fn accessed<'a>(accesses: impl Iterator<Item = &'a TracedAccess>, b: &Buffer) -> BTreeMap<usize, (bool, bool)> {
    let mut words = BTreeMap::new();
    for a in accesses.filter(|a| a.addr >= b.start && a.addr < b.start + b.bytes) {
        let first = (a.addr - b.start) / 4;
        for w in first..first + (a.bytes as usize).div_ceil(4) {
            let e = words.entry(w).or_insert((false, false));
            e.0 |= !a.write;
            e.1 |= a.write;
        }
    }
    words
}

/// The thread rows: green where the thread accessed memory. Returns the y below them.
fn thread_rows(out: &mut String, interval: &TracedInterval, threads: usize, y: usize) -> usize {
    let mut active = vec![false; threads];
    for a in &interval.accesses {
        if let Some(t) = active.get_mut(a.thread as usize) {
            *t = true;
        }
    }
    let rows = threads.div_ceil(THREADS_PER_ROW);
    for r in 0..rows {
        let row_y = y + r * CELL;
        let label = format!("threads {}", r * THREADS_PER_ROW);
        text(out, 10, row_y + CELL, 8, "normal", &label);
        let row = &active[r * THREADS_PER_ROW..((r + 1) * THREADS_PER_ROW).min(threads)];
        runs(out, row.iter().map(|&on| Some(if on { ACTIVE } else { IDLE })), row_y, LEFT, true);
    }
    y + rows * CELL + 4
}

/// One buffer's rows of `per_row` words at `x`: its words coloured by access, over the
/// shaded `sectors` (sector indices from the buffer's start). Returns the y below them.
#[allow(clippy::too_many_arguments)]
fn memory_rows(
    out: &mut String,
    label: &str,
    b: &Buffer,
    words: &BTreeMap<usize, (bool, bool)>,
    sectors: &BTreeSet<usize>,
    per_row: usize,
    x: usize,
    y: usize,
) -> usize {
    let total = b.bytes.div_ceil(4);
    let rows = total.div_ceil(per_row);
    let y = if x == LEFT {
        text(out, 10, y + CELL, 8, "normal", label);
        y
    } else {
        // Right of the strips: the label above the grid, with the banks it spans.
        text(out, x, y + 8, 9, "normal", &format!("{label}: banks 0-31 left to right, one row per 128 bytes"));
        y + 12
    };
    for r in 0..rows {
        let row_y = y + r * CELL;
        let width = per_row.min(total - r * per_row) * CELL;
        let _ =
            writeln!(out, "<rect x=\"{x}\" y=\"{row_y}\" width=\"{width}\" height=\"{}\" fill=\"{EMPTY}\"/>", CELL - 1);
        let shade =
            (r * per_row..((r + 1) * per_row).min(total)).map(|w| sectors.contains(&(w * 4 / 32)).then_some(SECTOR));
        if sectors.range(r * per_row / 8..((r + 1) * per_row).div_ceil(8)).next().is_some() {
            runs(out, shade, row_y, x, false);
        }
        let cells = (r * per_row..((r + 1) * per_row).min(total)).map(|w| match words.get(&w) {
            Some((true, true)) => Some(BOTH),
            Some((true, false)) => Some(READ),
            Some((false, true)) => Some(WRITE),
            _ => None,
        });
        if words.range(r * per_row..(r + 1) * per_row).next().is_some() {
            runs(out, cells, row_y, x, true);
        }
    }
    y + rows * CELL + 4
}

/// Draws a row of cells, merging neighbours of one colour into one rectangle (`None`: no
/// cell). `gaps`: a one-pixel gap between cells (else one solid band per run).
fn runs(out: &mut String, cells: impl Iterator<Item = Option<&'static str>>, y: usize, x: usize, gaps: bool) {
    let cells: Vec<_> = cells.collect();
    let mut i = 0;
    while i < cells.len() {
        let Some(color) = cells[i] else {
            i += 1;
            continue;
        };
        let start = i;
        while i < cells.len() && cells[i] == Some(color) && !(gaps && i > start && i % 32 == 0) {
            i += 1;
        }
        let width = (i - start) * CELL - usize::from(gaps);
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{y}\" width=\"{width}\" height=\"{}\" fill=\"{color}\"/>",
            x + start * CELL,
            CELL - 1
        );
    }
}

fn text(out: &mut String, x: usize, y: usize, size: u32, weight: &str, s: &str) {
    let _ =
        writeln!(out, "<text x=\"{x}\" y=\"{y}\" font-size=\"{size}\" font-weight=\"{weight}\">{}</text>", escape(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_far_apart_are_different_buffers() {
        let at = |addr: usize, bytes: u32| TracedAccess {
            thread: 0,
            addr,
            bytes,
            global: true,
            write: false,
            region: addr - addr % 4096,
        };
        let mut accesses = [at(4100, 4), at(4096, 16), at(4200, 4), at(65536, 4)];
        accesses[2].write = true;
        assert_eq!(
            buffers(accesses.iter(), 32),
            // Read-only buffers first, then read-and-written, then written-only.
            [
                Buffer { start: 65536, bytes: 4, use_: "read" },
                Buffer { start: 4096, bytes: 108, use_: "read, written" }
            ]
        );
    }

    /// Two allocations side by side (the allocator may place them so) are two buffers: the
    /// picture's input copy and its block sums were once drawn as one.
    #[test]
    fn adjacent_allocations_are_different_buffers() {
        let at = |addr: usize, region: usize, write: bool| TracedAccess {
            thread: 0,
            addr,
            bytes: 4,
            global: true,
            write,
            region,
        };
        // A buffer of 64 bytes at 4096, and one at 4160, right after it.
        let accesses = [at(4096, 4096, false), at(4156, 4096, true), at(4160, 4160, true)];
        assert_eq!(
            buffers(accesses.iter(), 32),
            [
                Buffer { start: 4096, bytes: 64, use_: "read, written" },
                Buffer { start: 4160, bytes: 4, use_: "written" }
            ]
        );
    }
}
