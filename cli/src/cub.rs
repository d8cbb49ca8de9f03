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
//! * The binary is cached in the user's own space — `$REDUCE_CUB_CACHE`, else
//!   `$XDG_CACHE_HOME/reduce-scan`, else `~/.cache/reduce-scan` (created with mode 0700) —
//!   under a name that hashes the harness source, the architecture and the nvcc path, so an
//!   edit of `bench.cu` rebuilds it. The first build takes a while (CUB's templates); later
//!   processes reuse it, once the folder and the file pass the checks of a shared machine
//!   (owned by the user, not writable by group or others: `crate::private`).
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
use crate::private::{self, PrivateDir, TempFile};
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
/// one line (no GPU, no nvcc, the compiler's first error line…): [`Error::Unsupported`], or
/// [`Error::Invalid`] where the harness cache is refused (another user's, or writable by others).
pub fn available() -> Result<()> {
    harness().map(|_| ())
}

/// Times `op` on `n` elements: `repeat` calls (at least 1), each between two CUDA events,
/// after 3 warm-up calls, every call's result checked against the CPU by the harness. The
/// harness generates the same values as [`crate::input::Input`] from `seed`: `small` for
/// the reduction, `full_range` for the scan (what the CLI feeds our kernels).
pub fn time(op: CubOp, n: usize, repeat: u32, seed: u64) -> Result<CubTiming> {
    let bin = harness()?;
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
    // `FILE.out`, beside the input in its private folder (removed with it).
    let out = file.0.with_extension(format!("{}.out", T::ELEM.name()));
    let bytes = std::fs::read(&out)
        .map_err(|e| Error::Unsupported(format!("cannot read CUB's scan output {}: {e}", out.display())))?;
    let size = T::ELEM.size();
    if bytes.len() != data.len() * size {
        return Err(Error::Unsupported(format!(
            "CUB's scan output holds {} bytes, not {}",
            bytes.len(),
            data.len() * size
        )));
    }
    Ok((timing_of(&line, data.len())?, values_of(&bytes)))
}

/// The `T`s a harness wrote: `T::ELEM.size()` little-endian bytes each (a trailing part of an
/// element is dropped; the callers check the length first).
pub(crate) fn values_of<T: Value>(bytes: &[u8]) -> Vec<T> {
    let size = T::ELEM.size();
    bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            T::from_bits_u64(u64::from_le_bytes(b))
        })
        .collect()
}

/// Runs the harness's typed mode `mode` (`typed`, `typed-scan`) for `op` on `data` written to
/// a temporary file (kept alive for the caller); returns its `RESULT` line.
fn run_typed<T: Value>(mode: &str, op: Op, data: &[T], repeat: u32) -> Result<(String, TempFile)> {
    let bin = harness()?;
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
        let bin = harness()?;
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

pub(crate) use reduce_scan::{find_cuda_tool, last_line};

/// A harness build's error as a `OnceLock` keeps it ([`Error`] is not `Clone`): its kind (the
/// variant's constructor) and its message. A refused cache stays [`Error::Invalid`].
pub(crate) type Kept = (fn(String) -> Error, String);

/// `e` as [`Kept`]: the kinds a build fails with, and any other as [`Error::Unsupported`].
pub(crate) fn keep(e: Error) -> Kept {
    match e {
        Error::NoGpu(m) => (Error::NoGpu, m),
        Error::Invalid(m) => (Error::Invalid, m),
        Error::Unsupported(m) => (Error::Unsupported, m),
        e => (Error::Unsupported, e.to_string()),
    }
}

/// The built harness, once per process.
fn harness() -> Result<&'static Path> {
    static BUILT: OnceLock<std::result::Result<PathBuf, Kept>> = OnceLock::new();
    match BUILT.get_or_init(build) {
        Ok(p) => Ok(p),
        Err((kind, m)) => Err(kind(m.clone())),
    }
}

fn build() -> std::result::Result<PathBuf, Kept> {
    build_harness(&Harness { what: "CUB", file: "cub/bench.cu", stem: "cub_bench", source: SOURCE, extra: &[] })
        .map_err(|e| match e {
            Error::NoGpu(cause) => keep(Error::Unsupported(format!("CUB needs a GPU: {cause}"))),
            e => keep(e),
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
/// -arch=sm_XX`, then `h.extra`), or finds it already built in the harness cache (in the user's
/// own space, `crate::private`: `$REDUCE_CUB_CACHE`, else `$XDG_CACHE_HOME/reduce-scan`, else
/// `~/.cache/reduce-scan`), under a name that hashes the source, the architecture and the nvcc
/// path. [`Error::NoGpu`] where there is no GPU, [`Error::Unsupported`] (one line) where there
/// is no nvcc or it fails, [`Error::Invalid`] where the cache or the cached file is refused.
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
    cached_or_built(h, &nvcc, &arch, &private::cache_dir()?)
}

/// The source text nvcc compiles for `h`, and its cache key: a hash of the text, the
/// architecture, the nvcc path and the extra flags. The binary is `{stem}_{arch}_{key}` in the
/// cache, its source `{stem}_{key}.cu`.
fn harness_key(h: &Harness, nvcc: &Path, arch: &str) -> (String, String) {
    let text = format!("{COMMON}\n{}", h.source);
    let extra = h.extra.join(" ");
    let key = fnv1a(&[text.as_bytes(), arch.as_bytes(), nvcc.as_os_str().as_encoded_bytes(), extra.as_bytes()]);
    (text, format!("{key:016x}"))
}

/// `h`'s binary in the cache `dir` (created private if missing; the folder and a cached file
/// checked before use), built with `nvcc` for `arch` where there is none.
fn cached_or_built(h: &Harness, nvcc: &Path, arch: &str, dir: &Path) -> Result<PathBuf> {
    private::open_cache(dir)?;
    let (text, key) = harness_key(h, nvcc, arch);
    let name = format!("{}_{arch}_{key}", h.stem);
    let bin = dir.join(&name);
    if let Some(bin) = private::trusted_program(&bin)? {
        return Ok(bin);
    }
    let unsupported = Error::Unsupported;
    // Built in a private folder inside the cache (nvcc's own temporary files too, through its
    // TMPDIR), then moved into place: concurrent processes never run a half-written file.
    let work = PrivateDir::inside(dir, &format!(".build-{name}-"))?;
    let src = work.path().join(format!("{name}.cu"));
    private::create_new(&src, 0o600)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| unsupported(format!("cannot write {}: {e}", src.display())))?;
    let tmp = work.path().join(&name);
    let extra = h.extra.join(" ");
    eprintln!(
        "building the {} harness with {} -O3 -arch={arch}{}{extra} (once; cached in {})…",
        h.what,
        nvcc.display(),
        if extra.is_empty() { "" } else { " " },
        dir.display()
    );
    // Flags go before the source, libraries (`-l…`) after it, as a linker wants them.
    let (libs, flags): (Vec<&str>, Vec<&str>) = h.extra.iter().partition(|f| f.starts_with("-l"));
    let out = Command::new(nvcc)
        .args(["-O3", "-std=c++17", &format!("-arch={arch}")])
        .args(flags)
        .arg("-o")
        .arg(&tmp)
        .arg(&src)
        .args(libs)
        .env("TMPDIR", work.path())
        .output()
        .map_err(|e| unsupported(format!("cannot run {}: {e}", nvcc.display())))?;
    // The source stays beside the binary, for reading nvcc's line numbers.
    let _ = std::fs::rename(&src, dir.join(format!("{}_{key}.cu", h.stem)));
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stderr);
        let first = log.lines().find(|l| l.contains("error")).unwrap_or_else(|| last_line(&log));
        return Err(unsupported(format!("{} could not build {} for {arch}: {}", nvcc.display(), h.file, first.trim())));
    }
    // Executable by this user alone, whatever the umask: the check before each run wants it so.
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .and_then(|()| std::fs::rename(&tmp, &bin))
        .map_err(|e| unsupported(format!("cannot move the {} harness into {}: {e}", h.what, bin.display())))?;
    Ok(bin)
}

fn find_nvcc() -> Option<PathBuf> {
    find_cuda_tool("NVCC", "nvcc")
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

    /// Issue 41's tests play another user of a shared machine, without a GPU: a stand-in nvcc
    /// (a shell script) builds a stand-in harness, which prints a `RESULT` line.
    const STAND_IN: Harness = Harness {
        what: "stand-in",
        file: "cub/stand-in.cu",
        stem: "stand_in",
        source: "int main() { return 0; }",
        extra: &[],
    };
    const ARCH: &str = "sm_90";

    /// Set in the environment of a child run of the tests below.
    const CHILD: &str = "REDUCE_TEST_HARNESS_CHILD";

    /// In a child run (this test binary again, running one of the tests below with [`CHILD`]
    /// set, in the environment the test planted): finds or builds [`STAND_IN`] as
    /// [`build_harness`] does past the GPU (the cache of this environment, `$NVCC`, sm_90), runs
    /// it, prints `CHILD ` and its line or the error, and returns `true`; `false` in the test's
    /// own run.
    fn in_child() -> bool {
        if std::env::var_os(CHILD).is_none() {
            return false;
        }
        let line = find_nvcc()
            .ok_or_else(|| Error::Unsupported("no NVCC in the child's environment".into()))
            .and_then(|nvcc| cached_or_built(&STAND_IN, &nvcc, ARCH, &private::cache_dir()?))
            .and_then(|bin| result_line(&bin, "stand-in harness", &[]));
        match line {
            Ok(line) => println!("CHILD {line}"),
            Err(e) => println!("CHILD {e}"),
        }
        true
    }

    /// A stand-in nvcc in `dir`: it counts its runs in `dir/nvcc-runs` and writes, at `-o OUT`,
    /// a program printing `RESULT built=yes`, group-writable as a umask of 002 leaves it.
    fn stand_in_nvcc(dir: &Path) -> PathBuf {
        let nvcc = dir.join("nvcc");
        let text = "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/nvcc-runs\"\n\
                    while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
                    printf '#!/bin/sh\\necho \"RESULT built=yes\"\\n' > \"$out\"\nchmod 775 \"$out\"\n";
        private::testing::write_script(&nvcc, text);
        nvcc
    }

    /// A program planted at `path` by "another user": it leaves `ran` behind and prints
    /// `RESULT planted=yes`; writable by everyone.
    fn plant(path: &Path, ran: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        private::testing::write_script(
            path,
            &format!("#!/bin/sh\ntouch '{}'\necho \"RESULT planted=yes\"\n", ran.display()),
        );
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }

    /// Runs the test `test` of this module in a child run ([`in_child`]) with the cache
    /// variables, `TMPDIR` and `NVCC` cleared, then `vars` set; returns what it printed after
    /// `CHILD `.
    fn child(test: &str, vars: &[(&str, &Path)]) -> String {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", &format!("cub::tests::{test}"), "--nocapture"]).env(CHILD, "1");
        for var in [private::CACHE_ENV, "XDG_CACHE_HOME", "HOME", "TMPDIR", "NVCC"] {
            cmd.env_remove(var);
        }
        let out = cmd.envs(vars.iter().copied()).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = stdout.lines().find_map(|l| l.strip_prefix("CHILD "));
        said.unwrap_or_else(|| panic!("the child said nothing:\n{stdout}{}", String::from_utf8_lossy(&out.stderr)))
            .to_string()
    }

    fn mode(path: &Path) -> u32 {
        std::os::unix::fs::MetadataExt::mode(&std::fs::symlink_metadata(path).unwrap()) & 0o7777
    }

    /// Before issue 41 the cache was `$TMPDIR/reduce-cub`, and a program found there under the
    /// name this run computes was run. Now: planted there (in a folder everyone may write, as
    /// another user would leave it), it is never run; the cache is `~/.cache/reduce-scan`,
    /// created 0700, the harness built into it 0700 whatever nvcc left, and a link planted at the
    /// name of the cached source is replaced, never followed.
    #[test]
    fn a_harness_planted_in_the_shared_temp_folder_is_never_run() {
        if in_child() {
            return;
        }
        let child = |vars: &[(&str, &Path)]| child("a_harness_planted_in_the_shared_temp_folder_is_never_run", vars);
        let (shared, home) =
            (PrivateDir::new("reduce-test-tmp-").unwrap(), PrivateDir::new("reduce-test-home-").unwrap());
        let (tmp, home) = (shared.path(), home.path());
        let nvcc = stand_in_nvcc(tmp);
        let (_, key) = harness_key(&STAND_IN, &nvcc, ARCH);
        let ran = tmp.join("planted-ran");
        plant(&tmp.join(format!("reduce-cub/stand_in_{ARCH}_{key}")), &ran);
        std::fs::set_permissions(tmp.join("reduce-cub"), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        let cache = home.join(".cache/reduce-scan");
        std::fs::create_dir_all(&cache).unwrap();
        std::fs::set_permissions(home.join(".cache"), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&cache, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let victim = tmp.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, cache.join(format!("stand_in_{key}.cu"))).unwrap();
        let env = [("TMPDIR", tmp), ("HOME", home), ("NVCC", nvcc.as_path())];
        assert_eq!(child(&env), "RESULT built=yes");
        assert!(!ran.exists(), "the program planted in the shared temp folder ran");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "a planted link was followed");
        assert_eq!(mode(&cache.join(format!("stand_in_{ARCH}_{key}"))), 0o700);
        assert!(std::fs::symlink_metadata(cache.join(format!("stand_in_{key}.cu"))).unwrap().is_file());
        // Reused from the cache by the next process: nvcc ran once.
        assert_eq!(child(&env), "RESULT built=yes");
        assert_eq!(std::fs::read_to_string(tmp.join("nvcc-runs")).unwrap().lines().count(), 1);
        // A fresh home: the cache and the folder above it are created 0700.
        let fresh = PrivateDir::new("reduce-test-home-").unwrap();
        let env = [("TMPDIR", tmp), ("HOME", fresh.path()), ("NVCC", nvcc.as_path())];
        assert_eq!(child(&env), "RESULT built=yes");
        assert_eq!(
            (mode(&fresh.path().join(".cache")), mode(&fresh.path().join(".cache/reduce-scan"))),
            (0o700, 0o700)
        );
        assert!(!ran.exists(), "the program planted in the shared temp folder ran");
    }

    /// A cache folder writable by others, or a cached harness writable by others or another
    /// user's (as root: given to uid 65534), is refused in one line naming it; the program is
    /// never run and nothing is built.
    #[test]
    fn an_untrusted_cache_or_harness_is_refused_and_never_run() {
        if in_child() {
            return;
        }
        let child = |vars: &[(&str, &Path)]| child("an_untrusted_cache_or_harness_is_refused_and_never_run", vars);
        let root = PrivateDir::new("reduce-test-cache-").unwrap();
        let nvcc = stand_in_nvcc(root.path());
        let (_, key) = harness_key(&STAND_IN, &nvcc, ARCH);
        let cache = root.path().join("cache");
        let (bin, ran) = (cache.join(format!("stand_in_{ARCH}_{key}")), root.path().join("planted-ran"));
        plant(&bin, &ran);
        let env = [(private::CACHE_ENV, cache.as_path()), ("NVCC", nvcc.as_path())];
        for folder in [0o777, 0o770, 0o702] {
            std::fs::set_permissions(&cache, std::os::unix::fs::PermissionsExt::from_mode(folder)).unwrap();
            let said = child(&env);
            let want = format!("invalid request: the harness cache {} is writable by group or others", cache.display());
            assert!(said.starts_with(&want) && said.contains(&format!("chmod 700 {}", cache.display())), "{said}");
        }
        std::fs::set_permissions(&cache, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let said = child(&env);
        let want =
            format!("invalid request: the cached harness {} is writable by group or others (mode 0777)", bin.display());
        assert!(said.starts_with(&want) && said.ends_with("remove it (the next run rebuilds it)"), "{said}");
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        if private::testing::give_away(&bin) {
            let said = child(&env);
            assert!(said.contains(&format!("{} belongs to uid 65534, not to you (uid 0)", bin.display())), "{said}");
        }
        assert!(!ran.exists(), "a refused harness ran");
        assert!(!root.path().join("nvcc-runs").exists(), "nvcc ran for a refused cache");
    }
}
