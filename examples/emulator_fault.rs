//! The emulator catches three classic CUDA bugs, as compute-sanitizer would on a GPU, and
//! says which kernel, block, thread and line:
//!
//! 1. `__syncthreads()` inside a branch that only some threads of the block take (on a GPU it
//!    hangs or silently corrupts memory): synccheck;
//! 2. an off-by-one store one element past the end of a buffer (on a GPU it silently corrupts
//!    whatever lies there): memcheck — the emulator refuses the store before it happens;
//! 3. the book's warp-synchronous last warp without `__syncwarp` (right on old GPUs, a race on
//!    every GPU since Volta, whose lanes do not run in lock step): racecheck.
//!
//! `cargo run --example emulator_fault`

use kernels::device::global::GlobalMut;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::static_shared;
use reduce_scan::backend::{Backend, Kernel, LaunchConfig};
use reduce_scan::emu::EmuErrorKind;

/// Each thread writes its index; only the first 16 threads of the block reach the barrier.
///
/// # Safety
/// `out` holds one `i32` per thread of the launch.
unsafe fn barrier_in_a_branch(out: GlobalMut<i32>) {
    let tid = thread_idx_x();
    if tid < 16 {
        sync_threads(); // the bug: threads 16.. never arrive here
    }
    // SAFETY: `out` holds one element per thread.
    unsafe { out.write(tid as usize, tid as i32) };
}

/// Each thread means to write its own element, `blockIdx.x * blockDim.x + threadIdx.x`.
///
/// # Safety
/// `out` holds one `i32` per thread of the launch.
unsafe fn off_by_one(out: GlobalMut<i32>) {
    let gid = (block_idx_x() * block_dim_x() + thread_idx_x()) as usize;
    // SAFETY: deliberately wrong: the last thread of the grid writes one past the end.
    unsafe { out.write(gid + 1, 1) }; // the bug: `gid + 1`
}

/// A 64-thread block sums 64 ones in shared memory; warp 0 finishes without `__syncwarp`.
///
/// # Safety
/// `out` holds one `i32` per block; blocks of 64 threads.
unsafe fn last_warp_without_syncwarp(out: GlobalMut<i32>) {
    let smem = static_shared!(SMEM: [i32; 64]);
    let t = thread_idx_x() as usize;
    // SAFETY: t < 64, each thread its own slot; the barrier orders the block.
    unsafe { smem.write(t, 1) };
    sync_threads();
    if t < 32 {
        for s in [32, 16, 8, 4, 2, 1] {
            // SAFETY: t + s < 64. The bug: no `sync_warp(FULL_MASK)` between the steps, so
            // nothing orders lane t + s's write of its slot before lane t reads it.
            unsafe { smem.write_volatile(t, smem.read_volatile(t) + smem.read_volatile(t + s)) };
        }
    }
    if t == 0 {
        // SAFETY: out holds one element per block.
        unsafe { out.write(block_idx_x() as usize, smem.read(0)) };
    }
}

/// Launches `kernel` on one block of 64 threads with a 64-element buffer, prints the report
/// of the fault `kind` it must raise, then why it matters and the fix.
fn show(kernel: Kernel<(*mut i32,)>, kind: EmuErrorKind, lesson: &[&str]) -> Result<(), reduce_scan::Error> {
    let backend = Backend::emulator();
    let mut out = backend.alloc::<i32>(64)?;
    let cfg = LaunchConfig { grid: 1, block: 64, shared_bytes: 0 };
    // SAFETY: `out` holds one element per thread of the launch; the emulator refuses any
    // access outside it before it happens.
    match unsafe { backend.launch(&kernel, cfg, (out.as_mut_ptr(),)) } {
        Err(reduce_scan::Error::Emulator(e)) if e.kind == kind => {
            println!("caught ({kind:?}): {e}");
            for line in lesson {
                println!("  {line}");
            }
            println!();
            Ok(())
        }
        other => {
            eprintln!("expected a {kind:?} report from `{}`, got {other:?}", kernel.name);
            std::process::exit(1);
        }
    }
}

fn main() -> reduce_scan::MainResult {
    show(
        reduce_scan::kernel_ref!(barrier_in_a_branch(o)),
        EmuErrorKind::BarrierDivergence,
        &[
            "Why it matters: a block barrier must be reached by every thread of the block.",
            "Fix: move sync_threads() out of the branch, so that threads that have no work",
            "still reach it (as every kernel in kernels/src does).",
        ],
    )?;
    show(
        reduce_scan::kernel_ref!(off_by_one(o)),
        EmuErrorKind::GlobalOutOfBounds,
        &[
            "Why it matters: on a GPU the store lands in whatever memory follows the buffer;",
            "the result may even come out right. Fix: write element gid, and guard it with",
            "`if gid < n` where the grid has more threads than elements.",
        ],
    )?;
    show(
        reduce_scan::kernel_ref!(last_warp_without_syncwarp(o)),
        EmuErrorKind::Race,
        &[
            "Why it matters: since Volta the lanes of a warp are scheduled independently; volatile",
            "keeps the value out of registers but does not order the lanes. Fix: sync_warp(FULL_MASK)",
            "after each step (`last_warp` in kernels/src/reduce/unroll_warps8.rs).",
        ],
    )?;
    Ok(())
}
