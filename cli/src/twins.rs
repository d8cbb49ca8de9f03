//! The CUDA C twins of the classic kernels, for timing Rust against CUDA C on the same data:
//! the book's chapter 3 and 5 reductions, the sum-of-squares tutorial and the two classic
//! scans (`bit`, `blelloch`), written in CUDA C as the book and tutorials write them.
//!
//! The twins live in one CUDA C++ file, `cub/classic.cu` (embedded in this library), with a
//! small harness that this module compiles **at run time** with the machine's `nvcc`, exactly
//! like the CUB harness ([`crate::cub`]: same nvcc discovery, same cache, `-O3 -arch=sm_XX`).
//! Where there is no GPU or no nvcc, [`available`] says why and [`time`] fails with that reason.
//! The nested twins (chapter 3's dynamic parallelism) come from the same file, built a second
//! time with its nested section in, as relocatable device code linked with the device runtime
//! (`-DCLASSIC_NESTED -rdc=true -lcudadevrt`), so that the other twins' build stays as measured.
//!
//! [`time`] writes the input to a temporary file (raw little-endian `i32`), runs
//! `classic KERNEL FILE N BLOCK REPEAT [EXPECTED]` and parses its one line. The harness uses
//! the Rust twin's launch geometry (grid, block, items per thread, shared memory), makes one
//! untimed warm-up run, then times `REPEAT` runs with CUDA events around the launch (a scan:
//! around all its launches), restoring the scratch copy of in-place kernels outside the
//! timing, and verifies **every** timed run (partials added on the host with wrapping `i32`
//! arithmetic; scans element by element against the CPU inclusive scan). Like
//! [`crate::timing::timed_runs`], a slow kernel stops after 3 runs once its runs took 3 s.
//!
//! Differences from the book, each explained in `classic.cu`: the device input is zero-padded
//! to whole segments (`grid × block × items` elements) and the book's reductions get that
//! padded length as `n`, as the book's sizes are whole segments; early returns before a
//! `__syncthreads` become flags; the `volatile` last-warp code gets `__syncwarp()` between
//! its steps (Volta and later do not run a warp in lock step). The scans compute the
//! inclusive scan only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::cpu::Reference;
use crate::cub::{Harness, Kept, build_harness, field, keep, result_line};
use crate::error::{Error, Result};
use crate::private::TempFile;
use crate::registry;
use crate::scan;

/// The harness source, compiled at run time.
const SOURCE: &str = include_str!("../../cub/classic.cu");

/// Every twin: the Rust variant's name and its CUDA C function in `classic.cu` (the book's name for
/// the chapter 3 and 5 kernels; the tutorial's kernels are all called `sumOfSquares`, so those
/// are named after their step).
pub const TWINS: &[(&str, &str)] = &[
    ("neighbored", "reduceNeighbored"),
    // The faithful form of `neighbored`: the same book kernel, whose `%` nvcc keeps.
    ("neighbored_modulo", "reduceNeighbored"),
    ("neighbored_less", "reduceNeighboredLess"),
    ("interleaved", "reduceInterleaved"),
    ("unroll2", "reduceUnrolling2"),
    ("unroll4", "reduceUnrolling4"),
    ("unroll8", "reduceUnrolling8"),
    ("unroll_warps8", "reduceUnrollWarps8"),
    ("complete_unroll_warps8", "reduceCompleteUnrollWarps8"),
    ("complete_unroll", "reduceCompleteUnroll<iBlockSize>"),
    ("gmem", "reduceGmem"),
    ("smem", "reduceSmem"),
    ("smem_unroll4", "reduceSmemUnroll4"),
    ("smem_unroll4_dyn", "reduceSmemUnrollDyn"),
    ("squares_one_thread", "sumOfSquaresOneThread"),
    ("squares_chunked", "sumOfSquaresChunked"),
    ("squares_coalesced", "sumOfSquaresCoalesced"),
    ("squares_grid_stride", "sumOfSquaresGridStride"),
    ("squares_block_tree", "sumOfSquaresBlockTree"),
    ("bit", "gen_bit_in_one_block + calc_sum_using_bit"),
    ("blelloch", "prescan (GPU Gems 3) + per-level offsets"),
    // Built apart, with -rdc=true and the device runtime (`NESTED_FLAGS`).
    ("recursive_reduce", "gpuRecursiveReduce"),
    ("recursive_reduce_nosync", "gpuRecursiveReduceNosync"),
    ("recursive_reduce2", "gpuRecursiveReduce2"),
];

/// The names of the variants (reductions and scans) that have a CUDA C twin.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    TWINS.iter().map(|(name, _)| *name)
}

/// Does the variant (or scan variant) `variant_name` have a CUDA C twin?
pub fn has_twin(variant_name: &str) -> bool {
    names().any(|n| n == variant_name)
}

/// The CUDA C function of the twin of `variant_name` (see [`TWINS`]), if it has one.
pub fn book_name(variant_name: &str) -> Option<&'static str> {
    TWINS.iter().find(|(n, _)| *n == variant_name).map(|(_, book)| *book)
}

/// One twin measured and checked by the harness.
#[derive(Clone, Debug, PartialEq)]
pub struct TwinTiming {
    /// The variant's name.
    pub name: &'static str,
    /// Elements.
    pub n: usize,
    /// Blocks of the (first) launch.
    pub grid: u32,
    /// Threads per block (1 for `squares_one_thread`, 512 for the scans).
    pub block: u32,
    /// Launches per run (1 for a reduction; every launch of the plan for a scan).
    pub launches: u32,
    /// Multiprocessors of the GPU (the sum-of-squares grids follow from it).
    pub multiprocessors: u32,
    /// Each timed run, µs (CUDA events around the run's launches).
    pub times_us: Vec<f64>,
    /// Median of `times_us`.
    pub median_us: f64,
    /// Fastest run, µs.
    pub min_us: f64,
    /// Slowest run, µs.
    pub max_us: f64,
    /// The last run's result: the sum (a scan: the last element of its output).
    pub result: i32,
    /// The expected result (the Rust CPU reference; a scan: the last prefix).
    pub expected: i32,
    /// Timed runs whose result was right (a scan: every element).
    pub ok_runs: usize,
    /// Every timed run was right.
    pub all_correct: bool,
    /// Sum-of-squares kernels: the last run's in-kernel span in SM cycles (latest block end −
    /// earliest block start of `clock64()`).
    pub cycles: Option<u64>,
}

impl TwinTiming {
    /// Timed runs (a slow kernel gets fewer than asked, at least 3, as in [`crate::timing::timed_runs`]).
    pub fn runs(&self) -> usize {
        self.times_us.len()
    }
}

/// `Ok` when the twins can be timed here: a GPU, an nvcc, and the harness builds (the first
/// call on a machine compiles it). Otherwise [`Error::NoGpu`] or [`Error::Unsupported`] with
/// the one reason, or [`Error::Invalid`] where the harness cache is refused (another user's, or
/// writable by others: `crate::cub`).
pub fn available() -> Result<()> {
    harness_for("interleaved").map(|_| ())
}

/// [`available`] for the twin of `name`: the nested twins have a harness of their own
/// (`-rdc=true -lcudadevrt`), which may fail to build where the plain one builds.
pub fn available_for(name: &str) -> Result<()> {
    harness_for(name).map(|_| ())
}

/// The input of a comparison run, prepared once for every twin: the values written to the
/// harness's input file, and their CPU references, each computed on first use.
pub struct TwinInput {
    n: usize,
    data: Vec<i32>,
    file: TempFile,
    sum: OnceLock<i32>,
    squares: OnceLock<i32>,
}

impl TwinInput {
    /// Writes `data` (all of it is the input: n = `data.len()`) to a private temporary file (in
    /// a folder of its own, mode 0600), removed when this is dropped.
    pub fn new(data: Vec<i32>) -> Result<Self> {
        if data.is_empty() || data.len() > u32::MAX as usize {
            return Err(Error::Invalid(format!(
                "twin input of {} elements; n must be in 1..={}",
                data.len(),
                u32::MAX
            )));
        }
        let file = write_twin_input(&data)?;
        Ok(Self { n: data.len(), data, file, sum: OnceLock::new(), squares: OnceLock::new() })
    }

    /// The answer a twin of `op` must give (a scan's twin: its last element, the sum).
    fn expected(&self, op: Option<registry::Op>) -> i32 {
        match op {
            Some(registry::Op::SumOfSquares) => *self.squares.get_or_init(|| Reference::of_squares(&self.data).wrapped),
            Some(registry::Op::Sum) | None => *self.sum.get_or_init(|| Reference::of(&self.data).wrapped),
            // No twin computes these (the twins are the classic i32 sums); answered for completeness.
            Some(op @ (registry::Op::Min | registry::Op::Max)) => Reference::for_op(op, &self.data).wrapped,
        }
    }
}

/// Times the CUDA C twin of `name` on the first `n` elements of `input` with `block` threads
/// per block; see [`time_on`]. Writes the input file for this one call: to time several
/// twins on one input, make a [`TwinInput`] once and call [`time_on`].
pub fn time(name: &str, input: &[i32], n: usize, block: u32, repeat: u32) -> Result<TwinTiming> {
    if input.len() < n {
        return Err(Error::Invalid(format!(
            "twin `{name}`: n = {n} with an input of {} elements; n must be at most the input's length",
            input.len()
        )));
    }
    time_on(name, &TwinInput::new(input[..n].to_vec())?, block, repeat)
}

/// Times the CUDA C twin of `name` on `input` with `block` threads per block (ignored by the
/// scans, which use 512, and by `squares_one_thread`): one untimed warm-up, then `repeat` (at
/// least 1) timed runs, each verified by the harness. A reduction's result is checked against
/// the Rust CPU reference; the launch grid against the Rust twin's.
pub fn time_on(name: &str, input: &TwinInput, block: u32, repeat: u32) -> Result<TwinTiming> {
    let (reduction, scan_variant) = resolve(name)?;
    if let Some(v) = reduction
        && v.grid.uses_block()
        && !v.blocks.allows(block)
    {
        return Err(Error::Invalid(format!("twin `{name}`: block {block}; block must be {}", v.blocks)));
    }
    let bin = harness_for(name)?;
    let n = input.n;
    let expected = input.expected(reduction.map(|v| v.op));
    let mut args = vec![name.to_string(), input.file.0.display().to_string(), n.to_string()];
    args.extend([block.to_string(), repeat.max(1).to_string()]);
    if scan_variant.is_none() {
        args.push(expected.to_string());
    }
    let line = result_line(bin, "twins harness", &args)?;
    let t = parse(&line, expected)?;
    check_geometry(&t)?;
    Ok(t)
}

/// The registry entry of `name`: a reduction variant or a scan variant with a twin.
fn resolve(name: &str) -> Result<(Option<&'static registry::Variant>, Option<&'static scan::ScanVariant>)> {
    if !has_twin(name) {
        let all: Vec<_> = names().collect();
        return Err(Error::Invalid(format!("no CUDA C twin `{name}`; the twins are: {}", all.join(", "))));
    }
    match registry::find(name) {
        Ok(v) => Ok((Some(v), None)),
        Err(_) => Ok((None, Some(scan::find(name)?))),
    }
}

/// The grid the Rust twin launches for `name` on `n` elements with `block` threads per block
/// on a GPU of `multiprocessors` SMs (a scan: its first launch's grid). `None` for a name that
/// is not a twin.
pub fn rust_grid(name: &str, n: usize, block: u32, multiprocessors: u32) -> Option<u64> {
    if !has_twin(name) {
        return None;
    }
    if let Ok(v) = registry::find(name) {
        // The classic grids never ask the occupancy calculator; the sum-of-squares steps fix
        // their blocks per SM.
        let resident = || Ok(v.blocks_per_sm.unwrap_or(1));
        return v.grid.size(n, block, v.items_per_thread, multiprocessors, resident).ok().map(|(g, _)| g);
    }
    scan::find(name).ok().map(|s| (n as u64).div_ceil(s.tile() as u64))
}

/// The tile of a scan twin: the seed's kernels as the seed writes them (BIT's build blocks of
/// 512, Blelloch's tiles of 1024). Since session 4 (issue 13) our `bit` and `blelloch` use
/// larger tiles (`scan::find(name)?.tile()`), so a scan twin is held to the seed's grid.
fn seed_scan_tile(name: &str) -> Option<u64> {
    match name {
        "bit" => Some(512),
        "blelloch" => Some(1024),
        _ => None,
    }
}

/// The grid the harness must launch: the Rust variant's for a reduction twin, the seed's for a
/// scan twin ([`seed_scan_tile`]).
fn twin_grid(name: &str, n: usize, block: u32, multiprocessors: u32) -> Option<u64> {
    match seed_scan_tile(name) {
        Some(tile) => Some((n as u64).div_ceil(tile)),
        None => rust_grid(name, n, block, multiprocessors),
    }
}

/// The harness must launch what it should: a reduction twin the Rust variant's grid, a scan
/// twin the seed's.
fn check_geometry(t: &TwinTiming) -> Result<()> {
    let want = twin_grid(t.name, t.n, t.block, t.multiprocessors);
    if want != Some(t.grid as u64) {
        return Err(Error::Mismatch(format!(
            "twin `{}` launched grid {} for n = {} block {}; it should launch {want:?}",
            t.name, t.grid, t.n, t.block
        )));
    }
    Ok(())
}

/// Parses the harness's line (`RESULT key=value …` or `ERROR what`); `expected` is the
/// caller's reference for the result.
fn parse(line: &str, expected: i32) -> Result<TwinTiming> {
    if let Some(what) = line.strip_prefix("ERROR ") {
        return Err(Error::Unsupported(format!("twins harness: {what}")));
    }
    let bad = |key: &str| Error::Unsupported(format!("the twins harness printed no valid `{key}`: {line}"));
    let num =
        |key: &'static str| -> Result<u64> { field(line, key).and_then(|v| v.parse().ok()).ok_or_else(|| bad(key)) };
    let float =
        |key: &'static str| -> Result<f64> { field(line, key).and_then(|v| v.parse().ok()).ok_or_else(|| bad(key)) };
    let kernel = field(line, "kernel").ok_or_else(|| bad("kernel"))?;
    let name = names().find(|n| *n == kernel).ok_or_else(|| bad("kernel"))?;
    let times_us: Vec<f64> =
        field(line, "times_us").map(|t| t.split(',').filter_map(|x| x.parse().ok()).collect()).unwrap_or_default();
    let runs = num("runs")? as usize;
    if times_us.is_empty() || times_us.len() != runs {
        return Err(bad("times_us"));
    }
    let result: i32 = field(line, "result").and_then(|v| v.parse().ok()).ok_or_else(|| bad("result"))?;
    let ok_runs = num("ok")? as usize;
    let cycles = match field(line, "cycles") {
        Some(c) => Some(c.parse().map_err(|_| bad("cycles"))?),
        None => None,
    };
    Ok(TwinTiming {
        name,
        n: num("n")? as usize,
        grid: u32::try_from(num("grid")?).map_err(|_| bad("grid"))?,
        block: u32::try_from(num("block")?).map_err(|_| bad("block"))?,
        launches: u32::try_from(num("launches")?).map_err(|_| bad("launches"))?,
        multiprocessors: u32::try_from(num("sms")?).map_err(|_| bad("sms"))?,
        median_us: float("median_us")?,
        min_us: float("min_us")?,
        max_us: float("max_us")?,
        times_us,
        result,
        expected,
        ok_runs,
        all_correct: ok_runs == runs && result == expected,
        cycles,
    })
}

/// Writes `data` to `path` as raw little-endian `i32`: the harness's input file format.
pub fn write_input(path: &Path, data: &[i32]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for x in data {
        f.write_all(&x.to_le_bytes())?;
    }
    f.flush()
}

/// The twins' input file: `data` as [`write_input`] lays it out, removed when dropped.
fn write_twin_input(data: &[i32]) -> Result<TempFile> {
    TempFile::write("twin-input", "i32", "the twins' input file", |w| {
        data.iter().try_for_each(|x| w.write_all(&x.to_le_bytes()))
    })
}

/// The nvcc flags of the nested twins' harness: the same source, its nested section compiled
/// in, as relocatable device code linked with the device runtime (the book's
/// `nvcc -rdc=true … -lcudadevrt`). The other twins keep their plain build.
const NESTED_FLAGS: &[&str] = &["-DCLASSIC_NESTED", "-rdc=true", "-lcudadevrt"];

/// Does the twin of `name` launch kernels from the device (and so live in the nested harness)?
fn is_nested(name: &str) -> bool {
    registry::find(name).is_ok_and(|v| matches!(v.finish, registry::Finish::Nested(_)))
}

/// The built harness for the twin of `name`, once per process each (the error kept as its kind
/// and message, since [`Error`] is not `Clone`).
fn harness_for(name: &str) -> Result<&'static Path> {
    type Built = OnceLock<std::result::Result<PathBuf, Kept>>;
    static PLAIN: Built = OnceLock::new();
    static NESTED: Built = OnceLock::new();
    let (cell, h) = if is_nested(name) {
        let h = Harness {
            what: "nested CUDA C twins",
            file: "cub/classic.cu",
            stem: "classic_nested",
            source: SOURCE,
            extra: NESTED_FLAGS,
        };
        (&NESTED, h)
    } else {
        (&PLAIN, Harness { what: "CUDA C twins", file: "cub/classic.cu", stem: "classic", source: SOURCE, extra: &[] })
    };
    match cell.get_or_init(|| build_harness(&h).map_err(keep)) {
        Ok(p) => Ok(p.as_path()),
        Err((kind, m)) => Err(kind(m.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::registry::Family;

    const LINE: &str = "RESULT kernel=unroll8 n=1048583 grid=1025 block=128 launches=1 sms=132 runs=3 \
                        median_us=8.500 min_us=8.100 max_us=9.000 times_us=8.500,8.100,9.000 result=-5 \
                        expected=-5 ok=3";

    #[test]
    fn parses_the_harness_line() {
        let t = parse(LINE, -5).unwrap();
        assert_eq!(
            (t.name, t.n, t.grid, t.block, t.launches, t.multiprocessors),
            ("unroll8", 1048583, 1025, 128, 1, 132)
        );
        assert_eq!(t.times_us, vec![8.5, 8.1, 9.0]);
        assert_eq!((t.median_us, t.min_us, t.max_us), (8.5, 8.1, 9.0));
        assert_eq!((t.result, t.expected, t.ok_runs, t.all_correct, t.cycles), (-5, -5, 3, true, None));
        // A wrong run, or a result that differs from the caller's reference, is not correct.
        assert!(!parse(&LINE.replace("ok=3", "ok=2"), -5).unwrap().all_correct);
        assert!(!parse(LINE, 7).unwrap().all_correct);
        let sq = parse(&format!("{} cycles=12345", LINE.replace("unroll8", "squares_block_tree")), -5).unwrap();
        assert_eq!((sq.name, sq.cycles), ("squares_block_tree", Some(12345)));
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(
            matches!(parse("ERROR cudaMalloc failed: out of memory", 0), Err(Error::Unsupported(m)) if m.contains("out of memory"))
        );
        assert!(parse(&LINE.replace("runs=3", "runs=4"), -5).is_err(), "runs must match the times");
        assert!(parse(&LINE.replace("kernel=unroll8", "kernel=nope"), -5).is_err());
        assert!(parse(&LINE.replace(" grid=1025", ""), -5).is_err());
        assert!(parse(&LINE.replace("result=-5", "result=x"), -5).is_err());
    }

    #[test]
    fn input_file_is_raw_little_endian_i32() {
        let data = [0, 1, -1, i32::MIN, i32::MAX, 0x0102_0304];
        let file = write_twin_input(&data).unwrap();
        let bytes = std::fs::read(&file.0).unwrap();
        assert_eq!(bytes.len(), data.len() * 4);
        assert_eq!(&bytes[4..12], &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(&bytes[20..24], &[4, 3, 2, 1]);
        let back: Vec<i32> = bytes.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(back, data);
        let path = file.0.clone();
        drop(file);
        assert!(!path.exists(), "the temporary input is removed");
    }

    /// Issue 41: the input was `$TMPDIR/reduce-twin-input-PID-K.i32`, created through any link
    /// another user planted at that name. Links planted at every such name of this process are
    /// never followed; the input is in a private folder of its own, mode 0600.
    #[test]
    fn a_link_planted_at_the_old_input_name_is_never_followed() {
        let dir = crate::private::PrivateDir::new("reduce-test-victim-").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted: Vec<PathBuf> = (0..64)
            // fixed temp name: the old names of the input, where "another user" plants links
            .map(|k| std::env::temp_dir().join(format!("reduce-twin-input-{}-{k}.i32", std::process::id())))
            .filter(|p| std::os::unix::fs::symlink(&victim, p).is_ok())
            .collect();
        let file = write_twin_input(&[1, 2, 3]);
        for p in &planted {
            let _ = std::fs::remove_file(p);
        }
        let file = file.unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "a planted link was followed");
        assert_eq!(std::fs::read(&file.0).unwrap().len(), 12);
        let mode = |p: &Path| std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(p).unwrap()) & 0o777;
        assert_eq!((mode(&file.0), mode(file.0.parent().unwrap())), (0o600, 0o700));
    }

    #[test]
    fn every_classic_variant_has_a_twin_and_every_twin_a_variant() {
        // The classic kernels of the curriculum as measured (the committed set) each have a
        // twin; a variant added since needs none (a twin is optional: docs/adding-a-variant.md),
        // and no modern kernel has one.
        let classic = [Family::GlobalMemory, Family::SharedMemory, Family::SumOfSquares];
        for v in registry::all() {
            let measured = crate::committed::figures(v.name, None).is_some();
            if classic.contains(&v.family) && measured {
                assert!(has_twin(v.name), "classic variant {} ({:?}) has no twin", v.name, v.family);
            }
            if has_twin(v.name) {
                assert!(classic.contains(&v.family), "variant {} ({:?}) is not classic", v.name, v.family);
            }
        }
        for s in scan::all() {
            assert_eq!(has_twin(s.name), matches!(s.name, "bit" | "blelloch"), "scan {}", s.name);
        }
        for name in names() {
            assert!(registry::find(name).is_ok() || scan::find(name).is_ok(), "twin {name} has no Rust variant");
            // The harness's table names it (`{"name", Kind::…`).
            assert!(SOURCE.contains(&format!("{{\"{name}\", Kind::")), "classic.cu has no twin {name}");
            assert!(book_name(name).is_some());
        }
        assert_eq!(names().count(), TWINS.len());
        assert!(!has_twin("warp_shuffle") && !has_twin("lookback") && book_name("nope").is_none());
    }

    #[test]
    fn twin_grids_are_the_rust_grids() {
        let emu = Backend::emulator();
        let sms = emu.info().multiprocessors;
        for name in names() {
            for n in [1usize, 1000, 4097, (1 << 20) + 7] {
                if let Ok(v) = registry::find(name) {
                    for block in v.blocks.sizes() {
                        let g = crate::reduce::geometry(&emu, v, n, block, None).unwrap();
                        assert_eq!(rust_grid(name, n, block, sms), Some(g.grid as u64), "{name} n={n} block={block}");
                    }
                } else {
                    let s = scan::find(name).unwrap();
                    let input = emu.upload(&vec![1i32; n]).unwrap();
                    let mut out = emu.alloc::<i32>(n).unwrap();
                    let plan = scan::Scan::new(&emu, s, scan::Kind::Inclusive, &input, &mut out, n).unwrap();
                    assert_eq!(rust_grid(name, n, 512, sms), Some(plan.geometry().grid as u64), "{name} n={n}");
                }
            }
        }
        assert_eq!(rust_grid("warp_shuffle", 10, 128, 1), None);
        // The scan twins keep the seed's tiles; ours are larger since issue 13.
        assert_eq!(twin_grid("bit", (1 << 20) + 7, 512, sms), Some(2049));
        assert_eq!(twin_grid("blelloch", (1 << 20) + 7, 512, sms), Some(1025));
        assert_eq!(twin_grid("interleaved", 1025, 512, sms), rust_grid("interleaved", 1025, 512, sms));
    }

    #[test]
    fn without_a_gpu_the_twins_are_unavailable_with_a_reason() {
        if Backend::gpu().is_err() {
            assert!(matches!(available(), Err(Error::NoGpu(_))));
            assert!(matches!(time("unroll8", &[1, 2, 3], 3, 128, 1), Err(Error::NoGpu(_))));
        }
        assert!(matches!(time("warp_shuffle", &[1], 1, 128, 1), Err(Error::Invalid(m)) if m.contains("unroll8")));
        assert!(matches!(time("unroll8", &[1], 2, 128, 1), Err(Error::Invalid(_))));
        assert!(matches!(time("unroll8", &[1], 1, 100, 1), Err(Error::Invalid(_))));
    }
}
