//! The `reduce` command line of reduce-scan, and what only it needs: every registered variant
//! checked against the CPU and timed, on a GPU or on the CPU emulator; NVIDIA's CUB and the
//! classic kernels' CUDA C twins timed beside them (built with the machine's nvcc); Nsight
//! Compute's counters beside the emulator's; the access pictures; the HTML report. The library
//! it runs is `reduce-scan` (folder `host/`), whose modules it re-exports under the paths they
//! have there, so that `crate::reduce`, `crate::scan`, `crate::backend` and the rest read the
//! same in both crates.
//!
//! * [`cli`] — the `reduce` command line: flags → session → rows → report.
//! * [`check`] — `reduce check`: a kernel run on the emulator under every check, explained.
//! * [`committed`] — the newest committed GPU measurement set, built in: the emulator's table
//!   shows each lesson's GPU figures from it.
//! * [`cub`] — NVIDIA's CUB timed on the same machine, for comparisons (needs nvcc);
//!   [`cub_ops`] — its counterparts of the library's operations (ArgMin/ArgMax, TransformReduce).
//! * [`twins`] — the CUDA C twins of the classic kernels (`cub/classic.cu`), timed on the same
//!   data for Rust-vs-C comparisons (needs nvcc on the GPU host).
//! * [`trace`] — `reduce trace`: a variant's block drawn access by access.
//! * [`report`] — `reduce report`: cards (picture, Rust beside C, counters), charts.
//! * [`phrasebook`] — CUDA C names beside the device layer's, for the report and the docs.

pub mod check;
pub mod cli;
pub mod committed;
pub mod cub;
pub mod cub_ops;
pub mod phrasebook;
pub mod report;
pub mod trace;
pub mod twins;

/// The library and the runtime, under the paths their modules have in `reduce-scan`.
pub use reduce_scan::{
    ArgReducer, Backend, BackendKind, DeviceBuffer, DeviceInfo, Entry, Error, Extremum, Fatal, Kernel, LaunchConfig,
    MainResult, Max, Min, OpKind, Reducer, Result, Scanner, SegmentedReducer, Segments, Sum, Value, backend, cpu, emu,
    error, experiment, histogram, input, kernel_ref, metrics, module, ops, output, private, ptx, reduce, registry,
    scan, select, sum, timing, types, verify, with_elem,
};
