//! `reduce check`: one row of a reduction variant (its own, or any element type × operator it
//! runs) over the shapes the test suite uses (every size in [`SIZES`] at every block the variant
//! allows), on the emulator with its checks, each result against the CPU reference. What an
//! experimenter runs after editing a kernel: a bug that only shows at some sizes or blocks (a
//! barrier removed between the block-level rounds of a shared tree shows only at block ≥ 64) is
//! found in seconds.

use std::io::Write;

use crate::backend::Backend;
use crate::cpu::Reference;
use crate::input::{Input, Pattern, typed};
use crate::reduce::Reduction;
use crate::registry::{Instance, Variant};
use crate::types::{Op, Value};
use crate::{Error, Result};

/// The sizes every reduction is checked at (the test suite's): 1, around a warp, around a
/// block of 512, around 1024, a few blocks, and 2^20 + 7.
pub const SIZES: &[usize] = &[1, 2, 31, 32, 33, 511, 512, 513, 1000, 1023, 1024, 1025, 4097, (1 << 20) + 7];

/// Seed of every check's input (each size draws its own stream from it).
pub const SEED: u64 = 0x5EED;

/// Runs `v` once on `n` elements with `block` threads per block (values over the whole i32
/// range, so every sum wraps); `Ok(())` when the sum is the CPU's and the caller's input is
/// untouched, else what went wrong, naming variant, n, block, expected and actual.
pub fn reduction(backend: &Backend, v: &'static Variant, block: u32, n: usize) -> std::result::Result<(), String> {
    let at = format!("variant {} n={n} block={block}", v.name);
    let input = Input::full_range(n, SEED ^ n as u64);
    let expected = Reference::for_op(v.op, &input.data);
    let buf = backend.upload(&input.data).map_err(|e| format!("{at}: upload: {e}"))?;
    let mut r = Reduction::new(backend, v, &buf, n, block).map_err(|e| format!("{at}: {e}"))?;
    r.reset().and_then(|_| r.launch()).map_err(|e| format!("{at}: {e}"))?;
    let got = r.result().map_err(|e| format!("{at}: {e}"))?;
    if got != expected.wrapped {
        return Err(format!("{at}: expected {} (CPU recursion), got {got}", expected.wrapped));
    }
    // The caller's input must be untouched (in-place kernels work on a scratch copy).
    if backend.download(&buf).map_err(|e| e.to_string())? != input.data {
        return Err(format!("{at}: the input buffer was modified"));
    }
    Ok(())
}

/// [`reduction`] for any other row of a variant (another element type or operator: values over
/// the type's range, the result against [`crate::cpu::check`]).
pub fn reduction_of<T: Value>(
    backend: &Backend,
    inst: Instance<T>,
    block: u32,
    n: usize,
) -> std::result::Result<(), String> {
    let at = format!("variant {} n={n} block={block}", inst.id());
    let data = typed::<T>(n, SEED ^ n as u64, Pattern::Random);
    let buf = backend.upload(&data).map_err(|e| format!("{at}: upload: {e}"))?;
    let mut r = Reduction::of(backend, inst, &buf, n, block).map_err(|e| format!("{at}: {e}"))?;
    r.launch().map_err(|e| format!("{at}: {e}"))?;
    let got = r.result().map_err(|e| format!("{at}: {e}"))?;
    crate::cpu::check(inst.op, &data, got, r.depth()).map_err(|e| format!("{at}: {e}"))
}

/// Checks `v`'s own row at every block it allows and every size of [`SIZES`] on the emulator
/// (its default checks on), one line per block on `out` (`block 64: PASS (14 sizes)`, or the
/// first failing size in full), progress on `err`. Returns whether every shape passed.
pub fn variant(v: &'static Variant, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    blocks(v, out, err, |backend, block, n| reduction(backend, v, block, n))
}

/// [`variant`] for `v`'s row of `T` × `op` (its own row where that is the pair).
pub fn pair<T: Value>(v: &'static Variant, op: Op, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool> {
    let inst = v.instance::<T>(op)?;
    if inst.is_own() {
        return variant(v, out, err);
    }
    blocks(v, out, err, |backend, block, n| reduction_of(backend, inst, block, n))
}

/// One line per block `v` allows: `check` at every size of [`SIZES`], the first failure in full.
fn blocks(
    v: &'static Variant,
    out: &mut dyn Write,
    err: &mut dyn Write,
    check: impl Fn(&Backend, u32, usize) -> std::result::Result<(), String>,
) -> Result<bool> {
    let backend = Backend::emulator();
    let io = |e: std::io::Error| Error::Invalid(format!("cannot write the output: {e}"));
    let mut passed = true;
    for block in v.blocks.sizes() {
        let _ = write!(err, "checking {} at block {block}…\r", v.name);
        let failure = SIZES.iter().find_map(|&n| check(&backend, block, n).err());
        match failure {
            None => writeln!(out, "block {block}: PASS ({} sizes, 1 to {})", SIZES.len(), SIZES[SIZES.len() - 1]),
            Some(why) => {
                passed = false;
                writeln!(out, "block {block}: FAIL: {why}")
            }
        }
        .map_err(io)?;
    }
    let _ = write!(err, "{:60}\r", "");
    Ok(passed)
}
