//! A row of the registry on one input: its preconditions checked, its grid sized. The one
//! place a [`Variant`]'s shared fields (grid, blocks, compute capability) meet a row's own
//! (kernel, items per thread, shared memory).

use super::plan::{Finish, Geometry, MAX_GRID};
use super::registry::{Instance, Variant};
use crate::backend::Backend;
use crate::error::{Error, Result};

/// Checks the preconditions of the variant's own row that do not depend on the device's size:
/// `n`, the block rule, the compute capability, and that the variant has a kernel for the
/// block ([`check_of`] for any row).
pub fn check(v: &'static Variant, n: usize, block: u32, cc: (u32, u32)) -> Result<()> {
    check_of(&v.own(), n, block, cc)
}

/// [`check`] for any row of the registry.
pub fn check_of<T>(inst: &Instance<T>, n: usize, block: u32, cc: (u32, u32)) -> Result<()> {
    let v = inst.variant;
    if n == 0 {
        return Err(Error::Invalid(format!("variant `{}`: n = 0; a reduction needs n ≥ 1 elements", v.name)));
    }
    if n > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} is more than the kernels' 32-bit length parameter allows (n ≤ {})",
            v.name,
            u32::MAX
        )));
    }
    let rule = v.blocks;
    if v.grid.uses_block() && !rule.allows(block) {
        return Err(Error::Invalid(format!(
            "variant `{}`: block {block} is not allowed; block must be {rule}",
            v.name
        )));
    }
    if cc < v.min_cc {
        return Err(Error::Unsupported(format!(
            "variant `{}` needs compute capability {}.{} or newer; this device has {}.{}",
            v.name, v.min_cc.0, v.min_cc.1, cc.0, cc.1
        )));
    }
    if inst.row.finish.symbol_for(block).is_none() {
        return Err(Error::Invalid(format!("variant `{}` has no kernel for block {block}", v.name)));
    }
    Ok(())
}

/// Resident blocks per SM of the row at `block` threads: the variant's fixed `blocks_per_sm`,
/// else the occupancy calculator's answer for the row's kernel (asked once per reduction).
pub fn resident_per_sm<T>(backend: &Backend, inst: &Instance<T>, block: u32) -> Result<u32> {
    let (v, row) = (inst.variant, &inst.row);
    match v.blocks_per_sm {
        Some(k) => Ok(k),
        None => {
            let symbol = row.finish.symbol_for(block).unwrap_or(v.name);
            Ok(backend.occupancy(crate::ptx::entry(symbol), block, row.shared.dynamic_bytes(block) as usize)?.max(1))
        }
    }
}

/// Checks every precondition of running the variant's own row on `n` elements with `block`
/// threads per block on `backend`, and returns the launch geometry ([`geometry_of`] for any
/// row).
pub fn geometry(
    backend: &Backend,
    v: &'static Variant,
    n: usize,
    block: u32,
    resident: Option<u32>,
) -> Result<Geometry> {
    geometry_of(backend, &v.own(), n, block, resident)
}

/// Checks every precondition of running the row `inst` on `n` elements with `block` threads
/// per block on `backend`, and returns the launch geometry. `resident` is
/// [`resident_per_sm`]'s answer when the caller has it cached (`None`: asked here, if the grid
/// needs it).
pub fn geometry_of<T>(
    backend: &Backend,
    inst: &Instance<T>,
    n: usize,
    block: u32,
    resident: Option<u32>,
) -> Result<Geometry> {
    let (v, row) = (inst.variant, &inst.row);
    let info = backend.info();
    check_of(inst, n, block, info.compute_capability)?;
    if matches!(row.finish, Finish::Nested(_)) {
        // On a GPU: their PTX module linked with the device runtime, or one line saying why not.
        backend.nested_ready(&crate::ptx::KERNELS).map_err(|e| match e {
            Error::Unsupported(why) => {
                Error::Unsupported(format!("variant `{}` launches kernels from the device: {why}", v.name))
            }
            e => e,
        })?;
    }
    let ask = || resident.map_or_else(|| resident_per_sm(backend, inst, block), Ok);
    let (grid, block) = v.grid.size(n, block, row.items_per_thread, info.multiprocessors, ask)?;
    if grid > MAX_GRID {
        return Err(Error::Invalid(format!(
            "variant `{}`: n = {n} needs {grid} blocks of {block}; a grid holds at most {MAX_GRID}",
            v.name
        )));
    }
    Ok(Geometry {
        grid: grid as u32,
        block,
        dynamic_shared: row.shared.dynamic_bytes(block),
        shared_bytes: row.shared.bytes(block),
        needs: row.finish.needs(grid, block),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;
    use crate::types::{Elem, Op};

    #[test]
    fn geometry_rejects_bad_requests_with_reasons() {
        let b = Backend::emulator();
        let v = find("interleaved").unwrap();
        let e = geometry(&b, v, 0, 512, None).unwrap_err().to_string();
        assert!(e.contains("n ≥ 1"), "{e}");
        let e = geometry(&b, v, 100, 48, None).unwrap_err().to_string();
        assert!(e.contains("block 48") && e.contains("power of two in 32..=1024"), "{e}");
        let e = geometry(&b, v, 100, 2048, None).unwrap_err().to_string();
        assert!(e.contains("block 2048"), "{e}");
        let g = geometry(&b, v, 1025, 512, None).unwrap();
        assert_eq!((g.grid, g.block, g.needs.host_adds), (3, 512, 3));
        assert!(g.needs.scratch);
        let e = check(v, 10, 64, (6, 1)).unwrap_err().to_string();
        assert!(e.contains("compute capability 7.0"), "{e}");
    }

    #[test]
    fn a_row_of_another_type_has_its_own_items_and_shared_memory() {
        let b = Backend::emulator();
        let v = find("vector_loads").unwrap();
        let f64s = v.instance::<f64>(Op::Max).unwrap();
        assert_eq!(f64s.row.items_per_thread, 8);
        let g = geometry_of(&b, &f64s, 1 << 12, 256, Some(1)).unwrap();
        assert_eq!((g.grid, g.shared_bytes), (2, 256));
        assert_eq!(v.instance::<f32>(Op::Sum).unwrap().row.items_per_thread, 16);
        assert!(find("interleaved").unwrap().instance::<f32>(Op::Max).is_err());
        assert_eq!(f64s.pair(), (Elem::F64, Op::Max));
    }
}
