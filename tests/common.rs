//! What the test modules share: sizes, inputs, and the check of one variant.

use host::backend::Backend;
use host::registry::Variant;
use libtest_mimic::Failed;

/// Sizes that hurt (`host::check::SIZES`, which `reduce check` uses too): 1, around a warp,
/// around a block, around 1024, odd, and a large odd.
pub use host::check::{SEED, SIZES};

/// Runs `v` on every size with `block` threads per block; the first wrong sum or error fails
/// with variant, n, block, expected and actual (`host::check::reduction`).
pub fn check_variant(backend: &Backend, v: &'static Variant, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        host::check::reduction(backend, v, block, n)?;
    }
    Ok(())
}
