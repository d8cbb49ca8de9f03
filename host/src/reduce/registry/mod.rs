//! The one list of reduction variants. The CLI, the tests, the benches and the docs all
//! iterate over [`all()`]; nothing else names a kernel. The entries live in one file per
//! family (`global.rs`, `shared.rs`, `modern.rs`, `sumsq.rs`).
//!
//! A [`Variant`] says what a kernel teaches and how to run it: its [`Finish`] (the kernel and
//! who makes the answer), its [`Grid`], and the fields every plan shares (items per thread,
//! blocks per SM, shared memory, allowed blocks). [`super::plan`] is the one place those axes
//! are interpreted; [`super::Reduction`] turns them into launches.
//!
//! **Types and operators.** [`all()`] is the curriculum: every kernel, each an `i32` sum (or
//! sum of squares). The generic variants — `warp_shuffle`, `vector_loads`,
//! `atomic_accumulate` — also exist for every [`Elem`] × [`Op::COMBINES`]: [`typed::all`]
//! lists those instantiations (their `i32` × sum row is the classic kernel itself).
//!
//! **Adding a variant of an existing shape** (docs/adding-a-variant.md): one kernel file in
//! `kernels/src/<family>/`, one `mod`/`pub use` line in that family's `mod.rs`, one entry in
//! this registry's family file. The tests, the benches, the CLI and the report pick it up.

use crate::error::{Error, Result};

pub use super::plan::{
    AccumulateArgs, BlockRule, Children, ClockedArgs, Finish, Grid, InPlaceArgs, KernelSel, LevelArgs, Nesting, Per,
    ReadArgs, SharedMem, SinglePassArgs,
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

/// Element type. The classic kernels reduce `I32`; the generic variants
/// ([`typed`]: `warp_shuffle`, `vector_loads`, `atomic_accumulate`) every type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// 32-bit signed integer, wrapping arithmetic.
    I32,
    /// 32-bit unsigned integer, wrapping arithmetic.
    U32,
    /// 64-bit signed integer, wrapping arithmetic.
    I64,
    /// 64-bit unsigned integer, wrapping arithmetic.
    U64,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
}

impl Elem {
    /// Every element type, in the order of `--type`'s list.
    pub const ALL: [Elem; 6] = [Elem::I32, Elem::U32, Elem::I64, Elem::U64, Elem::F32, Elem::F64];

    /// Bytes per element: what the throughput columns count (64-bit types move twice the
    /// bytes per element).
    pub fn size(self) -> usize {
        match self {
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    /// The Rust name: `--type`'s value, the type part of a PTX entry name, a bench id part.
    pub fn name(self) -> &'static str {
        match self {
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }

    /// A floating-point type (sums rounded, checked against an error bound)?
    pub fn is_float(self) -> bool {
        match self {
            Elem::F32 | Elem::F64 => true,
            Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64 => false,
        }
    }

    /// The type called `name`, or an error listing the types there are.
    pub fn parse(name: &str) -> Result<Elem> {
        Elem::ALL.into_iter().find(|e| e.name() == name).ok_or_else(|| {
            let names: Vec<_> = Elem::ALL.iter().map(|e| e.name()).collect();
            Error::Invalid(format!("no element type `{name}`; the types are: {}", names.join(", ")))
        })
    }
}

/// What the reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Σ x (wrapping for integers).
    Sum,
    /// Σ x² (wrapping): the sum-of-squares tutorial, `i32` only.
    SumOfSquares,
    /// The minimum (floats: NaN propagates, −0.0 < +0.0; `kernels::types`).
    Min,
    /// The maximum (floats: NaN propagates, −0.0 < +0.0).
    Max,
}

impl Op {
    /// The operators of `--combine`, in its order (sum of squares is a family, not a combine).
    pub const COMBINES: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// The name: `--combine`'s value, the operator part of a PTX entry name, a bench id part.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::SumOfSquares => "sum_of_squares",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// The `--combine` operator called `name`, or an error listing them.
    pub fn parse(name: &str) -> Result<Op> {
        Op::COMBINES.into_iter().find(|o| o.name() == name).ok_or_else(|| {
            let names: Vec<_> = Op::COMBINES.iter().map(|o| o.name()).collect();
            Error::Invalid(format!("no combine operator `{name}`; the operators are: {}", names.join(", ")))
        })
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
    /// What it computes.
    pub op: Op,
    /// Element type.
    pub elem: Elem,
    /// Oldest GPU it runs on (compute capability).
    pub min_cc: (u32, u32),
    /// The kernel, and who turns what it writes into the answer.
    pub finish: Finish,
    /// How the grid follows from `n` and the block.
    pub grid: Grid,
    /// Elements a thread consumes before the block reduction (or per loop trip).
    pub items_per_thread: u32,
    /// Resident blocks per SM for [`Grid::Resident`] and [`Grid::PerMultiprocessor`]
    /// (`None`: ask the occupancy calculator).
    pub blocks_per_sm: Option<u32>,
    /// Shared memory.
    pub shared: SharedMem,
    /// Allowed blocks.
    pub blocks: BlockRule,
}

impl Variant {
    /// Every PTX symbol it launches.
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

mod global;
mod modern;
mod shared;
mod sumsq;
pub mod typed;

pub use typed::{TypedFinish, TypedVariant, find_typed};

/// Every variant, in teaching order (family by family).
pub fn all() -> impl Iterator<Item = &'static Variant> + Clone {
    global::VARIANTS.iter().chain(shared::VARIANTS).chain(modern::VARIANTS).chain(sumsq::VARIANTS)
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
    fn block_rule() {
        assert!(BlockRule::ANY.allows(32) && BlockRule::ANY.allows(1024));
        assert!(!BlockRule::ANY.allows(48) && !BlockRule::ANY.allows(16) && !BlockRule::ANY.allows(2048));
        assert_eq!(BlockRule::ANY.sizes().collect::<Vec<_>>(), vec![32, 64, 128, 256, 512, 1024]);
        assert!(find("nope").unwrap_err().to_string().contains("interleaved"));
    }
}
