//! `reduce check` (`reduce_scan_cli::check::variant`) finds what an experimenter's edit breaks: here the
//! book's shared-memory reduction with the barrier between its block-level rounds removed,
//! a bug that every size passes at blocks 32 and 64 (no block-level round runs there).

use kernels::device::FULL_MASK;
use kernels::device::global::{Global, GlobalMut};
use kernels::device::shared::Shared;
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::sync_warp;
use kernels::static_shared;
use libtest_mimic::{Failed, Trial};
use reduce_scan::reduce::plan::{Finish, KernelSel};
use reduce_scan::registry::{self, Variant};
use reduce_scan_cli::check;

/// `smem` with the block barrier after each block-level round removed (the planted bug of
/// issue #28): a thread may read `smem[tid + s]` before its writer has added into it.
///
/// # Safety
/// As `smem`'s: `input` holds `n` elements, `out` one per block; block a power of two ≤ 1024.
unsafe fn smem_missing_barrier(input: Global<i32>, out: GlobalMut<i32>, n: u32) {
    let smem: Shared<i32> = static_shared!(MISSING: [i32; 1024]);
    let (tid, block) = (thread_idx_x(), block_dim_x());
    let idx = block_idx_x() as usize * block as usize + tid as usize;
    // SAFETY: idx < n.
    let x = if idx < n as usize { unsafe { input.read(idx) } } else { 0 };
    // SAFETY: tid < 1024, each thread its own slot.
    unsafe { smem.write(tid as usize, x) };
    sync_threads();
    for s in [512u32, 256, 128, 64] {
        if 2 * s <= block && tid < s {
            // SAFETY: tid + s < block <= 1024.
            unsafe { smem.write(tid as usize, smem.read(tid as usize).wrapping_add(smem.read((tid + s) as usize))) };
        }
        // The bug: the round's sync_threads() is gone (in `smem` it also closes the last round
        // before the last warp reads it).
    }
    if tid < 32 {
        for s in [32u32, 16, 8, 4, 2, 1] {
            if 2 * s <= block && tid < s {
                // SAFETY: tid + s < 64 <= 1024.
                unsafe {
                    smem.write(tid as usize, smem.read(tid as usize).wrapping_add(smem.read((tid + s) as usize)))
                };
            }
            sync_warp(FULL_MASK);
        }
    }
    if tid == 0 {
        // SAFETY: out holds one element per block.
        unsafe { out.write(block_idx_x() as usize, smem.read(0)) };
    }
}

fn catches_the_removed_barrier() -> Result<(), Failed> {
    let smem = registry::find("smem")?;
    let planted: &'static Variant = Box::leak(Box::new(Variant {
        name: "smem_missing_barrier",
        finish: Finish::HostAdds(KernelSel::One(reduce_scan::kernel_ref!(smem_missing_barrier(i, o, n)))),
        ..*smem
    }));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let passed = check::variant(planted, &mut out, &mut err)?;
    let out = String::from_utf8(out)?;
    let lines: Vec<&str> = out.lines().collect();
    if passed || lines.len() != 6 {
        return Err(format!("the planted bug passed `reduce check`'s shapes:\n{out}").into());
    }
    // Blocks 32 and 64 run no block-level round: they pass. From block 128 on, the last warp
    // reads what the last round wrote with no barrier between: racecheck names the race at
    // the first size.
    for (l, block) in lines.iter().zip([32, 64, 128, 256, 512, 1024]) {
        let want = if block <= 64 {
            format!("block {block}: PASS")
        } else {
            format!(
                "block {block}: FAIL: variant smem_missing_barrier n=1 block={block}: emulator: kernel `smem_missing_barrier`"
            )
        };
        if !l.starts_with(&want) {
            return Err(format!("expected `{want}…`, got: {l}\n{out}").into());
        }
    }
    if !out.contains("race on shared array `MISSING`") {
        return Err(format!("the failure should be racecheck's report: {out}").into());
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("check::catches_the_removed_barrier", catches_the_removed_barrier)]
}
