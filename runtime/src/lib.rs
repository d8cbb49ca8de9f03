//! The kit's runtime: one launch API over a CUDA GPU and the CPU emulator, for the kernels of
//! any kernel crate.
//!
//! A crate of your own kernels (`no_std`, written with the device layer's `kernel!`, crate
//! `reduce-scan-device` or `reduce-scan-collective`) is compiled to PTX by your host crate's
//! build script (`reduce-scan-build`) and launched through this crate, on a GPU or on the
//! emulator, with the emulator's checks and counters and Nsight Compute beside them. This crate
//! compiles no kernel and embeds no PTX: a program that depends on it carries its own kernels
//! alone. The curriculum's kernels and the library objects (`Reducer`, `Scanner`, …) are the
//! `reduce-scan` crate's, which re-exports every module here under the same path.
//!
//! * [`backend`] — [`Backend`]: device buffers, launches, events and limits on a CUDA GPU
//!   (the driver API, through the crate's own layer that opens `libcuda.so.1` at run time) or
//!   on the [`emu`]lator; kernel handles ([`Kernel`], [`kernel_in!`]).
//! * [`emu`] — the CPU emulator: every CUDA thread a coroutine, with CUDA's semantics for
//!   barriers, warps, shared memory, atomics and device-side launches, and the checks of
//!   compute-sanitizer and the counters of Nsight Compute.
//! * [`ptx`](mod@ptx) — a kernel crate's PTX, one build per architecture ([`ptx!`]), and the
//!   choice among them at run time.
//! * [`module`](mod@module) — a kernel crate's kernels as typed methods ([`module!`]), launched on either
//!   backend.
//! * [`experiment`] — your kernels measured and checked: the emulator's counters and access
//!   picture, the GPU's time by CUDA events (and criterion's, for `cargo bench`), Nsight
//!   Compute's counters beside the emulator's.
//! * [`metrics`] — the counters' names and definitions (ncu's names where the emulator counts
//!   the same thing), and Nsight Compute's runs.
//! * [`trace`] — the access picture of one block, as SVG.
//! * [`output`] — the one output pipeline: rows of cells to a table (and, with the `formats`
//!   feature, CSV and JSON).
//! * [`timing`] — warm-up, repeated timed runs, every run's result checked, median.
//! * [`private`] — files on a shared machine: private temporary folders, the harness cache's
//!   checks.
//! * [`error`] — the one error type, [`Error`]: one line per message.
//!
//! Nothing links the NVIDIA driver: every program starts on a machine without it, where
//! [`Backend::gpu`] returns [`Error::NoGpu`] with one line and `BackendKind::Auto` runs on the
//! emulator. `REDUCE_SCAN_LIBCUDA=/path/to/lib.so` loads that file instead of `libcuda.so.1`
//! (the tests' stand-in drivers; docs/building.md).

pub mod backend;
pub mod emu;
pub mod error;
pub mod experiment;
pub mod metrics;
pub mod module;
pub mod output;
pub mod private;
pub mod ptx;
pub mod timing;
pub mod trace;

pub use backend::{Backend, BackendKind, DeviceBuffer, DeviceInfo, Entry, Kernel, LaunchConfig};
pub use error::{Error, Fatal, MainResult, Result};

/// A CUDA toolkit program (`nvcc`, `ncu`): `$ENV`, else the first `name` on the `PATH`, else
/// `/usr/local/cuda/bin/name`, else the newest `/usr/local/cuda-X.Y/bin/name` (by version
/// number, so 12.10 is newer than 12.9).
pub fn find_cuda_tool(env: &str, name: &str) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH")
        && let Some(p) = std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
    {
        return Some(p);
    }
    let default = PathBuf::from("/usr/local/cuda/bin").join(name);
    if default.is_file() {
        return Some(default);
    }
    let mut versioned: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir("/usr/local")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let dir = e.file_name().to_string_lossy().into_owned();
            let version = dir.strip_prefix("cuda-")?.split('.').map(|x| x.parse().unwrap_or(0)).collect();
            Some((version, e.path().join("bin").join(name)))
        })
        .filter(|(_, p)| p.is_file())
        .collect();
    versioned.sort();
    versioned.pop().map(|(_, p)| p)
}

/// The last non-empty line of a tool's output (its error, usually), for a one-line message;
/// `(empty)` where it printed nothing.
pub fn last_line(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(empty)").trim()
}
