//! Every registered variant on the CPU emulator: every allowed block, every size in
//! [`SIZES`](crate::common::SIZES) (up to 2^20 + 7).

use libtest_mimic::Trial;
use reduce_scan::backend::Backend;
use reduce_scan::registry;

use crate::common::{SIZES, check_variant};

pub fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for v in registry::all() {
        for block in v.blocks.sizes() {
            out.push(
                Trial::test(format!("emulator::{}::block_{block}", v.name), move || {
                    check_variant(&Backend::emulator(), v, block, SIZES)
                })
                .with_kind("emulator"),
            );
        }
    }
    out
}
