//! Every registered variant on the CPU emulator: every allowed block, every size in
//! [`SIZES`](crate::common::SIZES) (up to 2^20 + 7).

use host::backend::Backend;
use host::registry;
use libtest_mimic::Trial;

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
