//! Kernels in any crate: the [`kernel!`](crate::kernel!) macro, and what the host needs to know of
//! each kernel it makes ([`KernelFn`]).
//!
//! A kernel crate is a `no_std` library (`#![no_std]` and nothing else at its top) whose
//! kernels are written inside `kernel! { … }`:
//!
//! ```
//! // #![no_std] at the top of the kernel crate's lib.rs
//! use reduce_scan_device::prelude::*;
//!
//! kernel! {
//!     /// `out[i] = a[i] + b[i]`.
//!     pub fn add(a: Slice<f32>, b: Slice<f32>, out: DisjointSlice<f32>) {
//!         for i in ThreadIndex::grid_stride(out.len()) {
//!             out.set(i, a.at(i.get()) + b.at(i.get()));
//!         }
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! The same source builds two ways. **For the GPU** (the crate compiled for
//! `nvptx64-nvidia-cuda` by `reduce-scan-build` from the host crate's `build.rs`), each kernel is
//! an entry point, `extern "ptx-kernel"` and `#[no_mangle]`: its PTX symbol is the function's
//! name (CUDA C's `extern "C" __global__ void add(…)`). **For the host**, it is a plain function
//! that the CPU emulator calls once per CUDA thread. Either way the macro also makes a module of
//! the same name holding the kernel's [`KernelFn`], the typed handle by which the host launches
//! it (`add::KERNEL`).
//!
//! **A kernel generic over its element type** names the types to instantiate it for:
//!
//! ```
//! // #![no_std] at the top of the kernel crate's lib.rs
//! use reduce_scan_device::prelude::*;
//!
//! /// What the kernel needs of its element type.
//! pub trait Num: Copy + core::ops::Add<Output = Self> + 'static {}
//! impl Num for f32 {}
//! impl Num for i32 {}
//!
//! kernel! {
//!     /// `out[i] = a[i] + b[i]`.
//!     pub fn add<T: Num>(a: Slice<T>, b: Slice<T>, out: DisjointSlice<T>) for [f32, i32] {
//!         for i in ThreadIndex::grid_stride(out.len()) {
//!             out.set(i, a.at(i.get()) + b.at(i.get()));
//!         }
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! The generic function stays generic; each type gets an entry point whose PTX symbol is
//! `{kernel}__{type}` (`add__f32`, `add__i32`: C++ would mangle `add<float>`), and the module
//! `add` holds a trait, `add::Instance`, implemented for each type, whose `KERNEL` is that
//! entry's handle: the host launches `add::<f32>` by naming the type.
//!
//! **Safe or not.** A kernel whose parameters are the checked buffers of [`slice`](crate::slice)
//! (and scalars) can be a safe `pub fn`: its body needs no `unsafe`. A kernel that takes raw
//! [`Global`](crate::global::Global) pointers, as the book's kernels do, is a `pub unsafe fn`
//! whose `# Safety` section says what the host must guarantee; the macro accepts both.

/// A kernel as the host knows it: the PTX entry's name, and the host function the emulator runs
/// once per CUDA thread with the launch's arguments (`A`, the tuple of the kernel's parameter
/// types). `kernel!` makes one per kernel (`my_kernel::KERNEL`), and per type of a generic one
/// (`<f32 as my_kernel::Instance>::KERNEL`).
pub struct KernelFn<A: 'static> {
    /// The PTX symbol (= the Rust function's name, or `{kernel}__{type}`).
    pub name: &'static str,
    /// Runs one emulated CUDA thread of the kernel.
    pub run: unsafe fn(A),
}

impl<A> Clone for KernelFn<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for KernelFn<A> {}

impl<A> core::fmt::Debug for KernelFn<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "KernelFn({})", self.name)
    }
}

/// Defines a kernel, or a generic kernel and its instantiations (module docs: [`crate::kernel`](mod@crate::kernel)).
///
/// ```text
/// kernel! { /// docs
///           pub fn name(a: Slice<f32>, …) { … } }                     // safe, one entry `name`
/// kernel! { pub unsafe fn name(a: Global<f32>, …) { … } }             // unsafe, one entry
/// kernel! { pub fn name<T: Bound>(a: Slice<T>, …) for [f32, f64] { … } }  // entries name__f32, name__f64
/// ```
///
/// On the GPU an entry is `#[no_mangle] extern "ptx-kernel"`: CUDA C's `extern "C" __global__`.
#[cfg_attr(target_arch = "nvptx64", allow_internal_unstable(abi_ptx))]
#[macro_export]
macro_rules! kernel {
    // A generic kernel and the types it is instantiated for.
    (
        $(#[$meta:meta])*
        pub fn $name:ident < $T:ident : $bound:path > ($($arg:ident : $ty:ty),* $(,)?) for [$($inst:ident),+ $(,)?] $body:block
    ) => {
        $crate::kernel!(@generic [] $(#[$meta])* $name $T [$bound] ($($arg: $ty),*) [$($inst),+] $body);
    };
    (
        $(#[$meta:meta])*
        pub unsafe fn $name:ident < $T:ident : $bound:path > ($($arg:ident : $ty:ty),* $(,)?) for [$($inst:ident),+ $(,)?] $body:block
    ) => {
        $crate::kernel!(@generic [unsafe] $(#[$meta])* $name $T [$bound] ($($arg: $ty),*) [$($inst),+] $body);
    };
    // A plain kernel, safe or unsafe.
    (
        $(#[$meta:meta])*
        pub fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $crate::kernel!(@entry [] $(#[$meta])* $name ($($arg: $ty),*) $body);
        $crate::kernel!(@handle $name $name ($($arg: $ty),*));
    };
    (
        $(#[$meta:meta])*
        pub unsafe fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) $body:block
    ) => {
        $crate::kernel!(@entry [unsafe] $(#[$meta])* $name ($($arg: $ty),*) $body);
        $crate::kernel!(@handle $name $name ($($arg: $ty),*));
    };

    // The entry point on the GPU, a plain function on the host.
    (@entry [$($safety:tt)*] $(#[$meta:meta])* $name:ident ($($arg:ident : $ty:ty),*) $body:block) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub $($safety)* extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub $($safety)* fn $name($($arg: $ty),*) $body
    };
    // `mod $module { pub type Args; pub const KERNEL }` for the entry `$entry`.
    (@handle $module:ident $entry:ident ($($arg:ident : $ty:ty),*)) => {
        #[doc = concat!("The host's handle of the kernel `", stringify!($entry), "`.")]
        #[allow(non_snake_case, dead_code)]
        #[cfg(not(target_arch = "nvptx64"))]
        pub mod $module {
            #[allow(unused_imports)]
            use super::*;
            /// The kernel's parameters, as the tuple a launch passes.
            pub type Args = ($($ty,)*);
            /// The PTX entry's name and the emulator's function.
            pub const KERNEL: $crate::kernel::KernelFn<Args> = $crate::kernel::KernelFn {
                name: stringify!($entry),
                // SAFETY: the launch that calls it promised the kernel's preconditions.
                run: |($($arg,)*)| {
                    #[allow(unused_unsafe)]
                    unsafe { super::$entry($($arg),*) }
                },
            };
        }
    };
    // The generic body, one entry per type, and the module with the `Instance` trait.
    (@generic $safety:tt $(#[$meta:meta])* $name:ident $T:ident [$bound:path] $args:tt [$($inst:ident),+] $body:block) => {
        $crate::kernel!(@generic_body $safety $(#[$meta])* $name $T [$bound] $args $body);

        #[doc = concat!("The host's handles of the instantiations of `", stringify!($name), "`.")]
        #[allow(non_snake_case, dead_code)]
        #[cfg(not(target_arch = "nvptx64"))]
        pub mod $name {
            /// The element types the kernel is instantiated for, each with its entry's handle.
            pub trait Instance: Sized + 'static {
                /// The kernel's parameters for this type, as the tuple a launch passes.
                type Args: Copy + 'static;
                /// The PTX entry's name (`{kernel}__{type}`) and the emulator's function.
                const KERNEL: $crate::kernel::KernelFn<Self::Args>;
            }
        }
        $($crate::kernel!(@instance $safety $name $T $inst $args);)+
    };
    (@generic_body [$($safety:tt)*] $(#[$meta:meta])* $name:ident $T:ident [$bound:path] ($($arg:ident : $ty:ty),*) $body:block) => {
        $(#[$meta])*
        #[inline(always)]
        pub $($safety)* fn $name<$T: $bound>($($arg: $ty),*) $body
    };
    // One type's entry (named `{kernel}__{type}` by `export_name`, in a block of its own where
    // the type parameter's name stands for the type) and its `Instance`.
    (@instance [$($safety:tt)*] $name:ident $T:ident $inst:ident ($($arg:ident : $ty:ty),*)) => {
        const _: () = {
            #[allow(dead_code)]
            type $T = $inst;

            #[cfg(target_arch = "nvptx64")]
            #[unsafe(export_name = concat!(stringify!($name), "__", stringify!($inst)))]
            pub $($safety)* extern "ptx-kernel" fn entry($($arg: $ty),*) {
                // SAFETY: this entry's contract is the generic body's.
                #[allow(unused_unsafe)]
                unsafe { $name::<$inst>($($arg),*) }
            }

            #[cfg(not(target_arch = "nvptx64"))]
            impl $name::Instance for $inst {
                type Args = ($($ty,)*);
                const KERNEL: $crate::kernel::KernelFn<Self::Args> = $crate::kernel::KernelFn {
                    name: concat!(stringify!($name), "__", stringify!($inst)),
                    // SAFETY: the launch that calls it promised the kernel's preconditions.
                    run: |($($arg,)*)| {
                        #[allow(unused_unsafe)]
                        unsafe { $name::<$inst>($($arg),*) }
                    },
                };
            }
        };
    };
}
