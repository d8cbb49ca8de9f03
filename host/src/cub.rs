//! NVIDIA's CUB in the same run as our kernels, for comparisons: `cub::DeviceReduce::Sum`
//! and `cub::DeviceScan::InclusiveSum` on `i32`, timed with CUDA events; for the typed
//! kernels `DeviceReduce::Sum/Min/Max` ([`time_typed`]) and `DeviceScan::InclusiveSum` /
//! `InclusiveScan` ([`time_typed_scan`]) on any element type.
//!
//! CUB is a C++ template library, so it is timed by a small CUDA C++ harness,
//! `cub/bench.cu` (embedded in this library), which this module compiles **at run time**
//! with the machine's `nvcc` (`-O3 -arch=sm_XX` for the GPU's compute capability), caches,
//! runs and parses. Nothing else in the project needs nvcc: where there is none, or no GPU,
//! [`available`] says so and the callers leave CUB out.
//!
//! * `nvcc` is `$NVCC`, else the first on the `PATH`, else `/usr/local/cuda/bin/nvcc`, else
//!   the newest `/usr/local/cuda-*/bin/nvcc`.
//! * The binary is cached in `$REDUCE_CUB_CACHE`, else `$TMPDIR/reduce-cub`, under a name
//!   that hashes the harness source, the architecture and the nvcc path, so an edit of
//!   `bench.cu` rebuilds it. The first build takes a while (CUB's templates); later
//!   processes reuse it.
//! * [`time`] runs `bench OP N REPEAT`: the harness allocates and fills the input and CUB's
//!   temporary storage outside any timing, makes 3 warm-up calls, then `REPEAT` calls each
//!   between two CUDA events (the same method as [`crate::reduce::measure`] for our
//!   kernels), and checks the result against the CPU.
//! * [`Session`] keeps one harness process serving batches: `iters` back-to-back calls
//!   between two events, the timing the criterion benches use for our kernels.
//!
//! The build step (`Harness`, `build_harness`: nvcc discovery, cache, compile) is shared
//! with [`crate::twins`], whose CUDA C harness `cub/classic.cu` is built the same way.
//!
//! The harness runs as a **second process** with its own CUDA context on the same GPU (device
//! 0, or what `CUDA_VISIBLE_DEVICES` selects, as for this process); the two never run work at
//! the same time. It is the same machine and the same input values, not the same process.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::registry::Op;
use crate::timing::median;
use crate::types::Value;

/// The harness source, compiled at run time.
const SOURCE: &str = include_str!("../../cub/bench.cu");
/// What both harnesses share (includes, `CHECK`, `fail`), put in front of each source.
const COMMON: &str = include_str!("../../cub/harness_common.cuh");

/// What to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubOp {
    /// `cub::DeviceReduce::Sum` (two launches: the main pass and a one-block finish).
    ReduceSum,
    /// `cub::DeviceScan::InclusiveSum` (single-pass decoupled look-back).
    InclusiveSum,
}

impl CubOp {
    /// The harness's name for the operation.
    fn arg(self) -> &'static str {
        match self {
            CubOp::ReduceSum => "reduce_sum",
            CubOp::InclusiveSum => "inclusive_sum",
        }
    }

    /// The CUB function, for reports.
    pub fn name(self) -> &'static str {
        match self {
            CubOp::ReduceSum => "cub::DeviceReduce::Sum",
            CubOp::InclusiveSum => "cub::DeviceScan::InclusiveSum",
        }
    }
}

/// Times of one operation at one size.
#[derive(Clone, Debug)]
pub struct CubTiming {
    /// Elements.
    pub n: usize,
    /// Each timed call, µs (CUDA events around one call).
    pub times_us: Vec<f64>,
    /// Median of `times_us`.
    pub median_us: f64,
}

/// `Ok` when CUB can be timed here: there is a GPU and an nvcc, and the harness builds (the
/// first call in a machine's life compiles it, which takes a while). `Err` says why not in
/// one line (no GPU, no nvcc, the compiler's first error line…).
pub fn available() -> Result<()> {
    harness().map(|_| ()).map_err(Error::Unsupported)
}

/// Times `op` on `n` elements: `repeat` calls (at least 1), each between two CUDA events,
/// after 3 warm-up calls, every call's result checked against the CPU by the harness. The
/// harness generates the same values as [`crate::input::Input`] from `seed`: `small` for
/// the reduction, `full_range` for the scan (what the CLI feeds our kernels).
pub fn time(op: CubOp, n: usize, repeat: u32, seed: u64) -> Result<CubTiming> {
    let bin = harness().map_err(Error::Unsupported)?;
    if n == 0 || n > i32::MAX as usize {
        return Err(Error::Invalid(format!("CUB timing: n = {n}; the harness takes n in 1..={}", i32::MAX)));
    }
    let args = [op.arg().to_string(), n.to_string(), repeat.max(1).to_string(), seed.to_string()];
    let line = result_line(bin, "CUB harness", &args)?;
    if line.starts_with("ERROR ") {
        return Err(harness_error(&line));
    }
    let times_us = times_of(&line);
    if times_us.is_empty() {
        return Err(Error::Unsupported(format!("the CUB harness printed no times: {line}")));
    }
    Ok(CubTiming { n, median_us: median(&times_us), times_us })
}

/// Runs a harness once with `args` (stdin closed) and returns its first `RESULT …` or
/// `ERROR …` line, for the caller to parse; `what` names the harness in the errors of a
/// harness that cannot start or prints neither.
pub(crate) fn result_line(bin: &Path, what: &str, args: &[String]) -> Result<String> {
    let out = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Unsupported(format!("cannot run the {what} {}: {e}", bin.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().find(|l| l.starts_with("RESULT ") || l.starts_with("ERROR ")) {
        Some(line) => Ok(line.to_string()),
        None => Err(Error::Unsupported(format!(
            "the {what} exited with {} and no result; stderr: {}",
            out.status,
            last_line(&String::from_utf8_lossy(&out.stderr))
        ))),
    }
}

/// The `times_us=t,t,…` of a harness's `RESULT` line (empty when it has none).
fn times_of(line: &str) -> Vec<f64> {
    field(line, "times_us").map(|t| t.split(',').filter_map(|x| x.parse().ok()).collect()).unwrap_or_default()
}

/// A harness's input file in the temporary directory, one per call in this process, removed
/// when dropped.
pub(crate) struct TempFile(pub(crate) PathBuf);

impl TempFile {
    /// A new file `reduce-<stem>-<pid>-<k>.<ext>` holding what `fill` writes (buffered);
    /// `what` names it in the error.
    pub(crate) fn write(
        stem: &str,
        ext: &str,
        what: &str,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Self> {
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let file = TempFile(std::env::temp_dir().join(format!("reduce-{stem}-{}-{k}.{ext}", std::process::id())));
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&file.0)?);
            fill(&mut w)?;
            w.flush()
        };
        write().map_err(|e| Error::Unsupported(format!("cannot write {what} {}: {e}", file.0.display())))?;
        Ok(file)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// CUB's `DeviceReduce::Sum` / `Min` / `Max` on `data` (any [`Value`] type), timed as
/// [`time`] does: `repeat` calls, each between two CUDA events and to its own output. The
/// values reach the harness through a temporary file (the same bits as ours). Returns the
/// timing and the distinct results of all calls, for the caller to check against its CPU
/// reference.
pub fn time_typed<T: Value>(op: Op, data: &[T], repeat: u32) -> Result<(CubTiming, Vec<T>)> {
    let (line, _file) = run_typed("typed", op, data, repeat)?;
    let results: Vec<T> = field(&line, "results")
        .map(|r| r.split(',').filter_map(|x| u64::from_str_radix(x, 16).ok()).map(T::from_bits_u64).collect())
        .unwrap_or_default();
    if results.is_empty() {
        return Err(Error::Unsupported(format!("unexpected reply from the CUB harness: `{line}`")));
    }
    Ok((timing_of(&line, data.len())?, results))
}

/// CUB's `DeviceScan::InclusiveSum` (sum) or `InclusiveScan` with min/max functors that
/// follow `kernels::types` (NaN propagates, −0.0 < +0.0) on `data`, timed as [`time_typed`]:
/// `repeat` calls between CUDA events. Returns the timing and the last call's output (the
/// harness writes it to a second temporary file), for the caller to check element by element.
pub fn time_typed_scan<T: Value>(op: Op, data: &[T], repeat: u32) -> Result<(CubTiming, Vec<T>)> {
    let (line, file) = run_typed("typed-scan", op, data, repeat)?;
    let out = TempFile(file.0.with_extension(format!("{}.out", T::ELEM.name())));
    let bytes = std::fs::read(&out.0)
        .map_err(|e| Error::Unsupported(format!("cannot read CUB's scan output {}: {e}", out.0.display())))?;
    let size = T::ELEM.size();
    if bytes.len() != data.len() * size {
        return Err(Error::Unsupported(format!(
            "CUB's scan output holds {} bytes, not {}",
            bytes.len(),
            data.len() * size
        )));
    }
    let got = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            T::from_bits_u64(u64::from_le_bytes(b))
        })
        .collect();
    Ok((timing_of(&line, data.len())?, got))
}

/// Runs the harness's typed mode `mode` (`typed`, `typed-scan`) for `op` on `data` written to
/// a temporary file (kept alive for the caller); returns its `RESULT` line.
fn run_typed<T: Value>(mode: &str, op: Op, data: &[T], repeat: u32) -> Result<(String, TempFile)> {
    let bin = harness().map_err(Error::Unsupported)?;
    let n = data.len();
    if n == 0 || n > i32::MAX as usize {
        return Err(Error::Invalid(format!("CUB timing: n = {n}; the harness takes n in 1..={}", i32::MAX)));
    }
    let op_arg = match op {
        Op::Sum => "sum",
        Op::Min => "min",
        Op::Max => "max",
        Op::SumOfSquares => return Err(Error::Invalid("CUB has no sum of squares to compare with".into())),
    };
    let size = T::ELEM.size();
    let file = TempFile::write("cub-typed", T::ELEM.name(), "CUB's input file", |w| {
        data.iter().try_for_each(|x| w.write_all(&x.bits().to_le_bytes()[..size]))
    })?;
    let args = [
        mode.to_string(),
        T::ELEM.name().to_string(),
        op_arg.to_string(),
        n.to_string(),
        repeat.max(1).to_string(),
        file.0.display().to_string(),
    ];
    let line = result_line(bin, "CUB harness", &args)?;
    if line.starts_with("ERROR ") {
        return Err(harness_error(&line));
    }
    Ok((line, file))
}

/// The timing of a typed `RESULT` line, or an error when it has no times.
fn timing_of(line: &str, n: usize) -> Result<CubTiming> {
    let times_us = times_of(line);
    if times_us.is_empty() {
        return Err(Error::Unsupported(format!("unexpected reply from the CUB harness: `{line}`")));
    }
    Ok(CubTiming { n, median_us: median(&times_us), times_us })
}

/// A harness process serving batches of back-to-back calls (its `--serve` mode), for timing
/// loops that, like criterion's, ask for `iters` calls at a time.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    /// Starts the harness (building it first if needed).
    pub fn start() -> Result<Self> {
        let bin = harness().map_err(Error::Unsupported)?;
        let mut child = Command::new(bin)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::Unsupported(format!("cannot run the CUB harness {}: {e}", bin.display())))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(Self { child, stdin, stdout })
    }

    /// Device time, in µs, of `iters` back-to-back calls of `op` on `n` elements between two
    /// CUDA events (no synchronisation between the calls). The first request for an
    /// `(op, n)` also allocates, warms up and verifies, outside the timed region.
    pub fn batch(&mut self, op: CubOp, n: usize, iters: u64) -> Result<f64> {
        if n == 0 || n > i32::MAX as usize || iters == 0 {
            return Err(Error::Invalid(format!("CUB batch: n = {n}, iters = {iters}; both must be ≥ 1, n ≤ 2^31-1")));
        }
        let stdin = self.stdin.as_mut().expect("stdin is open until drop");
        writeln!(stdin, "{} {n} {iters}", op.arg())
            .and_then(|_| stdin.flush())
            .map_err(|e| Error::Unsupported(format!("the CUB harness stopped listening: {e}")))?;
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| Error::Unsupported(format!("reading from the CUB harness: {e}")))?;
        let line = line.trim_end();
        if line.starts_with("ERROR ") {
            return Err(harness_error(line));
        }
        field(line, "total_us").and_then(|t| t.parse().ok()).ok_or_else(|| {
            Error::Unsupported(format!("unexpected reply from the CUB harness: `{line}` (it may have crashed)"))
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // End of input ends the harness.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The value of `key=value` in a harness line.
pub(crate) fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace().find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn harness_error(line: &str) -> Error {
    let msg = line.trim_start_matches("ERROR ").to_string();
    if msg.contains(", got ") {
        Error::Mismatch(format!("CUB harness: {msg}"))
    } else {
        Error::Unsupported(format!("CUB harness: {msg}"))
    }
}

pub(crate) fn last_line(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(empty)").trim()
}

/// The built harness, once per process.
fn harness() -> std::result::Result<&'static Path, String> {
    static BUILT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).as_ref().map(PathBuf::as_path).map_err(Clone::clone)
}

fn build() -> std::result::Result<PathBuf, String> {
    build_harness(&Harness { what: "CUB", file: "cub/bench.cu", stem: "cub_bench", source: SOURCE, extra: &[] })
        .map_err(|e| match e {
            Error::NoGpu(cause) => format!("CUB needs a GPU: {cause}"),
            Error::Unsupported(m) => m,
            e => e.to_string(),
        })
}

/// A CUDA C++ harness embedded in this library, compiled at run time by [`build_harness`].
pub(crate) struct Harness {
    /// What it times, for messages ("CUB").
    pub what: &'static str,
    /// Its path in the repository, for messages.
    pub file: &'static str,
    /// Prefix of the cached source and binary names.
    pub stem: &'static str,
    /// The source.
    pub source: &'static str,
    /// nvcc flags beyond the common ones, for the build and its cache key (the nested twins:
    /// `-DCLASSIC_NESTED -rdc=true`, and `-lcudadevrt` after the source).
    pub extra: &'static [&'static str],
}

/// Builds `h` with the machine's nvcc for the GPU's architecture (`-O3 -std=c++17
/// -arch=sm_XX`, then `h.extra`), or finds it already built in the cache (`$REDUCE_CUB_CACHE`, else
/// `$TMPDIR/reduce-cub`, under a name that hashes the source, the architecture and the nvcc
/// path). [`Error::NoGpu`] where there is no GPU, [`Error::Unsupported`] (one line) where there
/// is no nvcc or it fails.
pub(crate) fn build_harness(h: &Harness) -> Result<PathBuf> {
    let backend = Backend::gpu().map_err(|e| match e {
        Error::NoGpu(cause) => Error::NoGpu(cause),
        e => Error::NoGpu(e.to_string()),
    })?;
    let (major, minor) = backend.info().compute_capability;
    let arch = format!("sm_{major}{minor}");
    let nvcc = find_nvcc().ok_or_else(|| {
        Error::Unsupported(
            "no nvcc (set NVCC, put nvcc on the PATH, or install the CUDA toolkit in /usr/local/cuda)".to_string(),
        )
    })?;
    let dir = std::env::var_os("REDUCE_CUB_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("reduce-cub"));
    let unsupported = Error::Unsupported;
    std::fs::create_dir_all(&dir)
        .map_err(|e| unsupported(format!("cannot create the harness cache {}: {e}", dir.display())))?;
    let text = format!("{COMMON}\n{}", h.source);
    let extra = h.extra.join(" ");
    let key = fnv1a(&[text.as_bytes(), arch.as_bytes(), nvcc.as_os_str().as_encoded_bytes(), extra.as_bytes()]);
    let stem = h.stem;
    let bin = dir.join(format!("{stem}_{arch}_{key:016x}"));
    if bin.is_file() {
        return Ok(bin);
    }
    let src = dir.join(format!("{stem}_{key:016x}.cu"));
    std::fs::write(&src, &text).map_err(|e| unsupported(format!("cannot write {}: {e}", src.display())))?;
    // Build under a private name, then rename: concurrent processes never run a half-written file.
    let tmp = dir.join(format!("{stem}_{arch}_{key:016x}.{}.tmp", std::process::id()));
    eprintln!(
        "building the {} harness with {} -O3 -arch={arch}{}{extra} (once; cached in {})…",
        h.what,
        nvcc.display(),
        if extra.is_empty() { "" } else { " " },
        dir.display()
    );
    // Flags go before the source, libraries (`-l…`) after it, as a linker wants them.
    let (libs, flags): (Vec<&str>, Vec<&str>) = h.extra.iter().partition(|f| f.starts_with("-l"));
    let out = Command::new(&nvcc)
        .args(["-O3", "-std=c++17", &format!("-arch={arch}")])
        .args(flags)
        .arg("-o")
        .arg(&tmp)
        .arg(&src)
        .args(libs)
        .output()
        .map_err(|e| unsupported(format!("cannot run {}: {e}", nvcc.display())))?;
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr);
        let first = log.lines().find(|l| l.contains("error")).unwrap_or_else(|| last_line(&log));
        return Err(unsupported(format!("{} could not build {} for {arch}: {}", nvcc.display(), h.file, first.trim())));
    }
    std::fs::rename(&tmp, &bin)
        .map_err(|e| unsupported(format!("cannot move the {} harness into {}: {e}", h.what, bin.display())))?;
    Ok(bin)
}

fn find_nvcc() -> Option<PathBuf> {
    find_cuda_tool("NVCC", "nvcc")
}

/// A CUDA toolkit program: `$ENV`, else the first `name` on the `PATH`, else
/// `/usr/local/cuda/bin/name`, else the newest `/usr/local/cuda-X.Y/bin/name` (by version
/// number, so 12.10 is newer than 12.9). Used for nvcc here and ncu in [`crate::metrics`].
pub(crate) fn find_cuda_tool(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH")
        && let Some(p) = std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
    {
        return Some(p);
    }
    let default = PathBuf::from("/usr/local/cuda/bin").join(name);
    if default.is_file() {
        return Some(default);
    }
    let mut versioned: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir("/usr/local")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let dir = e.file_name().to_string_lossy().into_owned();
            let version = dir.strip_prefix("cuda-")?.split('.').map(|x| x.parse().unwrap_or(0)).collect();
            Some((version, e.path().join("bin").join(name)))
        })
        .filter(|(_, p)| p.is_file())
        .collect();
    versioned.sort();
    versioned.pop().map(|(_, p)| p)
}

/// FNV-1a over the parts: a cache key that is the same in every build of this program.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_harness_lines() {
        let l = "RESULT op=reduce_sum n=1024 repeat=3 median_us=8.800 min_us=8.1 times_us=8.8,8.1,9.0";
        assert_eq!(field(l, "median_us"), Some("8.800"));
        assert_eq!(field(l, "times_us"), Some("8.8,8.1,9.0"));
        assert_eq!(field(l, "n"), Some("1024"));
        assert_eq!(field(l, "nope"), None);
        assert!(matches!(harness_error("ERROR DeviceReduce::Sum n=5: expected 1, got 2"), Error::Mismatch(_)));
        assert!(matches!(harness_error("ERROR cudaMalloc failed: out of memory"), Error::Unsupported(_)));
    }

    #[test]
    fn without_a_gpu_cub_is_unavailable_with_a_reason() {
        if Backend::gpu().is_err() {
            let why = available().unwrap_err();
            assert!(why.to_string().contains("GPU"), "{why}");
            assert!(matches!(time(CubOp::ReduceSum, 1024, 3, 1), Err(Error::Unsupported(_))));
        }
    }

    #[test]
    fn cache_key_depends_on_every_part() {
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(fnv1a(&[b"x"]), fnv1a(&[b"x"]));
    }
}
