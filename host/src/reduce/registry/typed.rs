//! The generic variants × element type × operator: one [`TypedVariant`] per PTX entry
//! `{variant}__{type}_{op}` that `kernels::typed_kernel!` makes, plus the classic kernel for
//! `i32` × sum. Made by the `typed_variants!` macro, with the same macro-built names as the kernels
//! crate, so no entry name is written by hand.
//!
//! A typed variant shares its curriculum entry's plan ([`TypedVariant::base`]: family, concept,
//! grid, allowed blocks, compute capability) and has its own kernel, items per thread (64-bit
//! types read 8 per trip of 128-bit loads, not 16) and shared bytes (one `T` per warp).

use super::{Elem, Op, Variant};
use crate::backend::Kernel;
use crate::error::{Error, Result};

/// A typed kernel that reads its input and writes one partial per block: `(g_idata,
/// g_odata, n)`, the pointers erased to bytes (the element type is [`TypedVariant::elem`]).
pub type TypedReadArgs = (*const u8, *mut u8, u32);
/// A typed kernel that accumulates with atomics: `(g_idata, g_acc, n, epoch)`, pointers erased.
pub type TypedAccumulateArgs = (*const u8, *mut u8, u32, u32);
/// A typed single-pass kernel: `(g_idata, g_partials, g_ticket, g_out, n)`, element pointers
/// erased.
pub type TypedSinglePassArgs = (*const u8, *mut u8, *mut u32, *mut u8, u32);

/// The finish axis of a typed plan (the counterpart of [`super::Finish`]), matched only in
/// `reduce_scan::reduce::typed`.
#[derive(Clone, Copy, Debug)]
pub enum TypedFinish {
    /// One partial per block; the host combines them.
    HostCombines(Kernel<TypedReadArgs>),
    /// One launch: each block folds its result into `g_acc[epoch % 2]` with an atomic.
    AtomicCombines(Kernel<TypedAccumulateArgs>),
    /// One launch: the last block to finish combines the per-block partials into `*g_out`.
    LastBlockCombines(Kernel<TypedSinglePassArgs>),
}

/// One instantiation of a generic variant.
#[derive(Clone, Copy, Debug)]
pub struct TypedVariant {
    /// The generic variant's name (its curriculum entry's).
    pub name: &'static str,
    /// Element type.
    pub elem: Elem,
    /// Operator.
    pub op: Op,
    /// The kernel and who finishes.
    pub finish: TypedFinish,
    /// Elements a thread consumes before the block reduction (or per loop trip).
    pub items_per_thread: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
}

impl TypedVariant {
    /// The curriculum entry of the same name (its grid, blocks, family, compute capability).
    pub fn base(&self) -> Result<&'static Variant> {
        super::find(self.name)
    }

    /// The PTX symbol it launches (`warp_shuffle__f32_max`, or `warp_shuffle` for i32 × sum).
    pub fn symbol(&self) -> &'static str {
        match self.finish {
            TypedFinish::HostCombines(k) => k.name,
            TypedFinish::AtomicCombines(k) => k.name,
            TypedFinish::LastBlockCombines(k) => k.name,
        }
    }

    /// `variant/type/op`, as bench ids and failure messages name it.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.name, self.elem.name(), self.op.name())
    }
}

/// A [`Kernel`] over erased pointers for a typed kernel of the kernels crate.
macro_rules! erased_ref {
    // The single-pass kernels: the result pointer (`o`) is an element pointer too.
    ($($path:ident)::+ (a, b, t, o, n)) => {
        Kernel {
            name: $crate::__last_ident!($($path)::+),
            // SAFETY: as below; `o` points to one element of the variant's type.
            emu: |(a, b, t, o, n)| unsafe { $($path)::+(kernels::device::global::Global::from_erased(a), kernels::device::global::GlobalMut::from_erased(b), t.into(), kernels::device::global::GlobalMut::from_erased(o), n) },
            module: &$crate::ptx::KERNELS,
        }
    };
    ($($path:ident)::+ (a, b $(, $rest:ident)*)) => {
        Kernel {
            name: $crate::__last_ident!($($path)::+),
            // SAFETY: the launcher that holds this Kernel checked that the buffers hold this
            // variant's element type (`TypedVariant::elem`) and the arguments.
            emu: |(a, b $(, $rest)*)| unsafe { $($path)::+(kernels::device::global::Global::from_erased(a), kernels::device::global::GlobalMut::from_erased(b) $(, $rest)*) },
            module: &$crate::ptx::KERNELS,
        }
    };
}

/// The 18 [`TypedVariant`]s of one generic variant: the classic kernel for i32 × sum (whose
/// items per thread `$classic_items` gives), and the `{variant}__{type}_{op}` entries for the
/// rest; `$items` and `$shared` are the kernels crate's `const fn`s of the element type.
macro_rules! typed_variants {
    ($variant:ident, $finish:ident ($($arg:ident),*), $items:ident, $classic_items:ident, $shared:ident) => {
        [
            typed_variants!(@one $variant $finish ($($arg),*) $classic_items, $shared, I32 i32 Sum sum classic),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U32 u32 Sum sum),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, I64 i64 Sum sum),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U64 u64 Sum sum),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F32 f32 Sum sum),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F64 f64 Sum sum),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, I32 i32 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U32 u32 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, I64 i64 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U64 u64 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F32 f32 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F64 f64 Min min),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, I32 i32 Max max),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U32 u32 Max max),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, I64 i64 Max max),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, U64 u64 Max max),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F32 f32 Max max),
            typed_variants!(@one $variant $finish ($($arg),*) $items, $shared, F64 f64 Max max),
        ]
    };
    (@one $variant:ident $finish:ident ($($arg:ident),*) $items:ident, $shared:ident, $E:ident $t:ident $O:ident $o:ident classic) => {
        TypedVariant {
            name: stringify!($variant),
            elem: Elem::$E,
            op: Op::$O,
            finish: TypedFinish::$finish(erased_ref!(kernels::reduce::$variant($($arg),*))),
            items_per_thread: $items::<$t>() as u32,
            shared_bytes: $shared::<$t>(),
        }
    };
    (@one $variant:ident $finish:ident ($($arg:ident),*) $items:ident, $shared:ident, $E:ident $t:ident $O:ident $o:ident) => {
        TypedVariant {
            name: stringify!($variant),
            elem: Elem::$E,
            op: Op::$O,
            finish: TypedFinish::$finish(erased_ref!(kernels::reduce::${concat($variant, __, $t, _, $o)}($($arg),*))),
            items_per_thread: $items::<$t>() as u32,
            shared_bytes: $shared::<$t>(),
        }
    };
}

/// `warp_shuffle`'s items per thread, whatever the type (eight elements in registers).
#[allow(clippy::extra_unused_type_parameters)] // same shape as `trip::<T>` for the macro
const fn eight<T>() -> usize {
    kernels::reduce::ITEMS_PER_THREAD
}

/// The grid-stride kernels' items per trip: four 128-bit loads (16 elements of 32 bits, 8 of 64).
const fn trip<T: kernels::types::Element>() -> usize {
    kernels::collective::thread::items_per_trip::<T>()
}

/// The classic `atomic_accumulate`'s items per trip, from its own tuning constant
/// (`kernels::reduce::ATOMIC_ACCUMULATE_LOADS` 128-bit loads of `i32`; four today, as its
/// typed siblings).
#[allow(clippy::extra_unused_type_parameters)] // same shape as `trip::<T>` for the macro
const fn atomic_trip<T>() -> usize {
    kernels::reduce::ATOMIC_ACCUMULATE_ITEMS_PER_TRIP
}

use kernels::reduce::{
    atomic_accumulate_shared_bytes, single_pass_shared_bytes, vector_loads_shared_bytes, warp_shuffle_shared_bytes,
};

static WARP_SHUFFLE: [TypedVariant; 18] =
    typed_variants!(warp_shuffle, HostCombines(a, b, n), eight, eight, warp_shuffle_shared_bytes);
static VECTOR_LOADS: [TypedVariant; 18] =
    typed_variants!(vector_loads, HostCombines(a, b, n), trip, trip, vector_loads_shared_bytes);
static SINGLE_PASS: [TypedVariant; 18] =
    typed_variants!(single_pass, LastBlockCombines(a, b, t, o, n), trip, trip, single_pass_shared_bytes);
static ATOMIC_ACCUMULATE: [TypedVariant; 18] =
    typed_variants!(atomic_accumulate, AtomicCombines(a, b, n, e), trip, atomic_trip, atomic_accumulate_shared_bytes);

/// Every typed instantiation: generic variant (teaching order) × type × operator.
pub fn all() -> impl Iterator<Item = &'static TypedVariant> + Clone {
    WARP_SHUFFLE.iter().chain(VECTOR_LOADS.iter()).chain(SINGLE_PASS.iter()).chain(ATOMIC_ACCUMULATE.iter())
}

/// Names of the generic variants (those with typed instantiations), in teaching order.
pub fn generic_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = all().map(|t| t.name).collect();
    names.dedup();
    names
}

/// Is `name` a generic variant (one with instantiations for every type and operator)?
pub fn is_generic(name: &str) -> bool {
    all().any(|t| t.name == name)
}

/// The instantiation of variant `name` for `elem` × `op`, or an error that says which
/// variants are generic.
pub fn find_typed(name: &str, elem: Elem, op: Op) -> Result<&'static TypedVariant> {
    all().find(|t| t.name == name && t.elem == elem && t.op == op).ok_or_else(|| {
        Error::Invalid(format!(
            "variant `{name}` has no {} {} kernel: only the generic variants ({}) take --type and --combine; the \
             others are i32 sums",
            elem.name(),
            op.name(),
            generic_names().join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_once_with_macro_made_names() {
        for name in generic_names() {
            for elem in Elem::ALL {
                for op in Op::COMBINES {
                    let t = find_typed(name, elem, op).unwrap();
                    let want = if (elem, op) == (Elem::I32, Op::Sum) {
                        name.to_string()
                    } else {
                        format!("{name}__{}_{}", elem.name(), op.name())
                    };
                    assert_eq!(t.symbol(), want);
                    // One element per warp slot; single_pass adds its 16-byte "last block" flag.
                    let flag = if name == "single_pass" { 16 } else { 0 };
                    assert_eq!(t.shared_bytes as usize, 32 * elem.size() + flag);
                    assert!(t.base().is_ok());
                }
            }
        }
        assert_eq!(all().count(), 4 * 18);
        assert_eq!(generic_names(), ["warp_shuffle", "vector_loads", "single_pass", "atomic_accumulate"]);
        assert_eq!(find_typed("vector_loads", Elem::F64, Op::Sum).unwrap().items_per_thread, 8);
        assert_eq!(find_typed("vector_loads", Elem::F32, Op::Sum).unwrap().items_per_thread, 16);
        let e = find_typed("interleaved", Elem::F32, Op::Max).unwrap_err().to_string();
        assert!(e.contains("warp_shuffle, vector_loads, single_pass, atomic_accumulate"), "{e}");
    }
}
