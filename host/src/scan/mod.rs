//! Prefix sums (scans) on the GPU or the emulator, laid out like [`crate::reduce`](mod@crate::reduce): one track
//! for every element type and operator.
//!
//! * [`registry`](mod@registry) — the one list of scan variants ([`all()`]); each declares the
//!   pairs it runs (`lookback` every pair: the classic kernel for `i32` sums,
//!   `lookback__{type}_{op}` for the others). [`choose`] is the library's plan.
//! * [`plan`] — preconditions ([`check`]), the recursions' levels, the launches, the geometry.
//! * [`cpu`] — the CPU references (every type and operator, the float bound).
//! * [`Scan`] — one row prepared on one input; [`measure`] times and checks it.
//! * [`Scanner`] — the library object (any type, any operator); [`inclusive_scan`] /
//!   [`exclusive_scan`] for callers who just want an `i32` sum, [`typed`]'s for any pair.
//!
//! | variant | launches | scratch |
//! |---|---|---|
//! | `bit` | `bit_build` × (1 + ⌊log₂₀₄₈(n/2)⌋) (strides 1, 2048, 2048², …), `bit_query` | the tree (n words) |
//! | `blelloch` | `blelloch_reduce` per level but the last (n, n/4096, … → 1 tile), then `blelloch_block` per level, top-down | the tile sums of each level but the last |
//! | `lookback` (and its tuning shapes) | `lookback` once (`lookback__{type}_{op}` for the other pairs) | one status word per tile (and two value slots per tile for the other pairs) |
//! | `lookback_bulk` (and `lookback_bulk_load_only`; sm_90) | itself once | one status word per tile |
//! | `lookback_persistent` (sm_90) | itself once, as many blocks as fit at once | one status word per tile, then the ticket counter |
//! | `lookback_warpspec` (its tuning shapes and experiments; sm_90) | itself once, as many blocks as fit at once | one status word per tile (two for 64-bit types; two, the second unused, for `lookback_warpspec_8x12x6` and its 32-bit rows), then the ticket counter |
//!
//! Every row runs through one workspace shape (`ScanWorkspace`: status words, value slots,
//! the recursions' scratch) and one launch path, for a prepared [`Scan`] and for a [`Scanner`]
//! alike.
//!
//! **Never the input.** Every kernel reads `input` and writes `output` or scratch the
//! workspace owns; `input` and `output` are distinct buffers by construction (`&` and `&mut`).

pub mod by_device;
pub mod cpu;
mod kind;
mod levels;
pub mod plan;
pub mod registry;
mod run;
mod scanner;
mod workspace;

pub use by_device::{choose_on, fastest_on};
pub use kind::Kind;
pub use levels::{Level, bit_strides, blelloch_levels};
pub use plan::{ScanGeometry, check, check_of};
pub use registry::{
    BULK_ON_SM90, BitBuildArgs, BitQueryArgs, BlellochBlockArgs, BlellochReduceArgs, LookbackArgs, LookbackValuesArgs,
    ScanByOp, ScanInstance, ScanPairs, ScanPlan, ScanVariant, all, choose, curriculum, fastest, find, generic_names,
    instances,
};
pub use run::{Scan, ScanMeasurement, measure, mismatch_text, scan_depth, scan_with, verdict};
pub use scanner::Scanner;

use kernels::types::Sum;

use crate::backend::{Backend, DeviceBuffer};
use crate::error::Result;
use crate::types::{OpKind, Value};

/// Scans all of `input` into `output` (`output[i] = input[0] + … + input[i]`, wrapping) with
/// the fastest variant, and waits for it. `output` must hold at least `input.len()`
/// elements; `input` is not modified. An empty `input` is a no-op (nothing to write). A
/// one-shot [`Scanner`]`::<i32, Sum>`; [`typed::inclusive_scan`] for the other types and
/// operators.
pub fn inclusive_scan(backend: &Backend, input: &DeviceBuffer<i32>, output: &mut DeviceBuffer<i32>) -> Result<()> {
    Scanner::<i32, Sum>::new(backend).inclusive(input, output)
}

/// Like [`inclusive_scan`], but exclusive: `output[i] = input[0] + … + input[i-1]`,
/// `output[0] = 0`. An empty `input` is a no-op.
pub fn exclusive_scan(backend: &Backend, input: &DeviceBuffer<i32>, output: &mut DeviceBuffer<i32>) -> Result<()> {
    Scanner::<i32, Sum>::new(backend).exclusive(input, output)
}

/// `O`-scans all of `input` into `output` and waits (an empty input is a no-op): a one-shot
/// [`Scanner`]`::<T, O>`.
pub fn scan<T: Value, O: OpKind>(
    backend: &Backend,
    kind: Kind,
    input: &DeviceBuffer<T>,
    output: &mut DeviceBuffer<T>,
) -> Result<()> {
    let mut scanner = Scanner::<T, O>::new(backend);
    scanner.enqueue(kind, input, 0..input.len(), output)?;
    scanner.wait()
}

/// The one-shot scans of any element type and operator, at the path they have had since #24
/// (`reduce_scan::scan::typed::inclusive_scan::<f32, Max>`).
///
/// ```
/// use reduce_scan::scan::typed::{exclusive_scan, inclusive_scan};
/// use reduce_scan::{Backend, Max, Sum};
/// let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
/// let input = backend.upload(&[2.5f64, -1.0, f64::NAN, 7.0])?;
/// let mut output = backend.alloc::<f64>(4)?;
/// inclusive_scan::<f64, Max>(&backend, &input, &mut output)?;
/// let got = backend.download(&output)?;
/// assert_eq!((got[0], got[1]), (2.5, 2.5));
/// assert!(got[2].is_nan() && got[3].is_nan()); // NaN propagates
/// let ints = backend.upload(&[u64::MAX, 2, 3])?;
/// let mut sums = backend.alloc::<u64>(3)?;
/// exclusive_scan::<u64, Sum>(&backend, &ints, &mut sums)?;
/// assert_eq!(backend.download(&sums)?, [0, u64::MAX, 1]); // integer sums wrap
/// # Ok::<(), reduce_scan::Error>(())
/// ```
pub mod typed {
    use super::{Kind, scan};
    use crate::backend::{Backend, DeviceBuffer};
    use crate::error::Result;
    use crate::types::{OpKind, Value};

    /// `output[i] = input[0] ⊕ … ⊕ input[i]` for every element of `input`
    /// (`inclusive_scan::<f32, Max>(&backend, &input, &mut output)`); waits.
    pub fn inclusive_scan<T: Value, O: OpKind>(
        backend: &Backend,
        input: &DeviceBuffer<T>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        scan::<T, O>(backend, Kind::Inclusive, input, output)
    }

    /// `output[i] = input[0] ⊕ … ⊕ input[i-1]`, `output[0]` = the identity (0, the type's
    /// largest value for min, its smallest for max); waits.
    pub fn exclusive_scan<T: Value, O: OpKind>(
        backend: &Backend,
        input: &DeviceBuffer<T>,
        output: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        scan::<T, O>(backend, Kind::Exclusive, input, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Op;

    /// `v`'s row for `T` (sums) at `n`: the plan's `scratch_bytes` (what the CLI and the benches
    /// report) is 8 bytes for each status word `single_pass_launch` has the workspace allocate.
    /// Rows that are not single-pass, or that `T` does not have, are skipped (false).
    fn scratch_agrees<T: Value>(backend: &Backend, v: &'static ScanVariant, n: usize) -> bool {
        let Ok(inst) = v.instance::<T>(Op::Sum) else { return false };
        let Ok((_, _, words)) = plan::single_pass_launch(backend, &inst, n) else { return false };
        let size = std::mem::size_of::<T>();
        assert_eq!(inst.plan.scratch_bytes(n, size), 8 * words as u64, "{} {:?} n={n}", v.name, T::ELEM);
        true
    }

    #[test]
    fn scratch_bytes_are_the_status_words_a_launch_allocates() {
        let backend = Backend::emulator();
        let mut checked = Vec::new();
        for v in all() {
            for n in [1, 4097, (1 << 20) + 7] {
                if scratch_agrees::<i32>(&backend, v, n) {
                    checked.push(format!("{} i32", v.name));
                }
                if scratch_agrees::<u64>(&backend, v, n) {
                    checked.push(format!("{} u64", v.name));
                }
            }
        }
        // The layouts: packed (and the warp-specialized scan's packed, its spaced), and the
        // halves of a 64-bit type.
        for row in [
            "lookback i32",
            "lookback_warpspec_8x12x6_packed i32",
            "lookback_warpspec_8x12x6 i32",
            "lookback_warpspec_8x12x6 u64",
        ] {
            assert!(checked.iter().any(|c| c == row), "{row} was not checked");
        }
    }

    #[test]
    fn tuning_shapes_match_the_kernels_list() {
        // The cache-hint ablations keep lookback's own shape; the tuning shapes are the others.
        let own = (kernels::scan::LOOKBACK_THREADS, kernels::scan::LOOKBACK_ITEMS);
        let one_tile_per_block = |v: &&ScanVariant| {
            matches!(v.plan, ScanPlan::DecoupledLookback { .. }) && !v.name.starts_with("lookback_bulk")
        };
        let reshaped = |v: &&ScanVariant| one_tile_per_block(v) && v.tuning && (v.block(), v.tile() / v.block()) != own;
        let shapes: Vec<(u32, u32)> = all()
            .filter(reshaped)
            .map(|v| match v.plan {
                ScanPlan::DecoupledLookback { threads, items, .. } => (threads, items),
                _ => panic!("{} is a tuning variant without a look-back plan", v.name),
            })
            .collect();
        assert_eq!(shapes, kernels::scan::LOOKBACK_TUNING.to_vec());
        for v in all().filter(reshaped) {
            assert_eq!(v.name, format!("lookback_{}x{}", v.block(), v.tile() / v.block()));
        }
    }

    #[test]
    fn warpspec_shapes_match_the_kernels_list() {
        // A shape's name is its numbers (`lookback_warpspec` for the first); an experiment on a
        // shape's code is named for the shape and what it changes (`lookback_warpspec_store_bulk`,
        // on 8x12x6, is the one older name).
        let default = (kernels::scan::WARPSPEC_WARPS, kernels::scan::WARPSPEC_ITEMS, kernels::scan::WARPSPEC_STAGES);
        let shape_name = |shape: (u32, u32, u32)| {
            if shape == default {
                "lookback_warpspec".to_string()
            } else {
                format!("lookback_warpspec_{}x{}x{}", shape.0, shape.1, shape.2)
            }
        };
        let (mut shapes, mut experiments) = (Vec::new(), 0);
        for v in all() {
            let ScanPlan::WarpSpecialized { warps, items, stages, lookaheads, spacing, .. } = v.plan else { continue };
            // The plan's shape and the larger-tile shapes added after it space their status words
            // (what each kernel writes: workspace.rs's emulator test); the rest keep them packed.
            let spaced = ["lookback_warpspec_8x12x6", "lookback_warpspec_10x12x4", "lookback_warpspec_12x12x4"];
            assert_eq!(spaced.contains(&v.name), spacing > 1, "{}", v.name);
            let name = shape_name((warps, items, stages));
            if v.name == name {
                shapes.push((warps, items, stages));
                assert_eq!(v.tuning, name != "lookback_warpspec", "{}", v.name);
                assert_eq!(lookaheads, 1, "{}", v.name);
            } else {
                let known = kernels::scan::WARPSPEC_SHAPES.contains(&(warps, items, stages));
                assert!(
                    known && v.name.starts_with(&format!("{name}_")) || v.name == "lookback_warpspec_store_bulk",
                    "{}",
                    v.name
                );
                assert!(v.tuning, "{} is an experiment", v.name);
                assert_eq!(v.name.contains("_lookahead"), lookaheads > 1, "{}", v.name);
                experiments += 1;
            }
            assert_eq!(v.block(), 32 * (warps + 1 + lookaheads), "{}", v.name);
            assert_eq!(v.tile(), 32 * warps * items, "{}", v.name);
        }
        assert_eq!(shapes, kernels::scan::WARPSPEC_SHAPES.to_vec());
        assert_eq!(shapes[0], default, "lookback_warpspec is the first shape");
        assert_eq!(
            experiments, 20,
            "store_bulk, four ahead, six lookahead, three early_empty, two sleep, three windows, one packed experiments"
        );
    }

    #[test]
    fn levels_and_strides() {
        assert_eq!(blelloch_levels(1), vec![Level { len: 1, grid: 1 }]);
        assert_eq!(
            blelloch_levels(1 << 30),
            vec![Level { len: 1 << 30, grid: 1 << 18 }, Level { len: 1 << 18, grid: 64 }, Level { len: 64, grid: 1 }]
        );
        assert_eq!(bit_strides(1), vec![1]);
        assert_eq!(bit_strides(1 << 30), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides((1 << 28) - 1), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides(1 << 23), vec![1, 2048, 1 << 22]);
        assert_eq!(bit_strides((1 << 23) - 1), vec![1, 2048]);
    }

    #[test]
    fn preconditions_say_what_is_wrong() {
        let v = fastest((7, 0));
        let e = check(v, Kind::Inclusive, 0, 10, 10, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("n = 0") && e.contains("n ≥ 1"), "{e}");
        let e = check(v, Kind::Inclusive, 10, 10, 9, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("output holds 9") && e.contains("at least n"), "{e}");
        let e = check(v, Kind::Exclusive, 10, 9, 10, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("input holds 9"), "{e}");
        let e = check(v, Kind::Inclusive, 10, 10, 10, (6, 1)).unwrap_err().to_string();
        assert!(e.contains("compute capability 7.0"), "{e}");
        let e = check(v, Kind::Inclusive, 1 << 33, 1 << 33, 1 << 33, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("32-bit"), "{e}");
        assert!(find("nope").unwrap_err().to_string().contains("lookback"));
    }

    #[test]
    fn lookback_runs_every_pair_with_macro_made_names() {
        let v = find("lookback").unwrap();
        assert_eq!(v.pairs().len(), 18);
        for (elem, op) in v.pairs() {
            let symbols = crate::with_elem!(elem, T => v.instance::<T>(op).unwrap().plan.symbols());
            let want = if (elem, op) == (crate::types::Elem::I32, crate::types::Op::Sum) {
                "lookback".to_string()
            } else {
                format!("lookback__{}_{}", elem.name(), op.name())
            };
            assert_eq!(symbols, [want]);
        }
        assert_eq!(generic_names(), ["lookback", "lookback_warpspec_8x12x6"]);
        let e = find("bit").unwrap().instance::<f32>(crate::types::Op::Max).unwrap_err().to_string();
        assert!(e.contains("lookback") && e.contains("i32 sums"), "{e}");
    }
}
