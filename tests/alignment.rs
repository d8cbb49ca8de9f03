//! Inputs that do not start on a 16-byte boundary: the modern variants and `reduce_scan::sum` on
//! sub-ranges starting at elements 0..=7 of a buffer, with lengths that leave every tail
//! length 0..=3 (the longest, 2^20 + 3, at offsets 0 and 5 only: [`LONGEST_AT`]). A 128-bit load must be 16-byte aligned; the emulator reports a misaligned
//! one as a fault, so a wrong head/tail split fails here with the address, not silently.
//!
//! Also: `single_pass` launched back to back on the same scratch gives the same sum every
//! time (the last block resets the ticket; the host never does).
//!
//! Each check runs on the emulator, and on the GPU where there is one (marked ignored
//! otherwise, like `gpu`).

use libtest_mimic::{Failed, Trial};
use reduce_scan::backend::{Backend, DeviceBuffer};
use reduce_scan::input::Input;
use reduce_scan::reduce::Reduction;
use reduce_scan::registry::{self, Family, Variant};
use reduce_scan::sum::sum_range;

/// First elements of the sub-ranges: every residue mod 4 twice (element 0 is 256-byte aligned).
const OFFSETS: std::ops::RangeInclusive<usize> = 0..=7;
/// Lengths: shorter than a vector, around a vector, around warps, blocks and windows, large
/// and odd; together with the offsets they give every head (0..=3) and tail (0..=3) length.
const LENGTHS: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 31, 33, 1021, 4099, 65_541, (1 << 20) + 3];
/// Elements after the longest range, so the guard values past every range exist.
const GUARD: usize = 8;

struct Case {
    data: Vec<i32>,
    buf: DeviceBuffer<i32>,
}

impl Case {
    fn new(backend: &Backend) -> Result<Self, Failed> {
        let max = LENGTHS.iter().max().unwrap() + OFFSETS.end() + GUARD;
        let data = Input::full_range(max, 0xA11C).data;
        let buf = backend.upload(&data).map_err(|e| e.to_string())?;
        Ok(Self { data, buf })
    }

    fn expected(&self, offset: usize, n: usize) -> i32 {
        self.data[offset..offset + n].iter().fold(0i32, |a, &x| a.wrapping_add(x))
    }
}

/// The offsets the longest length runs at: an aligned start and the most misaligned (a head of 3
/// elements, the largest). The longest length adds blocks and grid-stride rounds, not a new head
/// or tail (every head and tail length is met by the shorter lengths at every offset), so it runs
/// at two offsets, not eight (issue #60: it was most of this module's time).
const LONGEST_AT: [usize; 2] = [0, 5];

fn check_variant(backend: &Backend, v: &'static Variant, blocks: &[u32]) -> Result<(), Failed> {
    let case = Case::new(backend)?;
    let longest = *LENGTHS.last().unwrap();
    for &block in blocks {
        for offset in OFFSETS {
            for &n in LENGTHS.iter().filter(|&&n| n < longest || LONGEST_AT.contains(&offset)) {
                let what = format!("variant {} block {block}, elements {offset}..{}", v.name, offset + n);
                let mut r =
                    Reduction::new_at(backend, v, &case.buf, offset, n, block).map_err(|e| format!("{what}: {e}"))?;
                // Three launches on the same buffers: the single-pass ticket must come back to 0.
                for run in 0..3 {
                    r.reset().and_then(|_| r.launch()).map_err(|e| format!("{what}, run {run}: {e}"))?;
                    let got = r.result().map_err(|e| format!("{what}, run {run}: {e}"))?;
                    let want = case.expected(offset, n);
                    if got != want {
                        return Err(format!("{what}, run {run}: expected {want}, got {got}").into());
                    }
                }
            }
        }
    }
    Ok(())
}

fn check_sum(backend: &Backend) -> Result<(), Failed> {
    let case = Case::new(backend)?;
    for offset in OFFSETS {
        for &n in LENGTHS {
            let got = sum_range(backend, &case.buf, offset..offset + n)
                .map_err(|e| format!("sum of elements {offset}..{}: {e}", offset + n))?;
            let want = case.expected(offset, n);
            if got != want {
                return Err(format!("sum of elements {offset}..{}: expected {want}, got {got}", offset + n).into());
            }
        }
        if sum_range(backend, &case.buf, offset..offset).map_err(|e| e.to_string())? != 0 {
            return Err(format!("the empty range {offset}..{offset} must sum to 0").into());
        }
    }
    Ok(())
}

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    let modern = registry::all().filter(|v| v.family == Family::Modern);
    for v in modern {
        // The smallest and largest blocks, and the one `sum` uses.
        let blocks: Vec<u32> = [32, 256, 1024].into_iter().filter(|&b| v.blocks.allows(b)).collect();
        let b = blocks.clone();
        out.push(
            Trial::test(format!("alignment::{}::emulator", v.name), move || check_variant(&Backend::emulator(), v, &b))
                .with_kind("emulator"),
        );
        out.push(
            Trial::test(format!("alignment::{}::gpu", v.name), move || {
                let backend = Backend::gpu().map_err(|e| e.to_string())?;
                check_variant(&backend, v, &blocks)
            })
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
        );
    }
    out.push(Trial::test("alignment::sum::emulator", || check_sum(&Backend::emulator())).with_kind("emulator"));
    out.push(
        Trial::test("alignment::sum::gpu", || check_sum(&Backend::gpu().map_err(|e| e.to_string())?))
            .with_kind("gpu")
            .with_ignored_flag(!have_gpu),
    );
    out
}
