//! Host side of the reduction and scan kernels: launch them on a GPU or on the CPU
//! emulator, check them against the CPU reference, time them.
//!
//! * [`backend`] — one launch API ([`Backend`]) over a CUDA GPU (`cust`) and the CPU
//!   [`emu`]lator; device buffers; kernel handles.
//! * [`registry`] — the list of variants, which drives everything else.
//! * [`scan`] — the prefix sums: their own registry, launch plans, [`scan::inclusive_scan`].
//! * [`reduce`] — preconditions, geometry, launch, finishing partial sums, measuring.
//! * [`cpu`] — the CPU reference (the book's recursive reduction, fixed for odd lengths).
//! * [`input`] — deterministic inputs from a seed.
//! * [`ptx`] — the kernels' PTX, built by `build.rs`, and which one to load.
//! * [`sum`] — the sum of a device buffer in one call, with the fastest variant.
//! * [`cub`] — NVIDIA's CUB timed in the same run, for comparisons (needs nvcc on the GPU host).
//! * [`twins`] — the CUDA C twins of the classic kernels (`cub/classic.cu`), timed on the same
//!   data for Rust-vs-C comparisons (needs nvcc on the GPU host).

pub mod backend;
pub mod cli;
pub mod cpu;
pub mod cub;
pub mod emu;
pub mod error;
pub mod input;
pub mod ptx;
pub mod reduce;
pub mod registry;
pub mod report;
pub mod scan;
pub mod sum;
pub mod twins;

pub use backend::{Backend, BackendKind, DeviceBuffer, DeviceInfo};
pub use error::{Error, Result};
