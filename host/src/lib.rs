//! Host side of the reduction and scan kernels: launch them on a GPU or on the CPU
//! emulator, check them against the CPU reference, time them — and, for other Rust code, a
//! small library in the shape a CUB user knows.
//!
//! # Use it from Rust
//!
//! ```
//! use host::{Backend, scan::Scanner, sum::Reducer};
//! // The CPU emulator runs this example anywhere; on a GPU host use `Backend::gpu()?`
//! // (or `Backend::gpu_device(1)?`, and `.with_new_stream()?` for a stream of your own).
//! let backend = Backend::emulator();
//! let input = backend.upload(&[3, 1, 4, 1, 5, 9, 2, 6])?;
//!
//! let mut reducer = Reducer::new(&backend); // owns its temporary storage; reuse it
//! assert_eq!(reducer.sum(&input)?, 31);
//!
//! let mut output = backend.alloc::<i32>(input.len())?;
//! let mut scanner = Scanner::new(&backend);
//! scanner.inclusive(&input, &mut output)?;
//! assert_eq!(backend.download(&output)?, [3, 4, 8, 9, 14, 23, 25, 31]);
//! # Ok::<(), host::Error>(())
//! ```
//!
//! Errors are one type, [`Error`]; a CUDA driver failure carries `cust`'s `CudaError` (cust
//! 0.3.2 is this crate's GPU layer and a public dependency through that variant).
//!
//! # Modules
//!
//! * [`backend`] — one launch API ([`Backend`]) over a CUDA GPU (`cust`: any device, any
//!   stream) and the CPU [`emu`]lator; device buffers; kernel handles.
//! * [`mod@reduce`] — the reductions: [`registry`] (the list of variants, which drives
//!   everything else), [`reduce::plan`] (grid × finish), [`cpu`] (the reference),
//!   [`reduce::Reduction`] and [`sum`] (the library object [`sum::Reducer`]).
//! * [`scan`] — the prefix sums, laid out the same way, and [`scan::Scanner`].
//! * [`timing`] — warm-up, repeated timed runs, every run's result checked, median.
//! * [`verify`] — the benches' cheap per-launch checks: a reduction's answer computed once,
//!   a scan's reference on the device with the check kernels of `kernels::check`.
//! * [`output`] — the one output pipeline: rows of cells to a table, CSV or JSON.
//! * [`cli`] — the `reduce` command line.
//! * [`input`] — deterministic inputs from a seed.
//! * [`committed`] — the newest committed GPU measurement set, built in: the emulator's table
//!   shows each lesson's GPU figures from it.
//! * [`ptx`] — the kernels' PTX, built by `build.rs`, and which one to load.
//! * [`cub`] — NVIDIA's CUB timed on the same machine, for comparisons (needs nvcc).
//! * [`metrics`] — hardware counters per variant through Nsight Compute (`reduce --metrics`).
//! * [`twins`] — the CUDA C twins of the classic kernels (`cub/classic.cu`), timed on the same
//!   data for Rust-vs-C comparisons (needs nvcc on the GPU host).

// `${concat(..)}` names the typed kernels as the kernels crate does (registry/typed.rs).
#![feature(macro_metavar_expr_concat)]

pub mod backend;
pub mod check;
pub mod cli;
pub mod committed;
pub mod cub;
pub mod emu;
pub mod error;
pub mod input;
pub mod metrics;
pub mod output;
pub mod phrasebook;
pub mod ptx;
pub mod reduce;
pub mod report;
pub mod scan;
pub mod timing;
pub mod trace;
pub mod twins;
pub mod verify;

pub use backend::{Backend, BackendKind, DeviceBuffer, DeviceInfo};
pub use error::{Error, Fatal, MainResult, Result};
pub use reduce::{cpu, reduce, registry, sum};
