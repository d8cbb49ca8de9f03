//! The one list of reduction variants. The CLI, the tests, the benches, the report, the docs,
//! `reduce check` and the exercises all iterate over [`all()`]; nothing else names a kernel.
//! The entries live in one file per family (`global.rs`, `shared.rs`, `modern.rs`,
//! `sumsq.rs`).
//!
//! A [`Variant`] says what a kernel teaches and how to run it: its [`Grid`], the fields every
//! row shares (blocks per SM, allowed blocks, compute capability), and its **rows**: the
//! element types × operators it runs, each with its kernel ([`Row`]: the [`Finish`] holding
//! it, items per thread, shared memory). [`super::plan`] is the one place the axes are
//! interpreted; [`super::geometry`] sizes a row's launch; [`super::Reduction`] runs it.
//!
//! **Types and operators.** A variant declares its pairs ([`Pairs`]). Its own row is
//! [`Variant::elem`] × [`Variant::op`] with the kernel in [`Variant::finish`]: for the
//! curriculum's kernels the only one, an `i32` sum (or sum of squares). The generic variants
//! — `warp_shuffle`, `vector_loads`, `single_pass`, `atomic_accumulate` — declare every
//! [`Elem`] × [`Op::COMBINES`] ([`Pairs::Every`]): their own row is the `i32` sum, the 17 others
//! the instantiations `{name}__{type}_{op}` of their generic body (`every_pair!`). One row of
//! one variant is an [`Instance`] ([`Variant::instance`]; [`instances`] lists them all).
//!
//! **Adding a variant** (docs/adding-a-variant.md): one kernel file in `kernels/src/<family>/`,
//! one `mod`/`pub use` line in that family's `mod.rs`, one entry in this registry's family
//! file — for a generic kernel as for a classic one. The tests, the benches, the CLI and the
//! report pick it up.

use crate::error::{Error, Result};
pub use crate::types::{Elem, Op, PerElement, PerType, Value};

pub use super::nested::Children;
pub use super::plan::{
    AccumulateArgs, BlockRule, ClockedArgs, Finish, Grid, InPlaceArgs, KernelSel, LevelArgs, Nesting, Per, ReadArgs,
    Row, SharedMem, SinglePassArgs,
};

/// Which group of the curriculum a variant belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// *Professional CUDA C Programming* ch. 3: reduction in global memory, from divergent
    /// to fully unrolled.
    GlobalMemory,
    /// Ch. 5: the same trees in shared memory.
    SharedMemory,
    /// Warp shuffles, `redux.sync`, vector loads, grid-stride loops, single pass.
    Modern,
    /// The sum-of-squares tutorial, timed with in-kernel clocks.
    SumOfSquares,
}

impl Family {
    /// Every family, in teaching order.
    pub const ALL: [Family; 4] = [Family::GlobalMemory, Family::SharedMemory, Family::Modern, Family::SumOfSquares];

    /// Short name used by the CLI's `--family` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Family::GlobalMemory => "global",
            Family::SharedMemory => "shared",
            Family::Modern => "modern",
            Family::SumOfSquares => "sumsq",
        }
    }
}

/// A reduction variant.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// The name: file, kernel, PTX symbol, CLI argument and bench id.
    pub name: &'static str,
    /// Its group.
    pub family: Family,
    /// The CUDA idea it teaches, in one line.
    pub concept: &'static str,
    /// What its own row computes (`Sum`, or `SumOfSquares` for the tutorial's steps).
    pub op: Op,
    /// Its own row's element type (`I32`).
    pub elem: Elem,
    /// The element types × operators it runs: its own row only, or every pair.
    pub pairs: Pairs,
    /// Oldest GPU it runs on (compute capability).
    pub min_cc: (u32, u32),
    /// Its own row's kernel, and who turns what it writes into the answer.
    pub finish: Finish,
    /// How the grid follows from `n` and the block.
    pub grid: Grid,
    /// Its own row's elements a thread consumes before the block reduction (or per loop trip).
    pub items_per_thread: u32,
    /// Resident blocks per SM for [`Grid::Resident`] and [`Grid::PerMultiprocessor`]
    /// (`None`: ask the occupancy calculator).
    pub blocks_per_sm: Option<u32>,
    /// Its own row's shared memory.
    pub shared: SharedMem,
    /// Allowed blocks.
    pub blocks: BlockRule,
}

/// The element types × operators a variant runs besides its own row.
#[derive(Clone, Copy, Debug)]
pub enum Pairs {
    /// Its own row only ([`Variant::elem`] × [`Variant::op`]): the curriculum's kernels.
    Own,
    /// Every element type × sum, min and max: its own row is `i32` × sum; the table holds the
    /// others, `{name}__{type}_{op}` (`every_pair!`).
    Every(&'static PerType<ByOp>),
}

/// A generic variant's rows of one element type, by operator (`--combine`'s order: sum, min,
/// max); `None` where the variant's own row is that pair (`i32` × sum).
#[derive(Debug)]
pub struct ByOp;

impl PerElement for ByOp {
    type Of<T: Value> = [Option<Row<T>>; 3];
}

/// One row of one variant: the variant, the operator, and its kernel for element type `T`.
#[derive(Clone, Copy, Debug)]
pub struct Instance<T: 'static = i32> {
    /// The variant.
    pub variant: &'static Variant,
    /// The operator.
    pub op: Op,
    /// The kernel and its figures for `T`.
    pub row: Row<T>,
}

impl<T: Value> Instance<T> {
    /// `(T, op)`.
    pub fn pair(&self) -> (Elem, Op) {
        (T::ELEM, self.op)
    }

    /// Is it the variant's own row (the one its registry entry names)?
    pub fn is_own(&self) -> bool {
        self.pair() == (self.variant.elem, self.variant.op)
    }

    /// `variant/type/op`, as bench ids and failure messages name a row.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.variant.name, T::ELEM.name(), self.op.name())
    }

    /// Every PTX symbol it launches.
    pub fn symbols(&self) -> Vec<&'static str> {
        self.row.finish.symbols()
    }
}

impl Variant {
    /// Its own row ([`elem`](Self::elem) × [`op`](Self::op): the kernel of [`finish`](Self::finish)).
    pub fn own(&'static self) -> Instance<i32> {
        let row = Row { finish: self.finish, items_per_thread: self.items_per_thread, shared: self.shared };
        Instance { variant: self, op: self.op, row }
    }

    /// Its row for element type `T` and operator `op`, or an error that says which pairs it
    /// has (and which variants have every pair).
    pub fn instance<T: Value>(&'static self, op: Op) -> Result<Instance<T>> {
        if (T::ELEM, op) == (self.elem, self.op)
            && let Some(row) = T::from_i32::<RowOf>(self.own().row)
        {
            return Ok(Instance { variant: self, op, row });
        }
        if let Pairs::Every(table) = self.pairs
            && let Some(at) = Op::COMBINES.iter().position(|&o| o == op)
            && let Some(row) = T::of(table)[at]
        {
            return Ok(Instance { variant: self, op, row });
        }
        Err(self.lacks(T::ELEM, op))
    }

    /// The pairs it runs: its own row first, then (for a generic variant) the others, operator
    /// by operator, type by type.
    pub fn pairs(&self) -> Vec<(Elem, Op)> {
        let mut out = vec![(self.elem, self.op)];
        if let Pairs::Every(_) = self.pairs {
            let every = Op::COMBINES.iter().flat_map(|&op| Elem::ALL.into_iter().map(move |e| (e, op)));
            out.extend(every.filter(|&p| p != (self.elem, self.op)));
        }
        out
    }

    /// Does it run `elem` × `op` (`op` as `--combine` names it: a sum of squares is a sum)?
    pub fn supports(&self, elem: Elem, op: Op) -> bool {
        self.pairs().iter().any(|&(e, o)| e == elem && o.combine() == op.combine())
    }

    /// Is it generic (every element type × operator)?
    pub fn is_generic(&self) -> bool {
        matches!(self.pairs, Pairs::Every(_))
    }

    /// The error for a pair it does not run.
    fn lacks(&self, elem: Elem, op: Op) -> Error {
        Error::Invalid(format!(
            "variant `{}` has no {} {} kernel: only the generic variants ({}) take --type and --combine; the \
             others are i32 sums",
            self.name,
            elem.name(),
            op.name(),
            generic_names().join(", ")
        ))
    }

    /// Every PTX symbol it launches (its own row's).
    pub fn symbols(&self) -> Vec<&'static str> {
        self.finish.symbols()
    }

    /// Shared memory bytes per block at `block` threads (static + dynamic).
    pub fn shared_bytes(&self, block: u32) -> u32 {
        self.shared.bytes(block)
    }

    /// Does it overwrite its input (and so run on a scratch copy)?
    pub fn in_place(&self) -> bool {
        self.finish.needs(1, 32).scratch
    }
}

/// The rows of one type as [`Instance`]s take them (`Row<T>`).
#[derive(Debug)]
struct RowOf;

impl PerElement for RowOf {
    type Of<T: Value> = Row<T>;
}

/// The instantiations of one generic variant: `$generic::<T, Op>` of the kernels crate made
/// into entries `{name}__{type}_{op}` by `kernels::typed_kernel!`, for every type × operator but
/// `i32` × sum (the variant's own row, its classic kernel). `$finish` is the finish arm (`one`:
/// its kernel inside `KernelSel::One`) and `$args` the argument names of `kernel_ref!`; `$items`
/// gives a type's items per thread (a `const fn` of this registry) and `$shared` its static
/// shared bytes (a `const fn` of `kernels::reduce`). Each row names its instantiation by the
/// module the kernels crate gives it, `kernels::reduce::{name}::{type}::{op}`, whose `NAME` is the
/// entry's: no entry name is made here.
macro_rules! every_pair {
    ($name:ident, $finish:ident $sel:tt ($($arg:ident),*), $items:ident, $shared:ident) => {
        $crate::types::PerType {
            i32: [None, every_pair!(@row $name $finish $sel ($($arg),*) $items, $shared, i32 min),
                  every_pair!(@row $name $finish $sel ($($arg),*) $items, $shared, i32 max)],
            u32: every_pair!(@ops $name $finish $sel ($($arg),*) $items, $shared, u32),
            i64: every_pair!(@ops $name $finish $sel ($($arg),*) $items, $shared, i64),
            u64: every_pair!(@ops $name $finish $sel ($($arg),*) $items, $shared, u64),
            f32: every_pair!(@ops $name $finish $sel ($($arg),*) $items, $shared, f32),
            f64: every_pair!(@ops $name $finish $sel ($($arg),*) $items, $shared, f64),
        }
    };
    (@ops $name:ident $finish:ident $sel:tt ($($arg:ident),*) $items:ident, $shared:ident, $t:ident) => {
        [
            every_pair!(@row $name $finish $sel ($($arg),*) $items, $shared, $t sum),
            every_pair!(@row $name $finish $sel ($($arg),*) $items, $shared, $t min),
            every_pair!(@row $name $finish $sel ($($arg),*) $items, $shared, $t max),
        ]
    };
    (@row $name:ident $finish:ident one ($($arg:ident),*) $items:ident, $shared:ident, $t:ident $o:ident) => {
        Some($crate::reduce::plan::Row {
            finish: $crate::reduce::plan::Finish::$finish($crate::reduce::plan::KernelSel::One(
                $crate::kernel_ref!(instance kernels::reduce::$name::$t::$o($($arg),*)),
            )),
            items_per_thread: $items::<$t>() as u32,
            shared: $crate::reduce::plan::SharedMem::Static { bytes: kernels::reduce::$shared::<$t>() },
        })
    };
    (@row $name:ident $finish:ident kernel ($($arg:ident),*) $items:ident, $shared:ident, $t:ident $o:ident) => {
        Some($crate::reduce::plan::Row {
            finish: $crate::reduce::plan::Finish::$finish($crate::kernel_ref!(
                instance kernels::reduce::$name::$t::$o($($arg),*)
            )),
            items_per_thread: $items::<$t>() as u32,
            shared: $crate::reduce::plan::SharedMem::Static { bytes: kernels::reduce::$shared::<$t>() },
        })
    };
}

mod global;
mod modern;
mod shared;
mod sumsq;

/// Every variant, in teaching order (family by family).
pub fn all() -> impl Iterator<Item = &'static Variant> + Clone {
    global::VARIANTS.iter().chain(shared::VARIANTS).chain(modern::VARIANTS).chain(sumsq::VARIANTS)
}

/// Every row of every variant as `(variant, element type, operator)`, in teaching order.
pub fn instances() -> impl Iterator<Item = (&'static Variant, Elem, Op)> + Clone {
    all().flat_map(|v| v.pairs().into_iter().map(move |(e, o)| (v, e, o)))
}

/// Names of the generic variants (every element type × operator), in teaching order.
pub fn generic_names() -> Vec<&'static str> {
    all().filter(|v| v.is_generic()).map(|v| v.name).collect()
}

/// The row of the variant called `name` for `T` × `op`: [`find`] then [`Variant::instance`].
pub fn instance<T: Value>(name: &str, op: Op) -> Result<Instance<T>> {
    find(name)?.instance::<T>(op)
}

/// The variant called `name`, or an error listing the names there are.
pub fn find(name: &str) -> Result<&'static Variant> {
    all().find(|v| v.name == name).ok_or_else(|| {
        let names: Vec<_> = all().map(|v| v.name).collect();
        Error::Invalid(format!("no variant `{name}`; the variants are: {}", names.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both registries, reductions and scans: every name once (one CLI, one bench tree), and
    /// every PTX symbol named after its variant.
    #[test]
    fn names_are_unique_and_symbols_follow_names() {
        let reductions = all().map(|v| (v.name, v.symbols()));
        let scans = crate::scan::all().map(|v| (v.name, v.symbols()));
        let every: Vec<(&str, Vec<&str>)> = reductions.chain(scans).collect();
        let mut names: Vec<&str> = every.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), every.len(), "a name is used twice across the two registries");
        for (name, symbols) in &every {
            for s in symbols {
                assert!(s.starts_with(name), "variant {name} launches `{s}`, not named after it");
            }
        }
    }

    #[test]
    fn every_pair_once_with_macro_made_names() {
        for name in generic_names() {
            let v = find(name).unwrap();
            assert_eq!(v.pairs().len(), 18);
            for (elem, op) in v.pairs() {
                let symbols = crate::with_elem!(elem, T => v.instance::<T>(op).unwrap().symbols());
                let want = if (elem, op) == (Elem::I32, Op::Sum) {
                    name.to_string()
                } else {
                    format!("{name}__{}_{}", elem.name(), op.name())
                };
                assert_eq!(symbols, [want]);
                // One element per warp slot; single_pass adds its 16-byte "last block" flag.
                let shared = crate::with_elem!(elem, T => v.instance::<T>(op).unwrap().row.shared.bytes(256));
                let flag = if name == "single_pass" { 16 } else { 0 };
                assert_eq!(shared as usize, 32 * elem.size() + flag, "{name} {elem:?} {op:?}");
            }
        }
        assert_eq!(instances().count(), all().count() + 17 * generic_names().len());
        for name in ["warp_shuffle", "vector_loads", "single_pass", "atomic_accumulate"] {
            assert!(generic_names().contains(&name), "{name} is generic");
        }
        assert_eq!(instance::<f64>("vector_loads", Op::Sum).unwrap().row.items_per_thread, 8);
        assert_eq!(instance::<f32>("vector_loads", Op::Sum).unwrap().row.items_per_thread, 16);
        let e = instance::<f32>("interleaved", Op::Max).unwrap_err().to_string();
        assert!(e.contains(&generic_names().join(", ")), "{e}");
        assert!(find("squares_chunked").unwrap().supports(Elem::I32, Op::Sum));
        assert!(!find("interleaved").unwrap().supports(Elem::I32, Op::Min));
    }

    #[test]
    fn block_rule() {
        assert!(BlockRule::ANY.allows(32) && BlockRule::ANY.allows(1024));
        assert!(!BlockRule::ANY.allows(48) && !BlockRule::ANY.allows(16) && !BlockRule::ANY.allows(2048));
        assert_eq!(BlockRule::ANY.sizes().collect::<Vec<_>>(), vec![32, 64, 128, 256, 512, 1024]);
        assert!(find("nope").unwrap_err().to_string().contains("interleaved"));
    }
}
