//! Every registered variant on the GPU: every allowed block, the emulator's sizes plus 2^24
//! (not for the nested runs below block 128: `slow_at_2e24`).
//! Marked ignored where no GPU can be used (the banner printed first says why). A variant the
//! plan says this machine cannot run (`Error::Unsupported`: a nested variant with no CUDA device
//! runtime to link) is skipped with the plan's one line, never counted as passed.

use libtest_mimic::{Completion, Trial};
use reduce_scan::backend::Backend;
use reduce_scan::error::Error;
use reduce_scan::registry;

use crate::common::{SIZES, check_variant};

pub fn trials(have_gpu: bool) -> Vec<Trial> {
    let mut out = Vec::new();
    for v in registry::all() {
        for block in v.blocks.sizes() {
            out.push(
                Trial::ignorable_test(format!("gpu::{}::block_{block}", v.name), move || {
                    let backend = Backend::gpu().map_err(|e| e.to_string())?;
                    if let Err(Error::Unsupported(why)) = reduce_scan::reduce::geometry(&backend, v, 1, block, None) {
                        return Ok(Completion::ignored_with(format!("skipped: {why}")));
                    }
                    let mut sizes = SIZES.to_vec();
                    if !slow_at_2e24(v, block) {
                        sizes.push(1 << 24);
                    }
                    check_variant(&backend, v, block, &sizes)?;
                    Ok(Completion::Completed)
                })
                .with_kind("gpu")
                .with_ignored_flag(!have_gpu),
            );
        }
    }
    out
}

/// 2^24 is left out for the nested runs below block 128: the chains make
/// `grid × (log2(block) − 1)` device-side launches, and the tail-launched ones run one at a time.
/// On the H100, 2^24 in blocks of 128 (786,432 launches) took 36.7 s for one call, so blocks of
/// 32 (2.1 million) would hold for minutes the GPU the other tests share.
///
/// A grid whose fire-and-forget chains need more room for pending launches than the device grants
/// (`recursive_reduce_nosync` at 2^24 in blocks of 128 needs 786,456; the H100 grants 599,186)
/// runs, in parts that fit (`reduce_scan::reduce::nested::blocks_per_nested_launch`). Every block still runs 2^20 + 7.
fn slow_at_2e24(v: &registry::Variant, block: u32) -> bool {
    matches!(v.finish, registry::Finish::Nested(_)) && block < 128
}
