//! What the test modules share: sizes, inputs, the check of one variant, and private temporary folders.

use libtest_mimic::Failed;
use reduce_scan::backend::Backend;
use reduce_scan::registry::Variant;
use reduce_scan::types::Value;

/// Sizes that hurt (`reduce_scan_cli::check::SIZES`, which `reduce check` uses too): 1, around a warp,
/// around a block, around 1024, odd, and a large odd.
pub use reduce_scan_cli::check::{SEED, SIZES};

/// Runs `v` on every size with `block` threads per block; the first wrong sum or error fails
/// with variant, n, block, expected and actual (`reduce_scan_cli::check::reduction`).
pub fn check_variant(backend: &Backend, v: &'static Variant, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        reduce_scan_cli::check::reduction(backend, v, block, n)?;
    }
    Ok(())
}

/// A private temporary folder (issue 41): a random name `<prefix><random>`, created exclusively
/// with mode 0700 (the `tempfile` crate; its default mode is the umask's), removed with all in it
/// when dropped.
pub fn private_dir(prefix: &str) -> Result<tempfile::TempDir, String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::Permissions::from_mode(0o700);
    tempfile::Builder::new().prefix(prefix).permissions(mode).tempdir().map_err(|e| e.to_string())
}

/// `reduce ARGS` in this process on the emulator, one timed run: (exit status, stdout, stderr).
pub fn reduce_on_the_emulator(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = ["reduce", "--backend", "emulator", "--repeat", "1"].iter().chain(args);
    let code = reduce_scan_cli::cli::run_with(argv, &mut out, &mut err);
    (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
}

/// For an argmin (`min`) or argmax: the extreme's identity (+inf or `MAX` for argmin, −inf or
/// `MIN` for argmax), which no element beats, and a value that beats it (−3 or 3): the inputs
/// of the tests of `Arg::update`'s "nothing held" rule.
pub fn arg_identity_and_winner<T: Value>(min: bool) -> (T, T) {
    let identity = T::from_f64(if min { f64::INFINITY } else { f64::NEG_INFINITY });
    (identity, T::from_f64(if min { -3.0 } else { 3.0 }))
}
