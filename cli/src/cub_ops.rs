//! CUB's counterparts of the library's operations ([`crate::ops`]), timed in the same run as
//! ours for `reduce --op argmax … --compare-cub` and `scripts/gpu/library_ops.sh`:
//! `cub::DeviceReduce::ArgMin` / `ArgMax` and `cub::DeviceReduce::TransformReduce` (a dot
//! product, a sum of squares), by the CUDA C++ harness `cub/ops.cu`.
//!
//! The harness is built as [`crate::cub`]'s is — at run time, by the machine's `nvcc` for the
//! GPU's architecture, into the user's own harness cache, checked before each run — with the
//! same machinery (`cub::build_harness`), and run as a second process on the same GPU. The
//! input reaches it through private temporary files (the same bits as ours); it times `repeat`
//! calls between CUDA events after three warm-up calls and answers the last call's result, for
//! the caller to check against the CPU reference.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::cub::{CubTiming, Harness, Kept, build_harness, field, keep, result_line};
use crate::error::{Error, Result};
use crate::ops::Operation;
use crate::private::TempFile;
use crate::timing::median;
use crate::types::Value;

/// The harness source, compiled at run time.
const SOURCE: &str = include_str!("../../cub/ops.cu");

/// What CUB answered: the value's bits (zero-extended to 64) and, for argmin/argmax, the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubAnswer {
    /// The value's bits (a dot product's or sum of squares' accumulator: integers in the
    /// unsigned type of their width, the same bits).
    pub bits: u64,
    /// The index, for argmin and argmax.
    pub index: Option<u64>,
}

/// Times CUB's counterpart of `op` on `a` (and, for a dot product, `b`): `repeat` calls (at
/// least 1) between CUDA events. `Err` where CUB cannot be timed here (no GPU, no nvcc, the
/// harness does not build: [`Error::Unsupported`]; a refused cache: [`Error::Invalid`]).
pub fn time<T: Value>(op: Operation, a: &[T], b: Option<&[T]>, repeat: u32) -> Result<(CubTiming, CubAnswer)> {
    let bin = harness()?;
    let n = a.len();
    if n == 0 || n > i32::MAX as usize {
        return Err(Error::Invalid(format!("CUB timing: n = {n}; the harness takes n in 1..={}", i32::MAX)));
    }
    let file_a = write_input("cub-ops-a", a)?;
    let file_b = match (op.inputs(), b) {
        (2, Some(b)) => Some(write_input("cub-ops-b", b)?),
        (2, None) => return Err(Error::Invalid(format!("CUB {}: a second input is needed", op.name()))),
        _ => None,
    };
    let mut args = vec![
        "ops".to_string(),
        op.name().to_string(),
        T::ELEM.name().to_string(),
        n.to_string(),
        repeat.max(1).to_string(),
        file_a.0.display().to_string(),
    ];
    args.extend(file_b.as_ref().map(|f| f.0.display().to_string()));
    let line = result_line(bin, "CUB ops harness", &args)?;
    parse(&line, n)
}

/// CUB's `DeviceSegmentedReduce::Sum`/`Min`/`Max` (`arg`: `ArgMin`/`ArgMax`) of `data` over the
/// CSR `offsets` (`offsets.len() − 1` segments), `repeat` calls between CUDA events. Returns the
/// timing, the last call's values and, for `arg`, its indices within the segments — CUB's
/// convention for an empty segment (index 1, its own value) replaced by this library's (the
/// identity and `u32::MAX`), so that `segmented::check_all` checks the rest.
pub fn time_segmented<T: Value>(
    op: crate::types::Op,
    arg: bool,
    data: &[T],
    offsets: &[u32],
    repeat: u32,
) -> Result<(CubTiming, Vec<T>, Option<Vec<u32>>)> {
    let bin = harness()?;
    let (n, segments) = (data.len(), offsets.len().saturating_sub(1));
    if n == 0 || n > i32::MAX as usize || segments == 0 || segments > i32::MAX as usize {
        return Err(Error::Invalid(format!(
            "CUB timing: n = {n}, {segments} segments; both must be in 1..={}",
            i32::MAX
        )));
    }
    let file = write_input("cub-segmented", data)?;
    let offsets_file = TempFile::write("cub-offsets", "u32", "CUB's offsets file", |w| {
        offsets.iter().try_for_each(|o| w.write_all(&o.to_le_bytes()))
    })?;
    let name = format!("{}{}", if arg { "arg" } else { "" }, op.name());
    let args = [
        "segmented".to_string(),
        name,
        T::ELEM.name().to_string(),
        n.to_string(),
        segments.to_string(),
        repeat.max(1).to_string(),
        file.0.display().to_string(),
        offsets_file.0.display().to_string(),
    ];
    let (timing, _) = parse(&result_line(bin, "CUB ops harness", &args)?, n)?;
    let read = |ext: &str, size: usize| {
        let path = file.0.with_extension(format!("{}.{ext}", T::ELEM.name()));
        let bytes =
            std::fs::read(&path).map_err(|e| Error::Unsupported(format!("cannot read {}: {e}", path.display())))?;
        if bytes.len() != segments * size {
            return Err(Error::Unsupported(format!(
                "{} holds {} bytes, not {}",
                path.display(),
                bytes.len(),
                segments * size
            )));
        }
        Ok(bytes)
    };
    let size = T::ELEM.size();
    let mut values: Vec<T> = crate::cub::values_of(&read("out", size)?);
    let indices = if arg {
        let mut idx: Vec<u32> =
            read("idx", 4)?.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        for s in (0..segments).filter(|&s| offsets[s] == offsets[s + 1]) {
            (values[s], idx[s]) = (crate::types::identity(op), crate::reduce::segmented::NO_INDEX);
        }
        Some(idx)
    } else {
        None
    };
    Ok((timing, values, indices))
}

/// CUB's `DeviceHistogram::HistogramEven` of `samples`, `bins` bins over `[lower, upper)`,
/// `repeat` calls between CUDA events (each with CUB's zeroing of the counters): the timing and
/// the last call's counters.
pub fn time_histogram<S: crate::histogram::HistSample>(
    samples: &[S],
    bins: u32,
    (lower, upper): (S::Level, S::Level),
    repeat: u32,
) -> Result<(CubTiming, Vec<u32>)> {
    let bin = harness()?;
    let n = samples.len();
    if n == 0 || n > i32::MAX as usize {
        return Err(Error::Invalid(format!("CUB timing: n = {n}; it must be in 1..={}", i32::MAX)));
    }
    let file = write_bits("cub-histogram", S::NAME, samples, |s| s.bits().into())?;
    let args = [
        "histogram".to_string(),
        S::NAME.to_string(),
        n.to_string(),
        bins.to_string(),
        lower.to_string(),
        upper.to_string(),
        repeat.max(1).to_string(),
        file.0.display().to_string(),
    ];
    let (timing, _) = parse(&result_line(bin, "CUB ops harness", &args)?, n)?;
    let path = file.0.with_extension(format!("{}.out", S::NAME));
    let bytes = std::fs::read(&path).map_err(|e| Error::Unsupported(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() != 4 * bins as usize {
        return Err(Error::Unsupported(format!("{} holds {} bytes, not {}", path.display(), bytes.len(), 4 * bins)));
    }
    let counts = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    Ok((timing, counts))
}

/// CUB's `DeviceSelect::If`, `Flagged`, `Unique`, `DevicePartition::If`, `Flagged` or
/// `DeviceRunLengthEncode::Encode` (`kind`: `if`, `flagged`, `unique`, `partition_if`,
/// `partition_flagged`, `run_length`) of `data`, the predicate as the outcomes of comparing with
/// its operand (`kernels::select::Predicate`'s, which the harness's functor computes the same
/// way), `flags` one byte per element for the flagged kinds; `repeat` calls between CUDA
/// events: the timing, the last call's kept count, its output (every element of a partition,
/// else the kept ones or the runs' first elements) and the runs' lengths (`run_length`; else
/// none).
pub fn time_select<T: crate::select::SelectElement>(
    kind: &str,
    data: &[T],
    (outcomes, operand): (u32, T),
    flags: Option<&[u8]>,
    repeat: u32,
) -> Result<(CubTiming, usize, Vec<T>, Vec<u32>)> {
    let bin = harness()?;
    let n = data.len();
    if n == 0 || n > i32::MAX as usize {
        return Err(Error::Invalid(format!("CUB timing: n = {n}; it must be in 1..={}", i32::MAX)));
    }
    let size = std::mem::size_of::<T>();
    let file = write_bits("cub-select", T::NAME, data, T::to_bits64)?;
    let flags_file =
        flags.map(|f| TempFile::write("cub-flags", "u8", "CUB's flags file", |w| w.write_all(f))).transpose()?;
    let mut args = vec![
        "select".to_string(),
        kind.to_string(),
        T::NAME.to_string(),
        n.to_string(),
        repeat.max(1).to_string(),
        outcomes.to_string(),
        format!("{:x}", operand.to_bits64()),
        file.0.display().to_string(),
    ];
    args.extend(flags_file.as_ref().map(|f| f.0.display().to_string()));
    let (timing, answer) = parse(&result_line(bin, "CUB ops harness", &args)?, n)?;
    let path = file.0.with_extension(format!("{}.out", T::NAME));
    let bytes = std::fs::read(&path).map_err(|e| Error::Unsupported(format!("cannot read {}: {e}", path.display())))?;
    let kept = answer.bits as usize;
    let written = if kind.starts_with("partition") { n } else { kept };
    if bytes.len() != size * written {
        return Err(Error::Unsupported(format!(
            "{} holds {} bytes, not {}",
            path.display(),
            bytes.len(),
            size * written
        )));
    }
    let output = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            T::from_bits64(u64::from_le_bytes(b))
        })
        .collect();
    // The runs' lengths (run_length: one i32 a run, in FILE.len).
    let mut lengths = Vec::new();
    if kind == "run_length" {
        let path = file.0.with_extension(format!("{}.len", T::NAME));
        let bytes =
            std::fs::read(&path).map_err(|e| Error::Unsupported(format!("cannot read {}: {e}", path.display())))?;
        if bytes.len() != 4 * kept {
            return Err(Error::Unsupported(format!(
                "{} holds {} bytes, not {}",
                path.display(),
                bytes.len(),
                4 * kept
            )));
        }
        lengths = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    }
    Ok((timing, kept, output, lengths))
}

/// The timing and answer of a `RESULT` line (or the error of an `ERROR` line).
fn parse(line: &str, n: usize) -> Result<(CubTiming, CubAnswer)> {
    if let Some(why) = line.strip_prefix("ERROR ") {
        return Err(Error::Unsupported(format!("CUB ops harness: {why}")));
    }
    let times_us: Vec<f64> =
        field(line, "times_us").map(|t| t.split(',').filter_map(|x| x.parse().ok()).collect()).unwrap_or_default();
    let bits = field(line, "value").and_then(|v| u64::from_str_radix(v, 16).ok());
    let index = field(line, "index").and_then(|i| i.parse::<i64>().ok());
    match (times_us.is_empty(), bits, index) {
        (false, Some(bits), Some(index)) => {
            let timing = CubTiming { n, median_us: median(&times_us), times_us };
            Ok((timing, CubAnswer { bits, index: u64::try_from(index).ok() }))
        }
        _ => Err(Error::Unsupported(format!("unexpected reply from the CUB ops harness: `{line}`"))),
    }
}

/// `data` in a private temporary file, little-endian, as the harness reads it.
fn write_input<T: Value>(stem: &str, data: &[T]) -> Result<TempFile> {
    write_bits(stem, T::ELEM.name(), data, |x| x.bits())
}

/// `data` in a private temporary file named for the type `name`: each element's low
/// `size_of::<T>()` bytes of `bits(x)`, little-endian.
fn write_bits<T: Copy>(stem: &str, name: &str, data: &[T], bits: impl Fn(T) -> u64) -> Result<TempFile> {
    let size = std::mem::size_of::<T>();
    TempFile::write(stem, name, "CUB's input file", |w| {
        data.iter().try_for_each(|&x| w.write_all(&bits(x).to_le_bytes()[..size]))
    })
}

/// The built harness, once per process.
fn harness() -> Result<&'static Path> {
    static BUILT: OnceLock<std::result::Result<PathBuf, Kept>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let h = Harness { what: "CUB ops", file: "cub/ops.cu", stem: "cub_ops", source: SOURCE, extra: &[] };
        build_harness(&h).map_err(|e| match e {
            Error::NoGpu(cause) => keep(Error::Unsupported(format!("CUB needs a GPU: {cause}"))),
            e => keep(e),
        })
    });
    match built {
        Ok(p) => Ok(p),
        Err((kind, m)) => Err(kind(m.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_harness_lines() {
        let line =
            "RESULT op=argmax n=10 repeat=3 median_us=8.5 min_us=8.0 times_us=8.0,8.5,9.0 value=40490fdb index=7";
        let (t, a) = parse(line, 10).unwrap();
        assert_eq!((t.median_us, t.times_us.len(), a), (8.5, 3, CubAnswer { bits: 0x4049_0fdb, index: Some(7) }));
        let (_, a) = parse("RESULT op=dot n=1 times_us=1.0 value=ff index=-1", 1).unwrap();
        assert_eq!(a.index, None);
        assert!(parse("ERROR cudaMalloc failed: out of memory", 1).unwrap_err().to_string().contains("out of memory"));
        assert!(parse("RESULT op=dot n=1 times_us=1.0", 1).is_err());
    }

    #[test]
    fn without_a_gpu_cub_is_unavailable_with_a_reason() {
        if crate::Backend::gpu().is_err() {
            let e = time(Operation::ArgMax, &[1.0f32, 2.0], None, 3).unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)) && e.to_string().contains("GPU"), "{e}");
        }
    }
}
