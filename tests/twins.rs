//! The CUDA C twins of the classic kernels (`cub/classic.cu`, `reduce_scan_cli::twins`): each one runs
//! once at n = 2^20 + 7 with blocks of 128 (the scans: their fixed 512) and its result must
//! equal the CPU reference. Marked ignored where there is no GPU or no nvcc (the banner says
//! which).

use libtest_mimic::{Completion, Failed, Trial};
use reduce_scan::cpu::Reference;
use reduce_scan::input::Input;
use reduce_scan::registry;
use reduce_scan_cli::twins;

use crate::common::SEED;

/// The size every twin runs at: large and odd, so the last block is short.
const N: usize = (1 << 20) + 7;
/// The block every reduction twin runs with.
const BLOCK: u32 = 128;

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    // Only where there is a GPU: asking builds the harness with nvcc (once, then cached).
    let unavailable = if have_gpu { twins::available().err().map(|e| e.to_string()) } else { None };
    if let Some(why) = &unavailable {
        println!("CUDA C twin tests: ignored ({why})");
    }
    let ignored = !have_gpu || unavailable.is_some();
    twins::names()
        .map(|name| {
            Trial::ignorable_test(format!("twins::{name}"), move || {
                // The nested twins' own harness (-rdc=true, libcudadevrt) may not build where the
                // plain one does: skipped with the reason, never counted as passed.
                if let Err(e) = twins::available_for(name) {
                    return Ok(Completion::ignored_with(format!("skipped: {e}")));
                }
                check(name).map(|()| Completion::Completed)
            })
            .with_kind("gpu")
            .with_ignored_flag(ignored)
        })
        .collect()
}

fn check(name: &'static str) -> Result<(), Failed> {
    let input = Input::full_range(N, SEED ^ N as u64);
    let t = twins::time(name, &input.data, N, BLOCK, 1).map_err(|e| format!("twin {name}: {e}"))?;
    let expected = match registry::find(name) {
        Ok(v) => Reference::for_op(v.op, &input.data).wrapped,
        // A scan: the harness compared every element with the CPU scan; its result is the last.
        Err(_) => input.data.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
    };
    if t.result != expected || !t.all_correct || t.runs() == 0 {
        return Err(format!(
            "twin {name} n={N}: expected {expected}, got {} ({} of {} timed runs right)",
            t.result,
            t.ok_runs,
            t.runs()
        )
        .into());
    }
    Ok(())
}
