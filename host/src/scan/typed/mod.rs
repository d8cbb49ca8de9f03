//! Scans of every element type with every operator: the typed look-back scan
//! `lookback__{type}_{op}` (`kernels::scan::lookback_generic`), its registry, a prepared
//! [`TypedScan`], the depth of its summation tree for the float bound ([`scan_depth`],
//! [`cpu`]), and the one-shot library calls [`inclusive_scan`] / [`exclusive_scan`] (thin
//! wrappers over [`Scanner`](super::Scanner), the reusable object).
//!
//! ```
//! use reduce_scan::scan::typed::{exclusive_scan, inclusive_scan};
//! use reduce_scan::{Backend, Max, Sum};
//! let backend = Backend::emulator(); // Backend::gpu()? on a GPU host
//! let input = backend.upload(&[2.5f64, -1.0, f64::NAN, 7.0])?;
//! let mut output = backend.alloc::<f64>(4)?;
//! inclusive_scan::<f64, Max>(&backend, &input, &mut output)?;
//! let got = backend.download(&output)?;
//! assert_eq!((got[0], got[1]), (2.5, 2.5));
//! assert!(got[2].is_nan() && got[3].is_nan()); // NaN propagates
//! let ints = backend.upload(&[u64::MAX, 2, 3])?;
//! let mut sums = backend.alloc::<u64>(3)?;
//! exclusive_scan::<u64, Sum>(&backend, &ints, &mut sums)?;
//! assert_eq!(backend.download(&sums)?, [0, u64::MAX, 1]); // integer sums wrap
//! # Ok::<(), reduce_scan::Error>(())
//! ```

pub mod cpu;

use kernels::scan::index::MAX_EPOCH;
use kernels::scan::{LOOKBACK_THREADS, lookback_items};

use super::{Kind, Shape, check_shape, config};
use crate::backend::{Backend, DeviceBuffer, Kernel};
use crate::error::{Error, Result};
use crate::reduce::typed::{OpKind, Value};
use crate::registry::{Elem, Op};
use crate::timing::Rerun;

/// `lookback__{type}_{op}(input, output, status, values, n, epoch, exclusive)`, the pointers
/// to elements erased to bytes (the element type is [`TypedScanVariant::elem`]).
pub type TypedScanArgs = (*const u8, *mut u8, *mut u64, *mut u8, u32, u32, u32);

/// One instantiation of the typed look-back scan.
#[derive(Clone, Copy, Debug)]
pub struct TypedScanVariant {
    /// The generic scan's name (`lookback`).
    pub name: &'static str,
    /// Element type.
    pub elem: Elem,
    /// Operator.
    pub op: Op,
    /// `lookback__{type}_{op}`.
    pub kernel: Kernel<TypedScanArgs>,
    /// Threads per block (the kernel traps on any other).
    pub threads: u32,
    /// Elements per thread (36 of 32 bits, 18 of 64 bits).
    pub items: u32,
}

impl TypedScanVariant {
    /// Elements per tile (per block).
    pub fn tile(&self) -> u32 {
        self.threads * self.items
    }

    /// `variant/type/op`, as bench ids and failure messages name it.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.name, self.elem.name(), self.op.name())
    }

    /// The PTX symbol.
    pub fn symbol(&self) -> &'static str {
        self.kernel.name
    }

    pub(crate) fn shape(&self) -> Shape {
        Shape { name: self.name, kinds: &Kind::ALL, min_cc: (7, 0), tile: self.tile() }
    }
}

/// The 17 instantiations: `lookback__{type}_{op}` for every type × operator but `i32` × sum
/// (which is `lookback` itself, the classic scan's registry entry).
macro_rules! typed_scans {
    ($([$E:ident $t:ident $O:ident $o:ident])*) => {
        [$(TypedScanVariant {
            name: "lookback",
            elem: Elem::$E,
            op: Op::$O,
            kernel: Kernel {
                name: $crate::__last_ident!(kernels::scan::${concat(lookback, __, $t, _, $o)}),
                // SAFETY: TypedScan checked that the buffers hold this variant's element type
                // and the kernel's preconditions.
                emu: |(a, b, c, d, e, f, g)| unsafe {
                    kernels::scan::${concat(lookback, __, $t, _, $o)}(kernels::device::global::Global::from_erased(a), kernels::device::global::GlobalMut::from_erased(b), c.into(), kernels::device::global::GlobalMut::from_erased(d), e, f, g)
                },
            },
            threads: LOOKBACK_THREADS,
            items: lookback_items::<$t>(),
        },)*]
    };
}

static VARIANTS: [TypedScanVariant; 17] = typed_scans!(
    [U32 u32 Sum sum] [I64 i64 Sum sum] [U64 u64 Sum sum] [F32 f32 Sum sum] [F64 f64 Sum sum]
    [I32 i32 Min min] [U32 u32 Min min] [I64 i64 Min min] [U64 u64 Min min] [F32 f32 Min min] [F64 f64 Min min]
    [I32 i32 Max max] [U32 u32 Max max] [I64 i64 Max max] [U64 u64 Max max] [F32 f32 Max max] [F64 f64 Max max]
);

/// Every typed scan instantiation (type-major within each operator).
pub fn all() -> impl Iterator<Item = &'static TypedScanVariant> + Clone {
    VARIANTS.iter()
}

/// The names of the scan variants with typed instantiations.
pub const GENERIC: &[&str] = &["lookback"];

/// The instantiation of scan variant `name` for `elem` × `op`, or an error that says which
/// scan variants are generic.
pub fn find(name: &str, elem: Elem, op: Op) -> Result<&'static TypedScanVariant> {
    all().find(|t| t.name == name && t.elem == elem && t.op == op).ok_or_else(|| {
        Error::Invalid(format!(
            "scan variant `{name}` has no {} {} kernel: only the generic scan variants ({}) take --type and \
             --combine; the others are i32 sums",
            elem.name(),
            op.name(),
            GENERIC.join(", ")
        ))
    })
}

/// **The depth of the summation tree** of `tv` on `n` elements: an upper bound on the
/// roundings any element passes through on its way into any output, for
/// [`cpu::check`]'s bound. With `I` items per thread, `W = 8` warps, `k` tiles:
///
/// * in its tile's aggregate an element passes at most `a = I + 5 + W` combines (the
///   thread's `I`, the 5-step warp scan, the `W` warp totals);
/// * the inclusive prefix `P` of tile `t` is `prefix ⊕ aggregate`, the prefix found by the
///   look-back: a butterfly (5) over a window, one combine per window (at most `⌈k/32⌉`), one
///   for the nearest `P`. By induction over `t`, an element reaches `P_t` through at most
///   `a + 7t + ⌈k/32⌉` roundings;
/// * an output is `prefix ⊕ local`, the tile-local value taking at most `2I + W + 5`.
///
/// So `d = 2I + W + 6 + 7(k − 1) + ⌈k/32⌉` (for `f32` at n = 2^24: 12,883).
pub fn scan_depth(tv: &TypedScanVariant, n: usize) -> u64 {
    let tiles = (n as u64).div_ceil(tv.tile() as u64).max(1);
    let (items, warps) = (tv.items as u64, (tv.threads / 32) as u64);
    2 * items + warps + 6 + 7 * (tiles - 1) + tiles.div_ceil(32)
}

/// A typed scan ready to run: preconditions checked, status words and value slots allocated.
pub struct TypedScan<'a, T: Value> {
    backend: &'a Backend,
    tv: &'static TypedScanVariant,
    kind: Kind,
    n: usize,
    input: &'a DeviceBuffer<T>,
    output: &'a mut DeviceBuffer<T>,
    status: DeviceBuffer<u64>,
    /// Two value slots per tile (8 bytes each: room for any element type).
    values: DeviceBuffer<u64>,
    epoch: u32,
    /// The input, when every run is to be checked ([`Rerun::check`]).
    expected: Option<&'a [T]>,
}

impl<'a, T: Value> TypedScan<'a, T> {
    /// Prepares `tv` to scan the first `n` elements of `input` into `output`.
    pub fn new(
        backend: &'a Backend,
        tv: &'static TypedScanVariant,
        kind: Kind,
        input: &'a DeviceBuffer<T>,
        output: &'a mut DeviceBuffer<T>,
        n: usize,
    ) -> Result<Self> {
        if T::ELEM != tv.elem {
            return Err(Error::Invalid(format!("scan {} scans {}, not {}", tv.id(), tv.elem.name(), T::ELEM.name())));
        }
        check_shape(&tv.shape(), kind, n, (input.len(), output.len()), backend.info().compute_capability)?;
        let tiles = n.div_ceil(tv.tile() as usize);
        let status = backend.alloc::<u64>(tiles)?;
        let values = backend.alloc::<u64>(2 * tiles)?;
        Ok(Self { backend, tv, kind, n, input, output, status, values, epoch: 0, expected: None })
    }

    /// Checks every run's output against the CPU scan of `data` (the input's elements).
    pub fn expecting(mut self, data: &'a [T]) -> Self {
        self.expected = Some(data);
        self
    }

    /// The variant.
    pub fn variant(&self) -> &'static TypedScanVariant {
        self.tv
    }

    /// Blocks of the launch.
    pub fn grid(&self) -> u32 {
        self.status.len() as u32
    }

    /// The depth of its summation tree ([`scan_depth`]), for [`cpu::check`].
    pub fn depth(&self) -> u64 {
        scan_depth(self.tv, self.n)
    }

    /// Enqueues the launch: the timed work. Launches may be queued back to back.
    pub fn launch(&mut self) -> Result<()> {
        if self.epoch >= MAX_EPOCH {
            // Fresh zeroed words: no old word can carry a new epoch.
            self.status = self.backend.alloc::<u64>(self.status.len())?;
            self.epoch = 0;
        }
        self.epoch += 1;
        let args = (
            self.input.as_ptr().cast::<u8>(),
            self.output.as_mut_ptr().cast::<u8>(),
            self.status.as_mut_ptr(),
            self.values.as_mut_ptr().cast::<u8>(),
            self.n as u32,
            self.epoch,
            self.kind.flag(),
        );
        // SAFETY: new() checked n ≥ 1, the buffers' lengths and element type and the grid;
        // the status array holds one word per tile, every word older than this epoch (zeroed
        // at allocation, epochs strictly increasing since), and the values two 8-byte slots
        // per tile; the block is the kernel's own.
        unsafe { self.backend.launch(&self.tv.kernel, config(self.status.len(), self.tv.threads), args) }
    }

    /// Waits for the last launch and returns the `n` scanned elements.
    pub fn result(&self) -> Result<Vec<T>> {
        self.backend.download_prefix(self.output, self.n)
    }

    /// The output buffer the launches write (for a check on the device, `crate::verify`).
    pub fn output(&self) -> &DeviceBuffer<T> {
        self.output
    }
}

impl<T: Value> Rerun for TypedScan<'_, T> {
    fn reset(&mut self) -> Result<()> {
        Ok(())
    }
    fn launch(&mut self) -> Result<()> {
        TypedScan::launch(self)
    }
    fn check(&mut self) -> Result<Option<String>> {
        let Some(data) = self.expected else { return Ok(None) };
        let got = self.result()?;
        Ok(cpu::check(self.tv.op, self.kind, &data[..self.n], &got, self.depth()).err())
    }
}

/// `O`-scans all of `input` into `output` and waits (an empty input is a no-op): a one-shot
/// [`Scanner`](super::Scanner)`::<T, O>`, which runs the typed look-back scan (the classic
/// `lookback` for `i32` sums, by the plan hook [`OpKind::path`]).
pub fn scan<T: Value, O: OpKind>(
    backend: &Backend,
    kind: Kind,
    input: &DeviceBuffer<T>,
    output: &mut DeviceBuffer<T>,
) -> Result<()> {
    let mut scanner = super::Scanner::<T, O>::new(backend);
    scanner.enqueue(kind, input, 0..input.len(), output)?;
    scanner.wait()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_once_with_macro_made_names() {
        for elem in Elem::ALL {
            for op in Op::COMBINES.into_iter().filter(|&op| (elem, op) != (Elem::I32, Op::Sum)) {
                let t = find("lookback", elem, op).unwrap();
                assert_eq!(t.symbol(), format!("lookback__{}_{}", elem.name(), op.name()));
                assert_eq!(t.tile() as usize * elem.size(), 256 * 9 * 16);
            }
        }
        assert_eq!(all().count(), 17);
        let e = find("bit", Elem::F32, Op::Max).unwrap_err().to_string();
        assert!(e.contains("lookback") && e.contains("i32 sums"), "{e}");
    }

    #[test]
    fn depth_grows_with_the_tiles() {
        let tv = find("lookback", Elem::F32, Op::Sum).unwrap();
        assert_eq!(scan_depth(tv, 1), 72 + 8 + 6 + 1);
        assert_eq!(scan_depth(tv, 1 << 24), 72 + 8 + 6 + 7 * 1820 + 57);
    }
}
