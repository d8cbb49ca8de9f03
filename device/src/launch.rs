//! Device-side kernel launches: CUDA dynamic parallelism, as CUDA 12 and later define it
//! ("CDP2").
//!
//! A kernel launches another with [`launch_device!`](crate::launch_device), which reads like
//! CUDA C's `kernel<<<grid, block, 0, stream>>>(args…)`:
//!
//! ```ignore
//! let status = launch_device!(my_kernel<<<(grid, block, DeviceStream::Tail)>>>(g_in, g_out, n));
//! ```
//!
//! **On the GPU** that is what nvcc emits for a device-side launch: a parameter buffer from
//! the device runtime (`cudaGetParameterBufferV2(kernel, grid, block, shared)`), each argument
//! stored at an offset aligned to its size, then `cudaLaunchDeviceV2(buffer, stream)` (under
//! CDP2 the functions are named `__cudaCDP2GetParameterBufferV2` and `__cudaCDP2LaunchDeviceV2`).
//! Both are `.extern .func`s of `libcudadevrt.a` (the CUDA toolkit's device runtime), so a PTX
//! module that launches from the device must be linked with it before it loads; the host's
//! `ptx` module does that for the nested kernels only. rustc's NVPTX backend declares the two
//! functions exactly as nvcc does (`.param .align 4 .b8 gridDim[12]` for a `dim3` by value),
//! and takes a kernel's address with `mov.b64 %rd, kernel;`.
//!
//! **CDP2 has no `cudaDeviceSynchronize()`** in device code: a parent cannot wait for its
//! child. It chooses where the child goes instead ([`DeviceStream`]): after the parent grid
//! has completed (the tail-launch stream), or at once, unordered (fire and forget). Every
//! child completes before its parent grid counts as complete for the host.
//!
//! **On the emulator** a device-side launch is queued with a copy of its arguments and runs
//! as a launch of its own when its stream says so: a tail launch after the launching grid has
//! completed, in the order the launches were made. A launch past [`MAX_DEPTH`] levels of
//! nesting, or with a bad shape, is reported as a fault with the kernel, block, thread and
//! source line that made it; a fault inside a child is reported as that child's.

use super::global::{Global, GlobalMut};

/// The deepest nesting a device-side launch may reach: the host's launch is depth 0, its
/// children depth 1, … (CUDA's limit, 24).
pub const MAX_DEPTH: u32 = 24;

/// `cudaSuccess`: what a device-side launch returns when the launch was queued.
pub const LAUNCH_OK: u32 = 0;

/// Where a device-side launch goes: CDP2's named streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceStream {
    /// `cudaStreamTailLaunch`: the child starts once the launching grid has completed (every
    /// block of it, and the tail launches it made before this one).
    Tail,
    /// `cudaStreamFireAndForget`: the child may start at once, unordered with its parent.
    FireAndForget,
}

impl DeviceStream {
    /// The `cudaStream_t` value the device runtime knows it by.
    pub const fn handle(self) -> u64 {
        match self {
            DeviceStream::Tail => 3,
            DeviceStream::FireAndForget => 4,
        }
    }
}

/// One kernel parameter of a device-side launch: its bytes in the parameter buffer (at an
/// offset aligned to its size), and on the host the form the emulator keeps it in.
pub trait DeviceParam: Copy {
    /// What the parameter is made from again when the child runs on the emulator (a
    /// [`GlobalMut`] is made from its pointer, so that the child's emulated threads register
    /// it as writable, as the host's launch does).
    type Raw: Copy + 'static;
    /// Its size in the parameter buffer, which is also its alignment there.
    const SIZE: usize;
    /// The raw form.
    fn to_raw(self) -> Self::Raw;
    /// The parameter again, from its raw form.
    fn from_raw(raw: Self::Raw) -> Self;
}

macro_rules! scalar_param {
    ($($t:ty),*) => {$(
        impl DeviceParam for $t {
            type Raw = $t;
            const SIZE: usize = core::mem::size_of::<$t>();
            fn to_raw(self) -> $t {
                self
            }
            fn from_raw(raw: $t) -> $t {
                raw
            }
        }
    )*};
}
scalar_param!(u32, i32, u64, i64);

impl<T: 'static> DeviceParam for Global<T> {
    type Raw = *const T;
    const SIZE: usize = 8;
    fn to_raw(self) -> *const T {
        self.raw()
    }
    fn from_raw(raw: *const T) -> Self {
        raw.into()
    }
}

impl<T: 'static> DeviceParam for GlobalMut<T> {
    type Raw = *mut T;
    const SIZE: usize = 8;
    fn to_raw(self) -> *mut T {
        self.raw()
    }
    fn from_raw(raw: *mut T) -> Self {
        raw.into()
    }
}

/// `offset` rounded up to a multiple of `align` (a power of two): where the next parameter of
/// a parameter buffer goes.
///
/// ```
/// use reduce_scan_device::launch::param_offset;
/// assert_eq!((param_offset(0, 8), param_offset(8, 4), param_offset(12, 8)), (0, 8, 16));
/// ```
pub const fn param_offset(offset: usize, align: usize) -> usize {
    (offset + align - 1) & !(align - 1)
}

/// A kernel's whole argument list for a device-side launch, as a tuple of [`DeviceParam`]s,
/// and the type of a kernel that takes it.
pub trait DeviceArgs: Copy {
    /// The kernel's function-pointer type: `unsafe fn(A, B, …)` on the host,
    /// `unsafe extern "ptx-kernel" fn(A, B, …)` on the GPU.
    type Kernel: Copy;
    /// The arguments in their raw forms (the emulator's copy).
    type Raw: Copy + 'static;
    /// Each parameter's size in the parameter buffer, in order (the emulator counts the
    /// launching thread's store of each, as the GPU makes it).
    const SIZES: &'static [usize];
    /// Stores each argument into `buffer` at its aligned offset.
    ///
    /// # Safety
    /// `buffer` is a parameter buffer large enough for the kernel's parameters.
    unsafe fn write(self, buffer: *mut u8);
    /// The raw forms.
    fn to_raw(self) -> Self::Raw;
    /// Calls `kernel` with the arguments made again from `raw` (on the emulator, in the child's
    /// emulated thread).
    ///
    /// # Safety
    /// `kernel`'s preconditions hold for these arguments and this launch.
    #[cfg(not(target_arch = "nvptx64"))]
    unsafe fn call(raw: Self::Raw, kernel: Self::Kernel);
    /// The kernel's address, as `cudaGetParameterBufferV2` takes it.
    fn address(kernel: Self::Kernel) -> *const u8;
}

macro_rules! tuple_args {
    ($($T:ident $i:tt),+) => {
        impl<$($T: DeviceParam),+> DeviceArgs for ($($T,)+) {
            #[cfg(target_arch = "nvptx64")]
            type Kernel = unsafe extern "ptx-kernel" fn($($T),+);
            #[cfg(not(target_arch = "nvptx64"))]
            type Kernel = unsafe fn($($T),+);
            type Raw = ($($T::Raw,)+);
            const SIZES: &'static [usize] = &[$($T::SIZE),+];
            #[inline(always)]
            unsafe fn write(self, buffer: *mut u8) {
                let mut offset = 0;
                $(
                    offset = param_offset(offset, $T::SIZE);
                    // SAFETY: the caller's buffer; the offset is aligned to the parameter's size.
                    unsafe { buffer.add(offset).cast::<$T>().write(self.$i) };
                    offset += $T::SIZE;
                )+
                let _ = offset;
            }
            fn to_raw(self) -> Self::Raw {
                ($(self.$i.to_raw(),)+)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            unsafe fn call(raw: Self::Raw, kernel: Self::Kernel) {
                // SAFETY: forwarded from the caller.
                unsafe { kernel($($T::from_raw(raw.$i)),+) }
            }
            #[inline(always)]
            fn address(kernel: Self::Kernel) -> *const u8 {
                kernel as *const u8
            }
        }
    };
}
tuple_args!(A 0);
tuple_args!(A 0, B 1);
tuple_args!(A 0, B 1, C 2);
tuple_args!(A 0, B 1, C 2, D 3);
tuple_args!(A 0, B 1, C 2, D 3, E 4);
tuple_args!(A 0, B 1, C 2, D 3, E 4, F 5);

/// `kernel<<<grid, block, 0, stream>>>(args…)` from device code: what
/// [`launch_device!`](crate::launch_device) expands to. Returns [`LAUNCH_OK`] when the launch
/// was queued, else the device runtime's error code (on the emulator a failed launch is a
/// fault instead, reported where it was made).
///
/// # Safety
/// `kernel`'s preconditions hold for `args` and this grid and block when the child runs (for a
/// tail launch: once the launching grid has completed).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn launch<A: DeviceArgs>(
    stream: DeviceStream,
    name: &'static str,
    grid: u32,
    block: u32,
    args: A,
    kernel: A::Kernel,
) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = name;
        // SAFETY: the device runtime's functions (libcudadevrt), declared as nvcc declares them.
        unsafe {
            let buffer = cudaGetParameterBufferV2(A::address(kernel), Dim3Param::x(grid), Dim3Param::x(block), 0);
            if buffer.is_null() {
                return OUT_OF_PARAMETER_BUFFERS;
            }
            args.write(buffer);
            cudaLaunchDeviceV2(buffer, stream.handle())
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = A::address;
        let child = Child::<A> { kernel, raw: args.to_raw() };
        let request = super::emu::DeviceLaunch {
            kernel: name,
            stream,
            grid: super::emu::Dim3::x(grid),
            block: super::emu::Dim3::x(block),
            params: (&raw const child).cast::<u8>(),
            params_len: core::mem::size_of::<Child<A>>(),
            param_sizes: A::SIZES,
            run: run_child::<A>,
            site: core::panic::Location::caller(),
        };
        super::emu::hooks().device_launch(request)
    }
}

/// What `cudaGetParameterBufferV2` returning null is reported as: `cudaErrorLaunchOutOfResources`.
#[cfg(target_arch = "nvptx64")]
const OUT_OF_PARAMETER_BUFFERS: u32 = 701;

/// `dim3` by value, as the device runtime takes it.
#[cfg(target_arch = "nvptx64")]
#[repr(C)]
#[derive(Clone, Copy)]
struct Dim3Param {
    x: u32,
    y: u32,
    z: u32,
}

#[cfg(target_arch = "nvptx64")]
impl Dim3Param {
    const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }
}

// The device runtime's launch functions. CUDA 12's headers, compiling for CDP2, make
// `cudaGetParameterBufferV2` and `cudaLaunchDeviceV2` wrappers of these two, and the objects
// nvcc emits reference these names (the named streams above exist only in CDP2).
#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "__cudaCDP2GetParameterBufferV2"]
    fn cudaGetParameterBufferV2(func: *const u8, grid: Dim3Param, block: Dim3Param, shared: u32) -> *mut u8;
    #[link_name = "__cudaCDP2LaunchDeviceV2"]
    fn cudaLaunchDeviceV2(buffer: *mut u8, stream: u64) -> u32;
}

/// The emulator's copy of a device-side launch: the kernel and its raw arguments.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
struct Child<A: DeviceArgs> {
    kernel: A::Kernel,
    raw: A::Raw,
}

/// Runs one emulated thread of a queued child: `params` is the emulator's copy of its
/// [`Child`].
///
/// # Safety
/// `params` points to the bytes of a `Child<A>` (any alignment).
#[cfg(not(target_arch = "nvptx64"))]
unsafe fn run_child<A: DeviceArgs>(params: *const u8) {
    // SAFETY: the caller's bytes, copied from a `Child<A>`.
    let child = unsafe { params.cast::<Child<A>>().read_unaligned() };
    // SAFETY: the launching kernel promised its preconditions for this launch.
    unsafe { A::call(child.raw, child.kernel) }
}

/// `kernel<<<grid, block, 0, stream>>>(args…)` from device code ([`launch`]):
///
/// ```ignore
/// let status = launch_device!(nested_reduce<<<(1, half, DeviceStream::Tail)>>>(g_data, g_out, half));
/// ```
///
/// An `unsafe` operation: the caller promises the child kernel's preconditions.
#[macro_export]
macro_rules! launch_device {
    ($kernel:ident <<< ($grid:expr, $block:expr, $stream:expr) >>> ($($arg:expr),+ $(,)?)) => {
        $crate::launch::launch($stream, stringify!($kernel), $grid, $block, ($($arg,)+), $kernel)
    };
}
