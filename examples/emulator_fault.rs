//! The emulator catches a classic CUDA bug: `__syncthreads()` inside a branch that only some
//! threads of the block take. On a GPU this hangs or silently corrupts memory; the emulator
//! stops the launch and says which kernel, which block, which threads and which line.
//!
//! `cargo run --example emulator_fault`

use host::backend::{Backend, Kernel, LaunchConfig};
use host::emu::EmuErrorKind;
use kernels::device::global::GlobalMut;
use kernels::device::thread::{sync_threads, thread_idx_x};

/// Each thread writes its index; only the first 16 threads of the block reach the barrier.
///
/// # Safety
/// `out` holds one `i32` per thread of a one-block launch.
unsafe fn barrier_in_a_branch(out: GlobalMut<i32>) {
    let tid = thread_idx_x();
    if tid < 16 {
        sync_threads(); // the bug: threads 16.. never arrive here
    }
    // SAFETY: `out` holds one element per thread.
    unsafe { out.write(tid as usize, tid as i32) };
}

fn main() -> Result<(), host::Error> {
    let backend = Backend::emulator();
    let mut out = backend.alloc::<i32>(64)?;
    let kernel: Kernel<(*mut i32,)> = host::kernel_ref!(barrier_in_a_branch(o));
    let cfg = LaunchConfig { grid: 1, block: 64, shared_bytes: 0 };
    // SAFETY: `out` holds one element per thread of the launch.
    match unsafe { backend.launch(&kernel, cfg, (out.as_mut_ptr(),)) } {
        Err(host::Error::Emulator(e)) if e.kind == EmuErrorKind::BarrierDivergence => {
            println!("caught: {e}");
            println!();
            println!("Why it matters: a block barrier must be reached by every thread of the block.");
            println!("Fix: move sync_threads() out of the branch, so that threads that have no work");
            println!("still reach it (as every kernel in kernels/src does).");
            Ok(())
        }
        other => {
            eprintln!("expected a barrier-divergence report, got {other:?}");
            std::process::exit(1);
        }
    }
}
