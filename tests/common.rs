//! What the test modules share: sizes, inputs, and the check of one variant.

use host::backend::Backend;
use host::cpu::Reference;
use host::input::Input;
use host::reduce::Reduction;
use host::registry::Variant;
use libtest_mimic::Failed;

/// Sizes that hurt: 1, around a warp, around a block, around 1024, odd, and a large odd.
pub const SIZES: &[usize] = &[1, 2, 31, 32, 33, 511, 512, 513, 1000, 1023, 1024, 1025, 4097, (1 << 20) + 7];

/// Seed of every test input (each size draws its own stream from it).
pub const SEED: u64 = 0x5EED;

/// Runs `v` on every size with `block` threads per block; the first wrong sum or error fails
/// with variant, n, block, expected and actual.
pub fn check_variant(backend: &Backend, v: &'static Variant, block: u32, sizes: &[usize]) -> Result<(), Failed> {
    for &n in sizes {
        // Values over the whole i32 range: every sum wraps, and must wrap exactly as the CPU's.
        let input = Input::full_range(n, SEED ^ n as u64);
        let expected = Reference::for_op(v.op, &input.data);
        let buf = backend.upload(&input.data).map_err(|e| format!("{}: upload n={n}: {e}", v.name))?;
        let mut r = Reduction::new(backend, v, &buf, n, block)
            .map_err(|e| format!("variant {} n={n} block={block}: {e}", v.name))?;
        r.reset().and_then(|_| r.launch()).map_err(|e| format!("variant {} n={n} block={block}: {e}", v.name))?;
        let got = r.result().map_err(|e| format!("variant {} n={n} block={block}: {e}", v.name))?;
        if got != expected.wrapped {
            return Err(format!(
                "variant {} n={n} block={block}: expected {} (CPU recursion), got {got}",
                v.name, expected.wrapped
            )
            .into());
        }
        // The caller's input must be untouched (in-place kernels work on a scratch copy).
        let after = backend.download(&buf).map_err(|e| e.to_string())?;
        if after != input.data {
            return Err(format!("variant {} n={n} block={block}: the input buffer was modified", v.name).into());
        }
    }
    Ok(())
}
