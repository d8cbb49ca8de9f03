//! Every registered variant on the CPU emulator: every allowed block, every size in
//! [`SIZES`](crate::common::SIZES) but the largest, and the largest (2^20 + 7) at the variant's
//! largest block. Every boundary size meets every block; the large size, which adds many blocks
//! and grid-stride rounds but no new boundary, is run once a variant (issue #60: the nested
//! variants at block 32 took 45 s of the suite's time for it alone).

use libtest_mimic::Trial;
use reduce_scan::backend::Backend;
use reduce_scan::registry;

use crate::common::{SIZES, check_variant};

pub fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for v in registry::all() {
        let largest = v.blocks.sizes().max();
        for block in v.blocks.sizes() {
            let sizes = if Some(block) == largest { SIZES } else { &SIZES[..SIZES.len() - 1] };
            out.push(
                Trial::test(format!("emulator::{}::block_{block}", v.name), move || {
                    check_variant(&Backend::emulator(), v, block, sizes)
                })
                .with_kind("emulator"),
            );
        }
    }
    out
}
