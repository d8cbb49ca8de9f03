//! The runtime of `reduce-scan`: one launch API over a CUDA GPU and the CPU emulator.
//!
//! Users depend on the `reduce-scan` crate, which re-exports every module here under the same
//! path (`reduce_scan::backend`, `reduce_scan::emu`, …); this crate exists so that the code
//! that launches kernels does not depend on the kernels themselves, only on their device layer
//! (`reduce-scan-device`). An edit of a lesson's kernel then rebuilds the kernels crate and the
//! registry above it, not the emulator (issue #27: seconds from a kernel edit to the
//! emulator's answer).
//!
//! * [`backend`] — [`Backend`]: device buffers, launches, events and limits on a CUDA GPU
//!   (the driver API, through the crate's own layer that opens `libcuda.so.1` at run time) or
//!   on the [`emu`]lator; kernel handles ([`kernel_ref!`]).
//! * [`emu`] — the CPU emulator: every CUDA thread a coroutine, with CUDA's semantics for
//!   barriers, warps, shared memory, atomics and device-side launches, and the checks of
//!   compute-sanitizer and the counters of Nsight Compute.
//! * [`ptx`](mod@ptx) — the kernels' PTX for sm_70, sm_80 and sm_90, which this crate's build script
//!   compiles from the kernels crate with rustc's NVPTX backend and embeds; and any kernel
//!   crate's PTX that a user's build script compiled ([`ptx!`]).
//! * [`module`](mod@module) — a kernel crate's kernels as typed methods ([`module!`]), launched on either
//!   backend.
//! * [`timing`] — warm-up, repeated timed runs, every run's result checked, median.
//! * [`error`] — the one error type, [`Error`]: one line per message.
//!
//! Nothing links the NVIDIA driver: every program starts on a machine without it, where
//! [`Backend::gpu`] returns [`Error::NoGpu`] with one line and `BackendKind::Auto` runs on the
//! emulator. `REDUCE_SCAN_LIBCUDA=/path/to/lib.so` loads that file instead of `libcuda.so.1`
//! (the tests' stand-in drivers; docs/building.md).

pub mod backend;
pub mod emu;
pub mod error;
pub mod module;
pub mod ptx;
pub mod timing;

pub use backend::{Backend, BackendKind, DeviceBuffer, DeviceInfo};
pub use error::{Error, Fatal, MainResult, Result};
