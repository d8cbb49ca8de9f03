//! A kernel crate's kernels as typed methods: the [`module!`](crate::module!) macro.
//!
//! A host crate whose `build.rs` compiled a kernel crate with `reduce-scan-build` names that
//! crate's kernels once:
//!
//! ```ignore
//! reduce_scan::module! {
//!     /// The kernels of `dot-kernels`.
//!     pub struct DotKernels(dot_kernels) { dot<T>, scale }
//! }
//! ```
//!
//! and launches each by its name, on any [`Backend`](crate::Backend), with its parameters as a
//! tuple of the kernel's own parameter types, checked by the compiler:
//!
//! ```ignore
//! let k = DotKernels::new(&backend);
//! // SAFETY: the buffers are this backend's, as long as the kernel reads and writes.
//! unsafe { k.dot::<f32>(cfg, (a.slice(), b.slice(), partials.per_block())) }?;
//! ```
//!
//! `dot<T>` is a generic kernel (`kernel! { pub fn dot<T: …>(…) for [f32, f64] … }`): the method
//! takes the element type, and only the types the kernel crate instantiated compile. On a GPU the
//! launch looks the kernel up in the crate's PTX (`ptx!("dot_kernels")`, loaded once per GPU);
//! on the emulator it runs the crate's host build of the kernel, with the emulator's checks (and
//! its counters and trace, where the backend counts or traces).

/// Declares a struct whose methods launch the kernels of one kernel crate (module docs:
/// [`crate::module`](mod@crate::module)). Each kernel is listed by name, a generic one as `name<T>`; the crate is
/// named by its library name, which is also its PTX module's name (`ptx!`).
#[macro_export]
macro_rules! module {
    (
        $(#[$meta:meta])*
        $vis:vis struct $Name:ident($krate:ident) { $($kernel:ident $(<$T:ident>)?),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        $vis struct $Name<'b> {
            backend: &'b $crate::backend::Backend,
        }

        impl<'b> $Name<'b> {
            #[doc = concat!("The PTX of `", stringify!($krate), "`, as this crate's build script built it.")]
            pub fn ptx() -> &'static $crate::ptx::Module {
                static PTX: $crate::ptx::Module = $crate::ptx!(stringify!($krate));
                &PTX
            }

            /// The kernels, launched on `backend`.
            pub fn new(backend: &'b $crate::backend::Backend) -> Self {
                Self { backend }
            }

            /// The backend the kernels launch on.
            pub fn backend(&self) -> &'b $crate::backend::Backend {
                self.backend
            }

            $($crate::module!(@method $krate $kernel $(<$T>)?);)*
        }
    };
    (@method $krate:ident $kernel:ident <$T:ident>) => {
        #[doc = concat!("Launches `", stringify!($krate), "::", stringify!($kernel), "::<T>` (PTX `",
            stringify!($kernel), "__{T}`) over `cfg` with `args`.")]
        ///
        /// # Safety
        /// As for [`Backend::launch`](crate::backend::Backend::launch): the arguments are buffers
        /// of this backend, as long as the kernel reads and writes, and `cfg` keeps the kernel's
        /// documented launch preconditions.
        pub unsafe fn $kernel<$T: $krate::$kernel::Instance>(
            &self,
            cfg: $crate::backend::LaunchConfig,
            args: <$T as $krate::$kernel::Instance>::Args,
        ) -> $crate::Result<()>
        where
            <$T as $krate::$kernel::Instance>::Args: $crate::backend::KernelArgs,
        {
            let kernel = $crate::backend::Kernel::of(Self::ptx(), <$T as $krate::$kernel::Instance>::KERNEL);
            // SAFETY: forwarded from the caller.
            unsafe { self.backend.launch(&kernel, cfg, args) }
        }
    };
    (@method $krate:ident $kernel:ident) => {
        #[doc = concat!("Launches `", stringify!($krate), "::", stringify!($kernel), "` over `cfg` with `args`.")]
        ///
        /// # Safety
        /// As for [`Backend::launch`](crate::backend::Backend::launch): the arguments are buffers
        /// of this backend, as long as the kernel reads and writes, and `cfg` keeps the kernel's
        /// documented launch preconditions.
        pub unsafe fn $kernel(
            &self,
            cfg: $crate::backend::LaunchConfig,
            args: $krate::$kernel::Args,
        ) -> $crate::Result<()> {
            let kernel = $crate::backend::Kernel::of(Self::ptx(), $krate::$kernel::KERNEL);
            // SAFETY: forwarded from the caller.
            unsafe { self.backend.launch(&kernel, cfg, args) }
        }
    };
}
