//! Buffers with their lengths, and the indices that make a kernel's common accesses safe.
//!
//! A kernel of this project's curriculum takes [`Global`]/[`GlobalMut`] pointers, as the book's
//! CUDA C does, and every access is an `unsafe` call with its reason. A kernel that only reads
//! inside its inputs and writes its own output slots needs none of that. These parameter types
//! carry their buffer's length, check every index against it, and hand out write access only
//! through indices that no two threads can hold at once (the idea of cuda-oxide's
//! `DisjointSlice` and its thread index):
//!
//! | type | CUDA C | safe access |
//! |---|---|---|
//! | [`Slice<T>`] | `const T *p, size_t n` | [`get`](Slice::get) (`i < n ? p[i] : …`), [`at`](Slice::at) (`p[i]`, the index checked) |
//! | [`DisjointSlice<T>`] | `T *out, size_t n`, each thread writing its own elements | [`set`](DisjointSlice::set)`(i, v)` with `i` a [`ThreadIndex`] |
//! | [`PerBlock<T>`] | `T *partials`, written by thread 0 of each block | [`set`](PerBlock::set)`(leader, v)` with a [`BlockLeader`] |
//! | [`AtomicSlice<T>`] | `T *hist, size_t n`, every access an atomic | [`atomic_add`](AtomicSlice::atomic_add)`(i, v)` and every CUDA atomic ([`atomic`](super::atomic)), any index below `n` |
//!
//! * [`ThreadIndex`] comes only from [`ThreadIndex::global`] (`blockIdx.x * blockDim.x +
//!   threadIdx.x`) and [`ThreadIndex::grid_stride`] (that index, then every
//!   `gridDim.x * blockDim.x` after it): the indices of two threads of a launch never meet, so
//!   each element of a [`DisjointSlice`] has at most one writer.
//! * [`BlockLeader`] comes only from [`BlockLeader::get`], which gives it to thread 0 of each
//!   block alone: each slot of a [`PerBlock`] has one writer.
//!
//! An index past the buffer's end stops the kernel: on the GPU a `trap` (the launch fails), in
//! the emulator a fault naming the index, the length, the thread and the source line. The check
//! is a compare and a branch the GPU predicts; where it costs, the unchecked pointer is one call
//! away ([`Slice::as_global`], [`DisjointSlice::as_global_mut`]), and `unsafe` again.
//!
//! **The host's side.** Each type is `#[repr(C)]`, a pointer then a length: one 16-byte kernel
//! parameter, which the host builds from a device buffer of its own (`DeviceBuffer::slice`,
//! `disjoint`, `per_block` in `reduce-scan-runtime`). What the host promises at launch (its
//! `launch` is `unsafe`): the memory is that long, and no buffer passed as a [`Slice`] is also
//! written by the launch.

use super::global::{Global, GlobalMut};
use super::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};

/// Stops the kernel for an index at or past a buffer's length: `trap` on the GPU, a fault
/// naming both in the emulator.
#[cold]
#[inline(never)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn out_of_range(index: usize, len: usize) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (index, len);
        super::trap("index past the end of a buffer")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::emu::hooks().fault(super::emu::Fault::IndexOutOfBounds { index, len, site: core::panic::Location::caller() })
}

/// What the three buffers share: `Clone`/`Copy` (a copy is the same pointer and length) and
/// their length.
macro_rules! buffer_common {
    ($ty:ident) => {
        impl<T> Clone for $ty<T> {
            #[inline(always)]
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $ty<T> {}

        impl<T: Copy> $ty<T> {
            /// Elements (CUDA C: the `n` beside the pointer).
            #[inline(always)]
            pub fn len(self) -> usize {
                self.len
            }

            /// No elements?
            #[inline(always)]
            pub fn is_empty(self) -> bool {
                self.len == 0
            }
        }
    };
}

/// A buffer a kernel reads, with its length: CUDA C's `const T *p` and `size_t n` as one
/// parameter. Copying it copies the pointer and the length, not the memory.
#[repr(C)]
pub struct Slice<T> {
    ptr: Global<T>,
    len: usize,
}

buffer_common!(Slice);

impl<T: Copy> Slice<T> {
    /// The `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is device memory holding `len` aligned elements, which no thread writes while the
    /// kernel may read them.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: Global<T>, len: usize) -> Self {
        Slice { ptr, len }
    }

    /// Element `i`, or `None` past the end (CUDA C: `if (i < n) v = p[i];`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(self, i: usize) -> Option<T> {
        // SAFETY: i < len, and the memory holds len elements no thread writes (from_raw_parts).
        if i < self.len { Some(unsafe { self.ptr.read(i) }) } else { None }
    }

    /// Element `i` (CUDA C: `p[i]`). An index at or past the length stops the kernel (module
    /// docs).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn at(self, i: usize) -> T {
        match self.get(i) {
            Some(v) => v,
            None => out_of_range(i, self.len),
        }
    }

    /// Asks L2 for the line holding element `i`, where `i` is inside the slice; past the end it
    /// does nothing (CUDA C: `if (i < n) cuda::ptx::prefetch_L2(p + i);`). A hint that moves
    /// nothing into registers: a later read of the line finds it in L2
    /// ([`Global::prefetch_l2`]).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn prefetch_l2(self, i: usize) {
        if i < self.len {
            // SAFETY: i < len, and the memory holds len elements (from_raw_parts).
            unsafe { self.ptr.prefetch_l2(i) }
        }
    }

    /// The unchecked pointer, for what the checked accessors do not do (128-bit loads,
    /// `__ldg`, asynchronous copies): every access through it is `unsafe` again.
    #[inline(always)]
    pub fn as_global(self) -> Global<T> {
        self.ptr
    }
}

/// A thread's index into a [`DisjointSlice`]: no other thread of the launch can hold the same
/// value, so a write through it races with no other thread's write. Made only by
/// [`global`](Self::global) and [`grid_stride`](Self::grid_stride).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// This thread's index in a 1-D grid: CUDA C `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn global() -> Self {
        ThreadIndex(block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize)
    }

    /// The grid-stride loop (CUDA C: `for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
    /// i += gridDim.x * blockDim.x)`): this thread's indices below `n`. The loops of two
    /// threads never share an index.
    #[inline(always)]
    pub fn grid_stride(n: usize) -> GridStride {
        GridStride { next: Self::global().0, stride: grid_dim_x() as usize * block_dim_x() as usize, end: n }
    }

    /// The index as a number (for reading inputs, or arithmetic).
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }
}

/// The iterator of [`ThreadIndex::grid_stride`].
#[derive(Clone, Debug)]
pub struct GridStride {
    next: usize,
    stride: usize,
    end: usize,
}

impl Iterator for GridStride {
    type Item = ThreadIndex;

    #[inline(always)]
    fn next(&mut self) -> Option<ThreadIndex> {
        if self.next < self.end {
            let i = self.next;
            self.next = self.next.saturating_add(self.stride);
            Some(ThreadIndex(i))
        } else {
            None
        }
    }
}

/// A buffer in which each thread writes only the elements of its own [`ThreadIndex`]es: CUDA
/// C's `T *out` with `out[blockIdx.x * blockDim.x + threadIdx.x] = v`, and its length.
#[repr(C)]
pub struct DisjointSlice<T> {
    ptr: GlobalMut<T>,
    len: usize,
}

buffer_common!(DisjointSlice);

impl<T: Copy> DisjointSlice<T> {
    /// The `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is device memory holding `len` aligned elements, which nothing but this parameter
    /// reads or writes during the launch.
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: GlobalMut<T>, len: usize) -> Self {
        DisjointSlice { ptr, len }
    }

    /// Writes `value` at `i` (CUDA C: `out[i] = value`). An index at or past the length stops
    /// the kernel (module docs).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(self, i: ThreadIndex, value: T) {
        if i.0 >= self.len {
            out_of_range(i.0, self.len)
        }
        // SAFETY: i < len; no other thread holds index i (ThreadIndex), and nothing else
        // touches the memory during the launch (from_raw_parts).
        unsafe { self.ptr.write(i.0, value) }
    }

    /// Reads back this thread's element `i` (written earlier by this thread, or by the host).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(self, i: ThreadIndex) -> T {
        if i.0 >= self.len {
            out_of_range(i.0, self.len)
        }
        // SAFETY: as for `set`: only this thread accesses element i.
        unsafe { self.ptr.read(i.0) }
    }

    /// The unchecked pointer: every access through it is `unsafe`.
    #[inline(always)]
    pub fn as_global_mut(self) -> GlobalMut<T> {
        self.ptr
    }
}

/// Thread 0 of a block, which alone writes its block's slot of a [`PerBlock`]. Made only by
/// [`BlockLeader::get`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLeader(usize);

impl BlockLeader {
    /// `Some` in thread 0 of each block (CUDA C: `if (threadIdx.x == 0)`), holding the block's
    /// index (`blockIdx.x`); `None` in every other thread.
    #[inline(always)]
    pub fn get() -> Option<Self> {
        (thread_idx_x() == 0).then(|| BlockLeader(block_idx_x() as usize))
    }

    /// The block's index, `blockIdx.x`.
    #[inline(always)]
    pub fn block(self) -> usize {
        self.0
    }
}

/// A buffer of one slot per block, which thread 0 of each block writes: CUDA C's
/// `if (threadIdx.x == 0) partials[blockIdx.x] = v;`, with the buffer's length.
#[repr(C)]
pub struct PerBlock<T> {
    ptr: GlobalMut<T>,
    len: usize,
}

buffer_common!(PerBlock);

impl<T: Copy> PerBlock<T> {
    /// The `len` slots at `ptr`.
    ///
    /// # Safety
    /// As for [`DisjointSlice::from_raw_parts`].
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: GlobalMut<T>, len: usize) -> Self {
        PerBlock { ptr, len }
    }

    /// Writes `value` into the slot of `leader`'s block. A grid larger than the buffer stops
    /// the kernel (module docs).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(self, leader: BlockLeader, value: T) {
        if leader.0 >= self.len {
            out_of_range(leader.0, self.len)
        }
        // SAFETY: in bounds; thread 0 of this block is the slot's only writer (BlockLeader).
        unsafe { self.ptr.write(leader.0, value) }
    }

    /// The unchecked pointer: every access through it is `unsafe`.
    #[inline(always)]
    pub fn as_global_mut(self) -> GlobalMut<T> {
        self.ptr
    }
}

/// A buffer that every thread of the launch may update at any index, through atomics only:
/// CUDA C's `T *hist` with `atomicAdd(&hist[i], v)`, and its length. Its methods are the CUDA
/// atomics ([`atomic_add`](Self::atomic_add), [`atomic_min`](Self::atomic_min), …,
/// [`atomic_cas`](Self::atomic_cas), [`atomic_inc`](Self::atomic_inc): [`atomic`](super::atomic)),
/// each safe: the index is checked (past the end the kernel stops, as for [`Slice::at`]), and two
/// atomics never race. The host fills it before the launch and reads it after.
#[repr(C)]
pub struct AtomicSlice<T> {
    ptr: GlobalMut<T>,
    len: usize,
}

buffer_common!(AtomicSlice);

impl<T: Copy> AtomicSlice<T> {
    /// The `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is device memory holding `len` aligned elements, which the launch reads and writes
    /// only through this parameter's atomics (no plain access, no other parameter).
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: GlobalMut<T>, len: usize) -> Self {
        AtomicSlice { ptr, len }
    }

    /// The unchecked pointer: every access through it is `unsafe`.
    #[inline(always)]
    pub fn as_global_mut(self) -> GlobalMut<T> {
        self.ptr
    }

    /// The pointer, once `i` is checked against the length for the atomic `name` (CUDA C): an
    /// index at or past it stops the kernel (`trap`; in the emulator a fault naming the atomic,
    /// the index, the buffer and the address).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(crate) fn checked(self, i: usize, name: &'static str) -> GlobalMut<T> {
        if i >= self.len {
            atomic_out_of_range(name, self.ptr.addr(), i, self.len, core::mem::size_of::<T>())
        }
        self.ptr
    }
}

/// Stops the kernel for an atomic at an index at or past an [`AtomicSlice`]'s length.
#[cold]
#[inline(never)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn atomic_out_of_range(name: &'static str, base: usize, index: usize, len: usize, bytes: usize) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (name, base, index, len, bytes);
        super::trap("atomic at an index past the end of a buffer")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::emu::hooks().fault(super::emu::Fault::AtomicOutOfBounds {
        name,
        global: true,
        base,
        index,
        len,
        bytes,
        site: core::panic::Location::caller(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_stride_steps_by_the_grid_and_stops_before_n() {
        let mut it = GridStride { next: 3, stride: 8, end: 20 };
        let got: std::vec::Vec<usize> = core::iter::from_fn(|| it.next().map(ThreadIndex::get)).collect();
        assert_eq!(got, [3, 11, 19]);
        let mut none = GridStride { next: 20, stride: 8, end: 20 };
        assert!(none.next().is_none());
        let mut huge = GridStride { next: usize::MAX - 1, stride: 8, end: usize::MAX };
        assert_eq!(huge.next().map(ThreadIndex::get), Some(usize::MAX - 1));
        assert!(huge.next().is_none(), "the step saturates instead of wrapping to a small index");
    }

    #[test]
    fn kernel_parameters_are_a_pointer_and_a_length() {
        assert_eq!(core::mem::size_of::<Slice<f32>>(), 16);
        assert_eq!(core::mem::size_of::<DisjointSlice<f64>>(), 16);
        assert_eq!(core::mem::size_of::<PerBlock<i32>>(), 16);
        assert_eq!(core::mem::size_of::<AtomicSlice<u32>>(), 16);
        assert_eq!(core::mem::align_of::<Slice<u8>>(), 8);
    }
}
