//! The course of `./x learn`: the book's lessons as exercises, checked on the CPU emulator.
//!
//! * [`exercises`]: each exercise's lesson, text, book section and goal, and the shapes of
//!   kernel a check runs ([`exercises::Attempt`]);
//! * [`check`]: a kernel's answer at several sizes and blocks, the faults the emulator's checks
//!   find, and the lesson's measure;
//! * [`cli`]: the command line (the list, a check's verdict, `--solution`, `--reset`, `--gpu`);
//! * `profile`: Nsight Compute's counters beside the emulator's, `diff`: the solution beside
//!   the learner's file, `open`: which exercises open by themselves.
//!
//! The learner's own files are compiled apart, in `reduce-scan-learn` (`learn/`), whose
//! program hands its kernels to [`cli::run`]: an edit recompiles that small crate alone, not
//! the course (issue #40's edit-to-verdict target).

pub mod check;
pub mod cli;
mod diff;
pub mod exercises;
mod open;
pub mod profile;

#[cfg(test)]
mod tests;
