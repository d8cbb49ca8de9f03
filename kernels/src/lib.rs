//! The reduction and scan kernels of this project, written as plain `no_std` Rust.
//!
//! The same source builds two ways:
//!
//! * **for the GPU** — `host/build.rs` compiles this crate with rustc's NVPTX backend
//!   (`--target nvptx64-nvidia-cuda`, `-Zbuild-std=core`, one LTO'd codegen unit) into PTX
//!   for sm_70, sm_80 and sm_90, and embeds the PTX in the host library. Every
//!   [`kernel!`] becomes a `.visible .entry` whose PTX symbol is the Rust function's name.
//! * **for the host** — as an ordinary library whose kernels are Rust functions that the
//!   CPU emulator in `host` runs, one coroutine per CUDA thread.
//!
//! Kernels reach the hardware only through [`device`], the one module with two
//! implementations (NVVM intrinsics and inline PTX on the GPU, the emulator's hooks on the
//! host). Index arithmetic that can be a plain function lives in [`index`] and is unit
//! tested on the host. What several kernels share (per-thread loads, warp sums, block
//! reductions and trees) lives in [`collective`], never in one kernel's file.
//!
//! Families, one file per kernel (file name = function name = PTX symbol = CLI name):
//!
//! * [`reduce`] — sums of `i32`, from the divergent neighbored-pair tree of *Professional
//!   CUDA C Programming* chapter 3 to single-pass kernels that read at memory speed.
//! * [`sumsq`] — Σ x² in the steps of the classic "CUDA sum of squares" tutorial (one
//!   thread → one block → coalesced → many blocks → a shared-memory tree per block), each
//!   timed with the kernel's own `clock64()`.
//! * [`scan`] — prefix sums of `i32`: a Fenwick tree (O(n log n) work), Blelloch's
//!   work-efficient scan in bank-conflict-free shared memory, and a single-pass scan with
//!   decoupled look-back that moves each element once in and once out.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        link_llvm_intrinsics,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(test)]
extern crate std;

pub mod collective;
pub mod device;
pub mod index;
pub mod reduce;
pub mod scan;
pub mod sumsq;
pub mod timing;

#[cfg(not(target_arch = "nvptx64"))]
pub mod broken;

/// On the GPU a Rust panic (an index or overflow check the optimiser could not remove)
/// traps: the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION` and the host reports it.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}

/// Defines a kernel: on the GPU a `#[no_mangle] extern "ptx-kernel"` entry point whose PTX
/// symbol is the function's name; on the host a plain `unsafe fn` with the same
/// parameters, which the emulator calls once per CUDA thread.
///
/// ```text
/// kernel! {
///     /// Docs...
///     pub unsafe fn interleaved(g_idata: *mut i32, g_odata: *mut i32, n: u32) { ... }
/// }
/// ```
#[macro_export]
macro_rules! kernel {
    (
        $(#[$meta:meta])*
        pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}
