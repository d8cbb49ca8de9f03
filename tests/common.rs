//! What the test modules share: sizes, inputs, and the check of one variant.

use libtest_mimic::Failed;
use reduce_scan::backend::Backend;
use reduce_scan::registry::Variant;

/// Sizes that hurt (`reduce_scan::check::SIZES`, which `reduce check` uses too): 1, around a warp,
/// around a block, around 1024, odd, and a large odd.
pub use reduce_scan::check::{SEED, SIZES};

/// Runs `v` on every size with `block` threads per block; the first wrong sum or error fails
/// with variant, n, block, expected and actual (`reduce_scan::check::reduction`).
pub fn check_variant(backend: &Backend, v: &'static Variant, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        reduce_scan::check::reduction(backend, v, block, n)?;
    }
    Ok(())
}
