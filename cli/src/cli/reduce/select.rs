//! Which reduction variants a run selects, and the checks of its flags before anything runs.

use super::super::Args;
use super::super::Session;
use crate::cli::Layout;
use crate::reduce::geometry_of;
use crate::registry::{self, Elem, Family, Grid, Op, Variant};
use crate::types::Value;
use crate::{Error, Result};

/// The variants `--variant` and `--family` select.
pub(in crate::cli) fn selected(args: &Args) -> Result<Vec<&'static Variant>> {
    let family = match &args.family {
        None => None,
        Some(f) => Some(Family::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
            let names: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
            Error::Invalid(format!("no family `{f}`; the families are: {}", names.join(", ")))
        })?),
    };
    let list: Vec<&'static Variant> =
        if args.variant == "all" { registry::all().collect() } else { vec![registry::find(&args.variant)?] };
    if let (Some(f), [v]) = (family, &list[..])
        && v.family != f
    {
        return Err(Error::Invalid(format!(
            "--variant {} is of the family {}, not --family {}; give one of the two, or --family {}",
            v.name,
            v.family.name(),
            f.name(),
            v.family.name()
        )));
    }
    Ok(list.into_iter().filter(|v| family.is_none_or(|f| v.family == f)).collect())
}

/// The selected variants that run `elem` × `op`; a single named variant that does not, or a
/// selection with none that does, is a one-line refusal.
pub(super) fn supporting(
    args: &Args,
    variants: &[&'static Variant],
    elem: Elem,
    op: Op,
) -> Result<Vec<&'static Variant>> {
    let what = format!("--type {} --combine {}", elem.name(), op.name());
    let generic = || registry::generic_names().join(", ");
    if let [v] = variants
        && args.variant != "all"
        && !v.supports(elem, op)
    {
        return Err(Error::Invalid(format!(
            "{what}: variant `{}` is an i32 sum only; the generic variants are: {}",
            v.name,
            generic()
        )));
    }
    let running: Vec<&'static Variant> = variants.iter().copied().filter(|v| v.supports(elem, op)).collect();
    if running.is_empty() && Layout::of(elem, op) == Layout::Pair {
        return Err(Error::Invalid(format!(
            "{what}: no generic variant in the selection; the generic variants are: {}",
            generic()
        )));
    }
    Ok(running)
}

/// Checks the flags against what was selected, before anything runs.
pub(super) fn check_request<T: Value>(
    args: &Args,
    session: &Session,
    variants: &[&'static Variant],
    op: Op,
    block: u32,
) -> Result<()> {
    if variants.is_empty() {
        return Err(Error::Invalid("no variant matches the selection".into()));
    }
    if !block.is_power_of_two() || !(32..=1024).contains(&block) {
        return Err(Error::Invalid(format!("--block {block}: the block must be a power of two in 32..=1024")));
    }
    check_blocks_per_sm(args, variants)?;
    if args.variant != "all" {
        // A single named variant: a block it does not accept is bad input, not a skipped row.
        let v = variants[0];
        geometry_of(&session.backend, &v.instance::<T>(own_op(v, op))?, session.n, block, args.blocks_per_sm)?;
    }
    if session.backend.is_gpu() {
        fits_device(session.n, T::ELEM.size() as u64, 2, session.info().memory_bytes)?;
    }
    Ok(())
}

/// The operator `v` runs for `--combine op`: its own (a sum of squares is selected by `sum`).
pub(super) fn own_op(v: &Variant, op: Op) -> Op {
    crate::types::own_op(v.op, op)
}

/// `--blocks-per-sm` shapes grid-stride grids only: any other selected variant is bad input.
pub(in crate::cli) fn check_blocks_per_sm(args: &Args, variants: &[&'static Variant]) -> Result<()> {
    let strided = |v: &Variant| matches!(v.grid, Grid::Resident | Grid::PerMultiprocessor);
    if let Some(k) = args.blocks_per_sm
        && let Some(v) = variants.iter().find(|v| !strided(v))
    {
        let names: Vec<&str> = registry::all().filter(|v| strided(v)).map(|v| v.name).collect();
        return Err(Error::Invalid(format!(
            "--blocks-per-sm {k}: `{}` sizes its grid by the data; the flag applies to the grid-stride variants ({})",
            v.name,
            names.join(", ")
        )));
    }
    Ok(())
}

/// Do `copies` device arrays of `n` elements of `size` bytes (the input and a scratch copy, or a
/// scan's input and output) fit a device of `memory_bytes`? Checked before the inputs are
/// generated, so a size that cannot run fails at once, with the numbers.
pub(in crate::cli) fn fits_device(n: usize, size: u64, copies: u64, memory_bytes: u64) -> Result<()> {
    let per = size * copies;
    let need = n as u64 * per;
    if need <= memory_bytes {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "n = {n} needs {need} bytes of device memory ({copies} arrays of {size}-byte elements, {per} bytes per \
         element); the device has {memory_bytes} bytes, so n must be at most {}",
        memory_bytes / per
    )))
}

#[cfg(test)]
mod tests {
    use super::fits_device;

    #[test]
    fn n_past_the_device_memory_names_the_bytes_and_the_largest_n() {
        assert!(fits_device(1 << 20, 4, 2, 8 << 20).is_ok());
        assert!(fits_device(1 << 20, 8, 2, 8 << 20).is_err(), "64-bit elements need twice the bytes");
        let e = fits_device((1 << 20) + 1, 4, 2, 8 << 20).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid request: n = 1048577 needs 8388616 bytes of device memory (2 arrays of 4-byte elements, 8 bytes \
             per element); the device has 8388608 bytes, so n must be at most 1048576"
        );
    }
}
