//! Access pictures (`reduce trace`): one block of a kernel, run on the emulator at a small
//! size, drawn barrier interval by barrier interval: which threads of which warp were active,
//! which words of global memory (and which 32-byte sectors) and of shared memory (and which
//! banks) they touched, and what the interval's requests came to. The book's figures of
//! chapters 3 and 5, drawn from the real kernel.
//!
//! [`capture`] runs the variant (checked against the CPU, under the emulator's checks) with
//! block 0 of every launch traced ([`crate::emu::Emulator::with_trace`]); [`svg`] (the runtime's
//! picture, `reduce_scan::trace`) draws the first launch of each of the variant's kernels.

pub use reduce_scan::trace::{KernelTrace, Traced, svg};

use crate::emu::Emulator;
use crate::registry::Variant;
use crate::scan::{Kind, ScanVariant};
use crate::{Backend, Error, Result};

/// The block a reduction is drawn at unless told: four warps, enough for a tree in shared
/// memory to take a step before its last warp.
pub const DEFAULT_BLOCK: u32 = 128;

/// The most elements a trace runs on: the pictures stay readable (and small).
pub const MAX_N: usize = 1 << 16;

/// What to trace.
#[derive(Clone, Copy, Debug)]
pub enum Subject {
    /// A reduction at a block size.
    Reduce(&'static Variant, u32),
    /// A scan of a kind (each scan variant has its own block).
    Scan(&'static ScanVariant, Kind),
}

impl Subject {
    /// The variant's name.
    pub fn name(&self) -> &'static str {
        match self {
            Subject::Reduce(v, _) => v.name,
            Subject::Scan(v, _) => v.name,
        }
    }

    fn symbols(&self) -> Vec<&'static str> {
        match self {
            Subject::Reduce(v, _) => v.symbols(),
            Subject::Scan(v, _) => v.symbols(),
        }
    }
}

/// Runs `subject` on `n` elements (1 ..= [`MAX_N`]) of the seeded input on a tracing
/// emulator, checks its result, and keeps block 0 of the first launch of each of its kernels.
pub fn capture(subject: Subject, n: usize, seed: u64) -> Result<Traced> {
    if !(1..=MAX_N).contains(&n) {
        return Err(Error::Invalid(format!(
            "a trace runs on 1 to {MAX_N} elements (the pictures draw every word); got --n {n}"
        )));
    }
    let backend = Backend::with_emulator(Emulator::new().with_trace(0));
    let (title, passed, input) = match subject {
        Subject::Reduce(v, block) => {
            let data = crate::input::Input::small(n, seed).data;
            let buffer = backend.upload(&data)?;
            crate::reduce::geometry(&backend, v, n, block, None)?;
            let m = crate::reduce::measure_own(&backend, v, (&buffer, &data), (block, None), 1)?;
            (format!("{} (block {block})", v.name), m.pass(), range(&buffer))
        }
        Subject::Scan(v, kind) => {
            let data = crate::input::Input::full_range(n, seed).data;
            let buffer = backend.upload(&data)?;
            let reference = kind.reference(&data);
            let m = crate::scan::measure(&backend, v.own(), kind, (&buffer, &data), Some(&reference), 1)?;
            (format!("{} {kind} (block {})", v.name, v.block()), m.pass(), range(&buffer))
        }
    };
    let launches = backend.take_counted();
    let symbols = subject.symbols();
    // A warm-up run, then the timed run: the second half of the launches.
    let summary = crate::metrics::emulated_summary(&launches, &symbols, 2);
    let kernels = symbols
        .into_iter()
        .filter_map(|symbol| {
            let c = launches.iter().find(|c| c.kernel == symbol && c.trace.is_some())?;
            Some(KernelTrace { kernel: c.kernel.clone(), grid_blocks: c.grid_blocks, trace: c.trace.clone()? })
        })
        .collect();
    Ok(Traced { title, checked: Some((n, passed)), input, kernels, summary })
}

fn range(buffer: &crate::DeviceBuffer<i32>) -> (usize, usize) {
    let start = buffer.as_ptr() as usize;
    (start, start + buffer.len() * 4)
}

#[cfg(test)]
mod tests;
