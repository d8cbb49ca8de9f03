//! Parallel reduction and scan on a GPU, in Rust: the kernels of the classic CUDA reduction
//! curriculum and the modern single-pass ones, launched on an NVIDIA GPU or on a CPU emulator
//! that runs the same kernel code, checked against a CPU reference and timed — and, for other
//! Rust code, a small library in the shape a CUB user knows: [`Reducer`], [`ArgReducer`] and
//! [`Scanner`], one object per algorithm, generic over element type and operator.
//!
//! # Use it from Rust
//!
//! ```
//! use reduce_scan::{ArgReducer, Backend, Max, Min, Reducer, Scanner, Sum};
//! // The CPU emulator runs this example anywhere; on a GPU host use `Backend::gpu()?`
//! // (or `Backend::gpu_device(1)?`, and `.with_new_stream()?` for a stream of your own).
//! let backend = Backend::emulator();
//! let input = backend.upload(&[3, 1, 4, 1, 5, 9, 2, 6])?;
//!
//! let mut reducer = Reducer::<i32, Sum>::new(&backend); // owns its temporary storage; reuse it
//! assert_eq!(reducer.reduce(&input)?, 31);
//! assert_eq!(reducer.reduce_range(&input, 3..6)?, 15); // any start, any length
//! reducer.enqueue(&input, 0..8)?; // queued on the backend's stream
//! assert_eq!(reducer.result()?, 31); // waits for it
//! assert_eq!(Reducer::<i32, Min>::new(&backend).reduce(&input)?, 1);
//!
//! let mut output = backend.alloc::<i32>(input.len())?;
//! let mut scanner = Scanner::<i32, Sum>::new(&backend);
//! scanner.inclusive(&input, &mut output)?;
//! assert_eq!(backend.download(&output)?, [3, 4, 8, 9, 14, 23, 25, 31]);
//!
//! let floats = backend.upload(&[0.5f64, -2.0, 8.0])?;
//! let mut maxima = backend.alloc::<f64>(3)?;
//! Scanner::<f64, Max>::new(&backend).inclusive(&floats, &mut maxima)?;
//! assert_eq!(backend.download(&maxima)?, [0.5, 0.5, 8.0]);
//!
//! let top = ArgReducer::<f64, Max>::new(&backend).reduce(&floats)?.expect("not empty");
//! assert_eq!((top.value, top.index), (8.0, 2)); // argmax: the value and its first index
//! let mut sums = Reducer::<f64, Sum>::new(&backend);
//! assert_eq!(sums.dot(&floats, &floats)?, 68.25); // no temporary: a·b summed in one pass
//! assert_eq!(sums.norm(&floats)?, 68.25f64.sqrt());
//! # Ok::<(), reduce_scan::Error>(())
//! ```
//!
//! | object | what | synchronous | queued |
//! |---|---|---|---|
//! | [`Reducer<T, Op>`](Reducer) | sum, min, max (`cub::DeviceReduce::Sum`/`Min`/`Max`) | [`reduce`](Reducer::reduce), [`reduce_range`](Reducer::reduce_range) | [`enqueue`](Reducer::enqueue), then [`result`](Reducer::result) |
//! | [`Reducer<T, Sum>`](Reducer) | dot product, sum of squares, L2 norm (`DeviceReduce::TransformReduce`, `torch.dot`, `torch.linalg.vector_norm`) | [`dot`](Reducer::dot), [`dot_range`](Reducer::dot_range), [`sum_of_squares`](Reducer::sum_of_squares), [`sum_of_squares_range`](Reducer::sum_of_squares_range), [`norm`](Reducer::norm), [`norm_range`](Reducer::norm_range) | [`enqueue_dot`](Reducer::enqueue_dot), [`enqueue_sum_of_squares`](Reducer::enqueue_sum_of_squares), then [`result`](Reducer::result) |
//! | [`ArgReducer<T, Min/Max>`](ArgReducer) | argmin, argmax: the extreme and its first index (`DeviceReduce::ArgMin`/`ArgMax`, `torch.argmin`/`argmax`) | [`reduce`](ArgReducer::reduce), [`reduce_range`](ArgReducer::reduce_range) | [`enqueue`](ArgReducer::enqueue), then [`result`](ArgReducer::result) |
//! | [`SegmentedReducer<T, Op>`](SegmentedReducer) over [`Segments`] | a sum, min, max (or, with `Min`/`Max`, argmin, argmax) per segment of CSR offsets or per row of a matrix (`DeviceSegmentedReduce`, `torch.sum(x, dim=-1)`) | [`reduce`](SegmentedReducer::reduce), [`arg_reduce`](SegmentedReducer::arg_reduce) | [`enqueue`](SegmentedReducer::enqueue), [`enqueue_arg`](SegmentedReducer::enqueue_arg), then any download |
//! | [`Scanner<T, Op>`](Scanner) | inclusive and exclusive scans (`DeviceScan`) | [`inclusive`](Scanner::inclusive), [`exclusive`](Scanner::exclusive), [`inclusive_range`](Scanner::inclusive_range), [`exclusive_range`](Scanner::exclusive_range) | [`enqueue`](Scanner::enqueue), then [`wait`](Scanner::wait) |
//! | [`Histogram<S>`](Histogram) over `u8`, `u16`, `u32`, `i32`, `f32` samples | the count in each of 1 to 4096 even bins over `[lower, upper)`, or of each value below the bin count (`cub::DeviceHistogram::HistogramEven`, `torch.histc`, `torch.bincount`) | [`even`](Histogram::even), [`even_range`](Histogram::even_range), [`bincount`](Histogram::bincount) | [`enqueue_even`](Histogram::enqueue_even), then any download |
//! | [`Select<T>`](Select) over `i32`, `u32`, `f32`, `u8`, `u16` | the elements a predicate, a flag array or "differs from the one before" keeps, in order, and their count; or a partition, the rest reversed after them (`cub::DeviceSelect::If`, `Flagged`, `Unique`, `cub::DevicePartition::If`, `Flagged`, `torch.masked_select`); each run's first element and length (`cub::DeviceRunLengthEncode::Encode`, `torch.unique_consecutive(return_counts=True)`) | [`select_if`](Select::select_if), [`flagged`](Select::flagged), [`unique`](Select::unique), [`partition_if`](Select::partition_if), [`partition_flagged`](Select::partition_flagged), [`run_length_encode`](Select::run_length_encode) | [`enqueue`](Select::enqueue), [`enqueue_run_length`](Select::enqueue_run_length), the count on the device |
//!
//! Argmin and argmax ([`reduce::arg`]): ties go to the lowest index; for floats a NaN is the
//! extreme (the first NaN wins, as in PyTorch) and −0.0 ties with +0.0; the index is a `u64`
//! (a `u32` on the device: every length fits); an empty input gives `None`. Dot products and
//! sums of squares ([`reduce::transform`]): integers wrap, floats lie within a stated bound of
//! the exact result (`docs/types.md`). Segmented reductions ([`reduce::segmented`]): an empty
//! segment gives the identity (an argmin or argmax: index `u32::MAX`), offsets that decrease or
//! pass the input are one-line errors, and the plan (a logical warp of 4 to 16 lanes per
//! segment, a block per segment, or tiles of every segment across the device, larger on an
//! H200) follows the longest segment. [`ops`] lists
//! these operations, as the command line runs them (`reduce --op argmax`, `--op segmented`, …).
//!
//! One-shot conveniences: [`argmin()`], [`argmax()`], [`sum::sum`], [`sum::sum_range`], [`reduce()`]`::<T, Op>`,
//! [`scan::inclusive_scan`] / [`scan::exclusive_scan`] (`i32` sums) and
//! [`scan::typed::inclusive_scan`] / [`scan::typed::exclusive_scan`]`::<T, Op>`.
//! [`sum`](mod@sum) says why the type and the operator are parameters of the object.
//!
//! # Two ways to run
//!
//! Every call takes a [`Backend`]:
//!
//! * **a CUDA GPU** — [`Backend::gpu`] (device 0), [`Backend::gpu_device`]`(n)`, and
//!   [`Backend::with_new_stream`] for a stream of your own; the kernels run from the PTX this
//!   crate embeds, through the CUDA driver API, whose library (`libcuda.so.1`, the NVIDIA driver)
//!   is opened when a GPU is first asked for: a program starts on a machine without it.
//!   Compute capability 7.0 or newer.
//! * **the CPU emulator** — [`Backend::emulator`]: no GPU, no driver, no CUDA toolkit. It runs
//!   the same kernel code on the CPU, every CUDA thread a coroutine, with CUDA's semantics for
//!   barriers, warps, shared memory and atomics, and it *reports* what a GPU would silently get
//!   wrong (a barrier some threads never reach, an index past a buffer, a race): [`emu`].
//!
//! [`Backend::select`]`(`[`BackendKind::Auto`]`)` takes the GPU when there is one, else the
//! emulator. Device buffers ([`DeviceBuffer`]) come from [`Backend::upload`] and
//! [`Backend::alloc`]; results come back with [`Backend::download`].
//!
//! # Types and operators
//!
//! `T` is one of the six [`Value`] types and `Op` one of the three [`OpKind`] operators
//! ([`Sum`], [`Min`], [`Max`], the kernels crate's, re-exported here): 18 pairs, each a PTX
//! entry of its own (`atomic_accumulate__f32_max`, `lookback__u64_sum`, …).
//!
//! | `T` | `Sum` | `Min` / `Max` | identity (empty input; exclusive scan's `output[0]`) |
//! |---|---|---|---|
//! | `i32`, `u32`, `i64`, `u64` | wraps (two's complement, modulo 2³² or 2⁶⁴): exact, whatever the order | exact | sum 0; min the type's `MAX`; max its `MIN` |
//! | `f32`, `f64` | each add rounded to nearest (IEEE 754, no flush to zero), in the kernel's order; within a stated bound of the exact sum | exact and independent of the order: **NaN propagates**, **−0.0 < +0.0** | sum 0.0; min +∞; max −∞ |
//!
//! * **NaN**: any NaN in the input (of a reduction, or of a scan's prefix) makes a float min or
//!   max NaN — for max the positive quiet NaN (`f32` bits `0x7fc0_0000`, `f64`
//!   `0x7ff8_0000_0000_0000`), for min the negative one (`0xffc0_0000`, `0xfff8_…`), whatever
//!   the payloads in the input. This is IEEE 754-2019 `maximum`/`minimum` with one canonical
//!   NaN, not CUDA C's `fmaxf`/`fminf`, which drop NaNs.
//! * **±0.0**: max(−0.0, +0.0) = +0.0 and min(−0.0, +0.0) = −0.0.
//! * **Float sums** are not associative: the answer depends on the kernel's addition tree
//!   (and, for the atomic finish, on the order blocks reach L2, so the last bits may vary from
//!   run to run). It lies within `γ(d)·Σ|xᵢ| + 2⁻⁵¹·Σ|xᵢ|` of the exact sum, `d` the depth of
//!   the tree, not `n` ([`cpu::float_sum_bound`], [`reduce::sum_depth`], [`scan::scan_depth`]).
//!
//! The rules are the kernels crate's (`kernels::types`, its module docs "What each operator
//! computes"); the emulator follows them bit for bit.
//!
//! **Which kernels.** One registry, one plan: every variant declares the pairs it runs, and
//! the library's plans pick a row of it for the pair ([`sum::PLAN`], [`scan::choose`]). `i32` ×
//! `Sum` runs the classic `i32` kernels at their measured shapes (`atomic_accumulate`, the
//! classic `lookback` scan); every other pair runs the same kernels' instantiations for its type
//! and operator (`atomic_accumulate__f32_max`, `lookback__u64_sum`), through the same workspace
//! and launch path.
//!
//! # Errors
//!
//! Every fallible call returns [`Result`]`<T>` = `Result<T, `[`Error`]`>`, one type for
//! everything: [`Error::Invalid`] (a bad request: a range outside the buffer, an output too
//! short, an unknown variant — the message gives the numbers), [`Error::Unsupported`] (not on
//! this device), [`Error::Cuda`] (a CUDA driver failure, with its [`CudaError`](error::CudaError):
//! `cuda.h`'s code, `{:?}` `OutOfMemory`, `IllegalAddress`, `LaunchFailed`…), [`Error::Emulator`]
//! (a fault the emulator caught, naming kernel, block, thread and source line), [`Error::NoGpu`]
//! ([`Backend::gpu`] where no GPU can be used, with the cause) and [`Error::Mismatch`] (a result that differs
//! from the CPU reference: the checks of the tests, benches and CLI). Every message is one line. [`MainResult`] lets `main` print it as
//! that line.
//!
//! # Where the kernels come from
//!
//! The kernels are `no_std` Rust in the `reduce-scan-kernels` crate of this workspace (folder
//! `kernels/`, depended on as `kernels`, hence the paths `kernels::…` below). This crate's build
//! script compiles them with rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`,
//! the pinned nightly of `rust-toolchain.toml`) into PTX for sm_70, sm_80 and sm_90, and embeds
//! the three in the library ([`mod@ptx`] picks one at run time); the CUDA driver JIT-compiles the
//! PTX on the GPU. The emulator links the same crate as ordinary host code. No CUDA toolkit and
//! no driver are needed to build, and nothing links `libcuda`: where there is no driver,
//! [`Backend::gpu`] says so in one line ([`Error::NoGpu`]) and `BackendKind::Auto` runs on the
//! emulator. Each kernel's doc (`kernels::reduce`, `kernels::scan`) says
//! what it teaches, its launch and preconditions, and what was measured.
//!
//! # Modules
//!
//! * [`backend`] — one launch API ([`Backend`]) over a CUDA GPU (the driver API: any device,
//!   any stream) and the CPU [`emu`]lator; device buffers; kernel handles.
//! * [`types`] — the element types and operators ([`Value`], [`OpKind`], `Elem`, `Op`): the
//!   type and operator table above, on the host.
//! * [`mod@reduce`] — the reductions: [`registry`] (the list of variants and the pairs each
//!   runs, which drives everything else), [`reduce::plan`] (grid × finish), [`cpu`] (the
//!   references), [`reduce::Reduction`] (one row on one input) and [`mod@sum`] (the library
//!   object [`Reducer`] and its plan).
//! * [`scan`] — the prefix sums, laid out the same way, and [`Scanner`].
//! * [`ops`] — the library's operations beyond them (argmin, argmax, dot product, sum of
//!   squares, norm): the one list the command line, tests, benches and GPU script iterate.
//! * [`timing`] — warm-up, repeated timed runs, every run's result checked, median.
//! * [`verify`] — the benches' cheap per-launch checks: a reduction's answer computed once,
//!   a scan's reference on the device with the check kernels of `kernels::check`.
//! * [`input`] — deterministic inputs from a seed.
//! * [`mod@ptx`] — the kernels' PTX, built by `build.rs`, and which one to load.
//! * From the runtime (the kit's crate, `reduce-scan-runtime`, under the same paths):
//!   [`experiment`] (a kernel crate's kernels measured and checked), [`metrics`] (the counters and
//!   Nsight Compute), [`trace`] (the access picture), [`output`] (the output pipeline),
//!   [`private`] (files on a shared machine), [`module`](mod@module) (a kernel crate's typed
//!   launches), [`error`].
//!
//! The `reduce` command line, its report, and the comparisons with CUB and the CUDA C twins are
//! the crate `reduce-scan-cli` (folder `cli/`): a crate that depends on this one gets none of
//! their dependencies (clap, plotters, csv, serde_json).

pub mod histogram;
pub mod input;
pub mod ops;
pub mod ptx;
pub mod reduce;
pub mod scan;
pub mod select;
pub mod types;
pub mod verify;

#[doc(hidden)]
pub use reduce_scan_runtime::__last_ident;
/// The runtime (crate `reduce-scan-runtime`, folder `runtime/`, the kit's), under the paths it
/// has always had here: launches on a GPU or the emulator, the emulator, kernel crates' PTX and
/// typed modules, experiments, counters, the output pipeline, timing, the error type.
pub use reduce_scan_runtime::{
    backend, emu, error, experiment, find_cuda_tool, kernel_in, last_line, metrics, module, output, private, timing,
    trace,
};

/// Builds a [`Kernel`] of this library's kernels ([`ptx::KERNELS`]) from a kernel function of
/// the kernels crate (`reduce-scan-kernels`, depended on as `kernels` in this workspace):
/// `kernel_ref!(kernels::reduce::interleaved(a, b, c))`.
#[macro_export]
macro_rules! kernel_ref {
    ($($kernel:tt)*) => {
        $crate::kernel_in!(&$crate::ptx::KERNELS, $($kernel)*)
    };
}

pub use backend::{Backend, BackendKind, DeviceBuffer, DeviceInfo, Entry, Kernel, LaunchConfig};
pub use error::{Error, Fatal, MainResult, Result};
pub use histogram::Histogram;
pub use kernels::types::{Max, Min, Sum};
pub use reduce::arg::{ArgReducer, Extremum, argmax, argmin};
pub use reduce::segmented::{SegmentedReducer, Segments};
pub use reduce::sum::Reducer;
pub use reduce::{cpu, reduce, registry, sum};
pub use scan::Scanner;
pub use select::Select;
pub use types::{OpKind, Value};
