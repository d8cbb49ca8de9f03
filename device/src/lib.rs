//! The device layer: the one crate through which every kernel touches the GPU.
//!
//! The kernels crate (`reduce-scan-kernels`) re-exports it as `kernels::device`, the path its
//! kernels use. It is a crate of its own so that the host's runtime (`reduce-scan-runtime`: the
//! CPU emulator behind [`emu::Hooks`]) builds against it alone: an edit of a lesson's kernel
//! rebuilds the kernels crate and what depends on the kernels, not the emulator.
//!
//! Names follow Rust-CUDA's `cuda_std` (`thread::thread_idx_x`, `thread::sync_threads`,
//! warp shuffles, shared arrays, atomics, `clock64`), so kernels read like their CUDA C
//! originals. No kernel calls a raw intrinsic or writes inline PTX itself.
//!
//! Kernels touch memory only here: shared memory through [`shared::Shared`], global memory
//! through [`global::Global`] and [`global::GlobalMut`]. No kernel holds a raw pointer (a test,
//! `tests/source.rs`, checks that no `*const`, `*mut` or raw dereference appears in
//! kernel code outside this module), so the emulator sees every access.
//!
//! Every function has two implementations:
//!
//! * on `nvptx64` (the PTX build, see `runtime/build.rs`): the NVVM intrinsic or the PTX
//!   instruction it stands for, always inlined;
//! * on every other target (the host build): a call through [`emu::Hooks`] into the CPU
//!   emulator of the runtime crate (`reduce-scan-runtime`), which runs each CUDA thread as a coroutine
//!   with CUDA's barrier, warp and shared-memory semantics. That trait is the single seam
//!   between the kernels and the emulator.
//!
//! | module | CUDA C equivalent |
//! |---|---|
//! | [`thread`] | `threadIdx`, `blockIdx`, `blockDim`, `gridDim`, `__syncthreads()` |
//! | [`warp`] | `__shfl_*_sync`, `__syncwarp`, `__ballot_sync`, `__all_sync`, `__any_sync`, `__reduce_add_sync` |
//! | [`shared`] | `__shared__ T a[N]` ([`static_shared!`](crate::static_shared)), `extern __shared__ T a[]`, 128-bit shared accesses, `cp.async` copies (`__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`) |
//! | [`global`] | `const T *g_idata` / `T *g_odata` kernel parameters ([`Global`](global::Global), [`GlobalMut`](global::GlobalMut)): `p[i]`, `p + i`, 128-bit vector loads and stores (`int4`), read-only cache loads (`__ldg`), streaming stores (`__stcs`) |
//! | [`bulk`] | sm_90's bulk copies (TMA) and `mbarrier`: `cuda::memcpy_async` of a whole tile with a `cuda::barrier`, `cp.async.bulk` global ↔ shared |
//! | [`atomic`] | every CUDA atomic (`atomicAdd`, `atomicSub`, `atomicMin`/`Max`, `atomicAnd`/`Or`/`Xor`, `atomicExch`, `atomicCAS`, `atomicInc`/`Dec`) on shared and global words ([`Shared`](shared::Shared), [`GlobalMut`](global::GlobalMut), the checked [`AtomicSlice`](slice::AtomicSlice)), `red` (an atomic whose result is unused), `__threadfence()`, `ld.acquire` / `st.release` |
//! | [`launch`] | device-side launches (dynamic parallelism): `kernel<<<grid, block, 0, cudaStreamTailLaunch>>>(…)` ([`launch_device!`](crate::launch_device)) |
//! | [`clock`] | `clock64()` |
//! | [`math`] | `a % b` kept as a hardware remainder (`rem.u32`); `fminf`, `fmaxf`, `fmin`, `fmax` as PTX `min`/`max` (−0.0 < +0.0) |
//! | [`slice`](mod@slice) | `const T *p, size_t n` and `T *out` with their lengths ([`Slice`](slice::Slice), [`DisjointSlice`](slice::DisjointSlice), [`PerBlock`](slice::PerBlock)): every index checked, writes only through a thread's own index ([`ThreadIndex`](slice::ThreadIndex), [`BlockLeader`](slice::BlockLeader)), so a kernel's common accesses need no `unsafe` |
//! | [`kernel`](mod@kernel) | `extern "C" __global__ void k(…)`: the [`kernel!`](crate::kernel!) macro, in any crate, and the host's handle of each kernel ([`KernelFn`](kernel::KernelFn)) |
//!
//! **A kernel in any crate.** A `no_std` crate that depends on this one (or on
//! `reduce-scan-collective`, which re-exports it with the block and warp collectives) writes its
//! kernels with [`kernel!`](crate::kernel!) and `use reduce_scan_device::prelude::*;`, and needs
//! nothing else: no feature gates, no panic handler (this crate provides the GPU's: a `trap`).
//! The host crate builds it to PTX with `reduce-scan-build` and launches it through
//! `reduce-scan`. `docs/your-kernel.md` walks through it.

#![no_std]
// `kernel!` and `static_shared!` expand, in the user's crate, to `extern "ptx-kernel"` entries
// and inline PTX: their definitions allow those unstable features, so that a kernel crate needs
// no feature gate of its own. Only the nvptx64 build has them (on the host the expansions are a
// plain `fn` and a call into the emulator), so that the host build needs no nightly feature: the
// crate built for the host compiles on stable Rust.
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        allow_internal_unstable,
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

pub mod atomic;
pub mod bulk;
pub mod clock;
pub mod global;
pub mod kernel;
pub mod launch;
pub mod math;
pub mod shared;
pub mod slice;
pub mod thread;
pub mod warp;

/// What a kernel needs, in one `use reduce_scan_device::prelude::*;`: the [`kernel!`] and
/// [`static_shared!`] macros, the indices and the block barrier, the checked buffers and their
/// indices, the raw global and shared views, the warp constants, shuffles and votes, the atomics'
/// traits (their methods are on [`GlobalMut`](global::GlobalMut), [`Shared`](shared::Shared) and
/// [`AtomicSlice`](slice::AtomicSlice): [`atomic`]), and [`trap`].
pub mod prelude {
    pub use crate::atomic::{
        AtomicAdd, AtomicAnd, AtomicCas, AtomicDec, AtomicExch, AtomicInc, AtomicMax, AtomicMin, AtomicOr, AtomicSub,
        AtomicXor,
    };
    pub use crate::global::{Global, GlobalMut};
    pub use crate::shared::Shared;
    pub use crate::slice::{AtomicSlice, BlockLeader, DisjointSlice, PerBlock, Slice, ThreadIndex};
    pub use crate::thread::{
        block_dim_x, block_idx_x, global_idx_x, grid_dim_x, lane_id, sync_threads, thread_idx_x, warp_id,
    };
    pub use crate::warp::{
        all_sync, any_sync, ballot_sync, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync, sync_warp,
    };
    pub use crate::{FULL_MASK, WARP_SIZE, kernel, static_shared, trap};
}

/// On the GPU a Rust panic (an index or overflow check the optimiser could not remove) traps:
/// the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION` and the host reports it. Every kernel
/// crate built for the GPU links this crate, so none needs a handler of its own.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}

#[cfg(not(target_arch = "nvptx64"))]
pub mod emu;

/// Threads in a warp on every NVIDIA GPU so far.
pub const WARP_SIZE: u32 = 32;

/// The warp mask naming all 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// Stops the kernel with an error (`trap` on the GPU: the launch fails with
/// `CUDA_ERROR_ILLEGAL_INSTRUCTION`; a reported fault in the emulator).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn trap(reason: &'static str) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = reason;
        // SAFETY: `trap` has no preconditions; it aborts the kernel.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emu::hooks().fault(emu::Fault::Trap { reason, site: core::panic::Location::caller() })
}
