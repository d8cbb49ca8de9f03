//! The reduction and scan kernels of this project, written as plain `no_std` Rust.
//!
//! The same source builds two ways:
//!
//! * **for the GPU** — `runtime/build.rs` compiles this crate with rustc's NVPTX backend
//!   (`--target nvptx64-nvidia-cuda`, `-Zbuild-std=core`, one LTO'd codegen unit) into PTX
//!   for sm_70, sm_80 and sm_90, and embeds the PTX in the host library. Every
//!   [`kernel!`] becomes a `.visible .entry` whose PTX symbol is the Rust function's name.
//! * **for the host** — as an ordinary library whose kernels are Rust functions that the
//!   CPU emulator of the runtime crate (`reduce-scan-runtime`) runs, one coroutine per CUDA thread.
//!
//! Kernels reach the hardware only through [`device`] (a crate of its own, re-exported), with two
//! implementations (NVVM intrinsics and inline PTX on the GPU, the emulator's hooks on the
//! host). Index arithmetic that can be a plain function lives in [`index`] and is unit
//! tested on the host. What several kernels share (per-thread loads, warp sums, block
//! reductions and trees) lives in [`collective`], never in one kernel's file.
//!
//! Families, one file per kernel (file name = function name = PTX symbol = CLI name):
//!
//! * [`reduce`] — sums of `i32`, from the divergent neighbored-pair tree of *Professional
//!   CUDA C Programming* chapter 3 to single-pass kernels that read at memory speed.
//! * [`sumsq`] — Σ x² in the steps of the classic "CUDA sum of squares" tutorial (one
//!   thread → one block → coalesced → many blocks → a shared-memory tree per block), each
//!   timed with the kernel's own `clock64()`.
//! * [`types`] — the element types (`i32`, `u32`, `i64`, `u64`, `f32`, `f64`) and operators
//!   (`Sum`, `Min`, `Max`) of the generic kernels: `warp_shuffle`, `vector_loads`,
//!   `single_pass`, `atomic_accumulate` and the look-back scan also exist for every type ×
//!   operator, as PTX entries `{kernel}__{type}_{op}` made by [`typed_kernel!`].
//! * [`scan`] — prefix sums of `i32`: a Fenwick tree (O(n log n) work), Blelloch's
//!   work-efficient scan in bank-conflict-free shared memory, and a single-pass scan with
//!   decoupled look-back that moves each element once in and once out.
//!
//! Outside the families, [`timing`] and [`check`] hold what the measurements need on the
//! device (the stream hold before a timed run; the per-launch output checks of the benches).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(test)]
extern crate std;

// The atomics' test kernels: entries of the main PTX module, not of the nested one.
#[cfg(any(not(target_arch = "nvptx64"), not(feature = "no-entries")))]
pub mod atomics;
pub mod check;
// The library's histogram: entries of the main PTX module, not of the nested one.
#[cfg(any(not(target_arch = "nvptx64"), not(feature = "no-entries")))]
pub mod histogram;
pub mod index;
pub mod reduce;
// The library's run-length encoding: entries of the main PTX module, not of the nested one.
#[cfg(any(not(target_arch = "nvptx64"), not(feature = "no-entries")))]
pub mod run_length;
pub mod scan;
// The library's stream compaction: entries of the main PTX module, not of the nested one.
#[cfg(any(not(target_arch = "nvptx64"), not(feature = "no-entries")))]
pub mod select;
pub mod sumsq;
pub mod timing;

#[cfg(not(target_arch = "nvptx64"))]
pub mod broken;

/// The device layer (its own crate, `reduce-scan-device`, folder `device/`): every kernel
/// reaches the hardware through it, as `kernels::device::…`.
pub use device;
pub use device::{launch_device, static_shared};

/// The collective layer (its own crate, `reduce-scan-collective`, folder `collective/`): thread,
/// warp and block reductions and scans, as `kernels::collective::…`. The project's kernels and a
/// user's own kernel crate share it.
pub use collective;
/// The element types and operators of the generic kernels (`collective::types`), as
/// `kernels::types::…`.
pub use collective::types;

/// Defines a kernel: on the GPU a `#[no_mangle] extern "ptx-kernel"` entry point whose PTX
/// symbol is the function's name; on the host a plain `unsafe fn` with the same
/// parameters, which the emulator calls once per CUDA thread.
///
/// A kernel that launches kernels from the device starts with `launches;`: on the GPU it
/// exists only in the build with the `device-runtime` feature (its own PTX module, linked with
/// the CUDA device runtime), where it is exported even with `no-entries`.
///
/// ```text
/// kernel! {
///     /// Docs...
///     pub unsafe fn interleaved(g_idata: *mut i32, g_odata: *mut i32, n: u32) { ... }
/// }
/// ```
#[macro_export]
macro_rules! kernel {
    (
        launches;
        $(#[$meta:meta])*
        pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        #[cfg(all(target_arch = "nvptx64", feature = "device-runtime"))]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
    (
        $(#[$meta:meta])*
        pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[cfg_attr(not(feature = "no-entries"), unsafe(no_mangle))]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
    // An entry whose PTX symbol is not the function's name (the instantiations of
    // `typed_kernel!` and its kin: `entry`, exported as `warp_shuffle__f32_max`).
    (
        export_name = $symbol:expr;
        $(#[$meta:meta])*
        pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[cfg_attr(not(feature = "no-entries"), unsafe(export_name = $symbol))]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}

/// Instantiates a generic kernel body for every element type × operator of
/// [`types`](crate::types) except `i32` × `Sum` (the classic kernel of the same name is that
/// one): one [`kernel!`] per pair, whose PTX entry is named `{kernel}__{type}_{op}`, e.g.
/// `warp_shuffle__f32_max`. The argument list may name the element type as `T`.
///
/// The instantiations are modules of the module that invokes it, which is the kernel's own (its
/// file, `kernels/src/reduce/warp_shuffle.rs`, is `kernels::reduce::warp_shuffle`): a module per
/// type, a module per operator in it, `warp_shuffle::f32::max`, holding the kernel `entry` and
/// its PTX entry's name `NAME`.
///
/// ```text
/// typed_kernel!(warp_shuffle = warp_shuffle_generic(g_idata: *const T, g_odata: *mut T, n: u32));
/// // → pub mod u32 { pub mod sum { pub const NAME = "warp_shuffle__u32_sum";
/// //                               pub unsafe fn entry(g_idata: *const u32, g_odata: *mut u32, n: u32) } … }, …,
/// //   pub mod f64 { … pub mod max { … } }, each `entry` calling warp_shuffle_generic::<T, Op>(…)
/// ```
///
/// The host's registry (`every_pair!` in `reduce_scan::reduce::registry`) lists the same 17
/// instantiations by these modules (`kernels::reduce::warp_shuffle::f32::max`) and takes each
/// entry's name from its `NAME`, so no entry name is ever written by hand.
#[macro_export]
macro_rules! typed_kernel {
    ($kernel:ident = $generic:ident ($($arg:ident : $ty:ty),* $(,)?)) => {
        $crate::typed_kernel!(@types $kernel $generic ($($arg: $ty),*)
            [i32: min Min, max Max] [u32: sum Sum, min Min, max Max] [i64: sum Sum, min Min, max Max]
            [u64: sum Sum, min Min, max Max] [f32: sum Sum, min Min, max Max] [f64: sum Sum, min Min, max Max]);
    };
    // One module per type, holding one module per operator.
    (@types $kernel:ident $generic:ident $args:tt $([$t:ident: $($op:ident $Op:ident),+])*) => {
        $(
            #[doc = concat!("`", stringify!($kernel), "` for `", stringify!($t), "`, one module per operator.")]
            pub mod $t {
                #[allow(unused_imports)]
                use super::*;
                $($crate::typed_kernel!(@one $kernel $generic $args $t $op $Op);)+
            }
        )*
    };
    (@one $kernel:ident $generic:ident ($($arg:ident : $ty:ty),*) $t:ident $op:ident $Op:ident) => {
        #[doc = concat!(
            "`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($Op), ">` as the kernel `",
            stringify!($kernel), "__", stringify!($t), "_", stringify!($op), "`."
        )]
        pub mod $op {
            #[allow(unused_imports)]
            use super::*;
            /// The element type of this instantiation (the argument list's `T`).
            pub type T = $t;
            /// The kernel's name: its PTX entry's, and the emulator's (`{kernel}__{type}_{op}`).
            pub const NAME: &str = concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($op));
            $crate::kernel! {
                export_name = concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($op));
                #[doc = concat!("`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($Op), ">` as a kernel.")]
                ///
                /// # Safety
                #[doc = concat!("The generic body's (`", stringify!($generic), "`).")]
                pub unsafe fn entry($($arg: $ty),*) {
                    // SAFETY: this kernel's contract is the generic body's.
                    unsafe { $generic::<$t, $crate::types::$Op>($($arg),*) }
                }
            }
        }
    };
}

/// [`typed_kernel!`] for a kernel whose operator is an extreme (`types::Extreme`: an argmin or
/// argmax): one entry per element type × `min`/`max`, named `{kernel}__{type}_{op}`
/// (`arg_reduce__f32_max`, the module `arg_reduce::f32::max`), each calling
/// `$generic::<T, Min or Max>`. Twelve entries; no sum.
#[macro_export]
macro_rules! extreme_kernel {
    ($kernel:ident = $generic:ident ($($arg:ident : $ty:ty),* $(,)?)) => {
        $crate::typed_kernel!(@types $kernel $generic ($($arg: $ty),*)
            [i32: min Min, max Max] [u32: min Min, max Max] [i64: min Min, max Max]
            [u64: min Min, max Max] [f32: min Min, max Max] [f64: min Min, max Max]);
    };
}

/// [`typed_kernel!`] for a transform-reduce body generic over the element type, the transform
/// and the operator (`$generic::<T, X, O>`): one entry per element type × transform × operator
/// it lists, named `{kernel}__{type}_{transform}_{op}` (`transform_reduce__f32_product_sum`), in
/// the module `{kernel}::{type}::{transform}::{op}` (`transform_reduce::f32::product::sum`).
/// Today the product (dot products) and the square (sums of squares and norms), with the sum,
/// for the six types: twelve entries. The host's table of them (`reduce_scan::transform`) names
/// the same modules.
#[macro_export]
macro_rules! transform_kernel {
    ($kernel:ident = $generic:ident ($($arg:ident : $ty:ty),* $(,)?)) => {
        $crate::transform_kernel!(@types $kernel $generic ($($arg: $ty),*)
            [i32: (product Product: sum Sum) (square Square: sum Sum)]
            [u32: (product Product: sum Sum) (square Square: sum Sum)]
            [i64: (product Product: sum Sum) (square Square: sum Sum)]
            [u64: (product Product: sum Sum) (square Square: sum Sum)]
            [f32: (product Product: sum Sum) (square Square: sum Sum)]
            [f64: (product Product: sum Sum) (square Square: sum Sum)]);
    };
    // One module per type, holding one module per transform, holding one module per operator.
    (@types $kernel:ident $generic:ident $args:tt $([$t:ident: $(($x:ident $X:ident: $($op:ident $Op:ident),+))+])*) => {
        $(
            #[doc = concat!("`", stringify!($kernel), "` for `", stringify!($t), "`, one module per transform.")]
            pub mod $t {
                #[allow(unused_imports)]
                use super::*;
                $($crate::transform_kernel!(@transform $kernel $generic $args $t $x $X $($op $Op),+);)+
            }
        )*
    };
    (@transform $kernel:ident $generic:ident $args:tt $t:ident $x:ident $X:ident $($op:ident $Op:ident),+) => {
        #[doc = concat!("`", stringify!($kernel), "` of the ", stringify!($x), " of `", stringify!($t), "`, one module per operator.")]
        pub mod $x {
            #[allow(unused_imports)]
            use super::*;
            $($crate::transform_kernel!(@one $kernel $generic $args $t $x $X $op $Op);)+
        }
    };
    (@one $kernel:ident $generic:ident ($($arg:ident : $ty:ty),*) $t:ident $x:ident $X:ident $op:ident $Op:ident) => {
        #[doc = concat!(
            "`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($X), ", ", stringify!($Op),
            ">` as the kernel `", stringify!($kernel), "__", stringify!($t), "_", stringify!($x), "_", stringify!($op), "`."
        )]
        pub mod $op {
            #[allow(unused_imports)]
            use super::*;
            /// The element type of this instantiation (the argument list's `T`).
            pub type T = $t;
            /// The kernel's name: its PTX entry's, and the emulator's
            /// (`{kernel}__{type}_{transform}_{op}`).
            pub const NAME: &str =
                concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($x), "_", stringify!($op));
            $crate::kernel! {
                export_name = concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($x), "_", stringify!($op));
                #[doc = concat!("`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($X), ", ", stringify!($Op), ">` as a kernel.")]
                ///
                /// # Safety
                #[doc = concat!("The generic body's (`", stringify!($generic), "`).")]
                pub unsafe fn entry($($arg: $ty),*) {
                    // SAFETY: this kernel's contract is the generic body's.
                    unsafe { $generic::<$t, $crate::types::$X, $crate::types::$Op>($($arg),*) }
                }
            }
        }
    };
}

/// [`typed_kernel!`] for a body generic over the element type and a fold
/// (`collective::fold::Fold`: what a thread keeps — a plain sum, minimum or maximum, or an
/// argmin's or argmax's value and index): one entry per element type × fold, named
/// `{kernel}__{type}_{fold}` (`segmented_warp__f32_argmax`, the module
/// `segmented_warp::f32::argmax`), each calling `$generic::<T, Reduce<Sum>>`, …, `ArgOf<Max>`.
/// Thirty entries.
#[macro_export]
macro_rules! fold_kernel {
    ($kernel:ident = $generic:ident ($($arg:ident : $ty:ty),* $(,)?)) => {
        $crate::fold_kernel!(@types $kernel $generic ($($arg: $ty),*) i32 u32 i64 u64 f32 f64);
    };
    // One module per type, holding one module per fold.
    (@types $kernel:ident $generic:ident $args:tt $($t:ident)*) => {
        $(
            #[doc = concat!("`", stringify!($kernel), "` for `", stringify!($t), "`, one module per fold.")]
            pub mod $t {
                #[allow(unused_imports)]
                use super::*;
                $crate::fold_kernel!(@one $kernel $generic $args $t sum Reduce Sum);
                $crate::fold_kernel!(@one $kernel $generic $args $t min Reduce Min);
                $crate::fold_kernel!(@one $kernel $generic $args $t max Reduce Max);
                $crate::fold_kernel!(@one $kernel $generic $args $t argmin ArgOf Min);
                $crate::fold_kernel!(@one $kernel $generic $args $t argmax ArgOf Max);
            }
        )*
    };
    (@one $kernel:ident $generic:ident ($($arg:ident : $ty:ty),*) $t:ident $f:ident $Fold:ident $Op:ident) => {
        #[doc = concat!(
            "`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($Fold), "<", stringify!($Op),
            ">>` as the kernel `", stringify!($kernel), "__", stringify!($t), "_", stringify!($f), "`."
        )]
        pub mod $f {
            #[allow(unused_imports)]
            use super::*;
            /// The element type of this instantiation (the argument list's `T`).
            pub type T = $t;
            /// The kernel's name: its PTX entry's, and the emulator's (`{kernel}__{type}_{fold}`).
            pub const NAME: &str = concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($f));
            $crate::kernel! {
                export_name = concat!(stringify!($kernel), "__", stringify!($t), "_", stringify!($f));
                #[doc = concat!("`", stringify!($generic), "::<", stringify!($t), ", ", stringify!($Fold), "<", stringify!($Op), ">>` as a kernel.")]
                ///
                /// # Safety
                #[doc = concat!("The generic body's (`", stringify!($generic), "`).")]
                pub unsafe fn entry($($arg: $ty),*) {
                    // SAFETY: this kernel's contract is the generic body's.
                    unsafe { $generic::<$t, $crate::collective::fold::$Fold<$crate::types::$Op>>($($arg),*) }
                }
            }
        }
    };
}
