//! Compiles a kernel crate to PTX from a build script: what `cuda_builder` is to Rust-CUDA, for
//! rustc's own NVPTX backend.
//!
//! A kernel crate is a `no_std` library whose kernels are written with the device layer's
//! [`kernel!`](https://docs.rs/reduce-scan-device) macro (crate `reduce-scan-device`, or
//! `reduce-scan-collective`, which re-exports it). The host crate that launches them calls this
//! crate from its `build.rs`:
//!
//! ```text
//! // build.rs of the host crate
//! fn main() {
//!     reduce_scan_build::Ptx::crate_at("../dot-kernels").build();
//! }
//! ```
//!
//! and embeds the result with `reduce_scan::ptx!("dot_kernels")` (the kernel crate's library
//! name). The build writes, into the build script's `OUT_DIR`:
//!
//! * `{name}_{arch}.ptx` for each architecture (default [`DEFAULT_ARCHES`]: sm_70, which every
//!   GPU from Volta to Hopper loads, sm_80 and sm_90), every kernel of the crate in one file;
//! * `{name}.ptx.rs`, the list of those files as a Rust expression, which `ptx!` includes.
//!
//! # How
//! One nested `cargo rustc` per architecture, for `nvptx64-nvidia-cuda`, with
//! `-Zbuild-std=core` (no prebuilt standard library exists for that target), one fat-LTO'd
//! codegen unit and `panic = "abort"` (the profile [`PROFILE`] sets), `--crate-type cdylib` (so
//! LTO keeps every exported kernel) and `--emit=asm`, which is the PTX. The cdylib's link step
//! would need `llvm-bitcode-linker`, which rustup does not ship: `-C linker=true` turns it into
//! a no-op once the PTX is written. sm_90 also gets PTX ISA 8.0 (`+ptx80`), the first with
//! Hopper's bulk copies. Every crate built this way, the project's own kernels included (the
//! `reduce-scan` library's build script is a user of this crate), gets the same flags, so the
//! same kernel source gives the same PTX in any crate.
//!
//! **The toolchain.** rustc's NVPTX backend needs nightly features, so the nested builds run on
//! one pinned nightly, [`PINNED`], found in rustup's folder, whatever toolchain builds the host
//! crate: a host crate and its kernel crate build with stable Rust, and only the PTX needs the
//! nightly (with `rust-src`). Where it is missing, the build stops with one line saying how to
//! install it. [`Ptx::toolchain`] or `REDUCE_SCAN_PTX_TOOLCHAIN` name another.
//!
//! **Where.** The nested builds share `target/ptx/{arch}/` of the outer build's target folder:
//! `core` for the GPU is compiled once per architecture (a first build: a minute or two on two
//! cores), and every kernel crate built into that target folder reuses it. Each crate's PTX, the
//! list of sources it was compiled from and its build log are files of its own,
//! `target/ptx/out/{name}-{hash of its folder}_{arch}.{s,d,log}`.
//!
//! **Nothing rebuilds without a change.** The build prints a `rerun-if-changed` for every
//! source the PTX was compiled from (cargo's dep-info of the nested build: the kernel crate's
//! files and its path dependencies', absolute paths) and the kernel crate's `Cargo.toml`: a
//! build with no change runs neither this build script nor the nested one, and an edit of a
//! file the kernels do not read rebuilds no PTX.
//!
//! **Progress and errors.** The first build of an architecture shows cargo's progress lines on
//! the terminal (`/dev/tty`) when there is one, since cargo hides a build script's own output;
//! where there is none (a CI log), a long first build leaves a cargo warning with its time and
//! its log's path, and `cargo build -vv` shows its lines as they come. A compile error stops the
//! build with rustc's diagnostics, which name the kernel crate's `file:line`, and the full
//! log's path. A kernel crate that is missing, has no library or is not `no_std` is refused in
//! one line before anything is compiled.
//!
//! **The emulator only.** With `REDUCE_SCAN_NO_PTX=1` no PTX is built and no nightly is
//! needed: the files are empty, the emulator (which runs the kernel crate compiled for the
//! host) works, and a GPU run is refused in one line. That is how a kernel edit reaches the
//! emulator's answer in about a second.

use std::env;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod toolchain;
pub use toolchain::{PINNED, TOOLCHAIN_ENV, Toolchain};

/// The architectures built when none are named: the baseline every supported GPU loads, and
/// the two with instructions some kernels use (`redux.sync` on sm_80, bulk copies on sm_90).
pub const DEFAULT_ARCHES: [&str; 3] = ["sm_70", "sm_80", "sm_90"];

/// The environment variable that turns the PTX build off (the emulator's build).
pub const NO_PTX: &str = "REDUCE_SCAN_NO_PTX";

/// The nested build's profile, set on its command line (`--config`) so that a kernel crate
/// needs no profile of its own: optimised, one fat-LTO'd codegen unit (every kernel in one PTX
/// file), no unwinding on the GPU, no debug assertions or overflow checks.
pub const PROFILE: [(&str, &str); 9] = [
    ("inherits", "\"release\""),
    ("opt-level", "3"),
    ("lto", "\"fat\""),
    ("codegen-units", "1"),
    ("panic", "\"abort\""),
    ("debug", "false"),
    ("debug-assertions", "false"),
    ("overflow-checks", "false"),
    ("incremental", "false"),
];

/// The name of the nested builds' profile.
const PROFILE_NAME: &str = "ptx";

/// A PTX build of one kernel crate, configured with the builder methods and run by
/// [`build`](Self::build).
#[derive(Clone, Debug)]
pub struct Ptx {
    crate_dir: PathBuf,
    arches: Vec<String>,
    features: Vec<String>,
    name: Option<String>,
    always: bool,
    toolchain: String,
}

/// What a build left in `OUT_DIR`.
#[derive(Clone, Debug)]
pub struct Built {
    /// The module's name: the file names' stem (`dot_kernels`).
    pub name: String,
    /// Each architecture and its PTX file (empty with `REDUCE_SCAN_NO_PTX=1`).
    pub files: Vec<(String, PathBuf)>,
    /// The Rust expression listing them, which `reduce_scan::ptx!` includes.
    pub listing: PathBuf,
}

/// Why a PTX build failed: one line, with the log's path where there is one.
#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Ptx {
    /// The kernel crate in `dir` (the folder of its `Cargo.toml`), relative to the calling
    /// build script's package (`CARGO_MANIFEST_DIR`) unless absolute.
    pub fn crate_at(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let crate_dir = match env::var_os("CARGO_MANIFEST_DIR") {
            Some(base) if dir.is_relative() => PathBuf::from(base).join(dir),
            _ => dir.to_path_buf(),
        };
        Ptx {
            crate_dir,
            arches: DEFAULT_ARCHES.iter().map(|a| a.to_string()).collect(),
            features: Vec::new(),
            name: None,
            always: false,
            toolchain: PINNED.to_string(),
        }
    }

    /// Builds for these architectures (`sm_70`, `sm_80`, `sm_90`, …), in this order. The first
    /// is built alone, so a compile error is printed once.
    pub fn arches(mut self, arches: &[&str]) -> Self {
        self.arches = arches.iter().map(|a| a.to_string()).collect();
        self
    }

    /// Turns on these features of the kernel crate.
    pub fn features(mut self, features: &[&str]) -> Self {
        self.features = features.iter().map(|f| f.to_string()).collect();
        self
    }

    /// Names the output `{name}_{arch}.ptx` (default: the kernel crate's library name).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// Builds even with `REDUCE_SCAN_NO_PTX=1`: for PTX wanted beside an emulator-only build of
    /// everything else (`./x learn N --gpu` builds the learner's kernels so).
    pub fn always(mut self) -> Self {
        self.always = true;
        self
    }

    /// Compiles the PTX with this rustup toolchain instead of [`PINNED`] (it needs rustc's NVPTX
    /// backend's nightly features and the `rust-src` component). [`TOOLCHAIN_ENV`] overrides
    /// both.
    pub fn toolchain(mut self, name: &str) -> Self {
        self.toolchain = name.to_string();
        self
    }

    /// Runs the build, as a build script should: on failure the diagnostics go to stderr
    /// (cargo shows a failing build script's output) with one closing line, and the build
    /// script exits with status 1.
    pub fn build(self) -> Built {
        match self.try_build() {
            Ok(built) => built,
            Err(e) => {
                eprintln!("\nerror: {e}");
                std::process::exit(1);
            }
        }
    }

    /// Runs the build; the error says in one line what failed (rustc's diagnostics have been
    /// written to stderr by then).
    pub fn try_build(self) -> Result<Built, Error> {
        let out_dir = PathBuf::from(
            env::var_os("OUT_DIR")
                .ok_or_else(|| Error("OUT_DIR is not set: call reduce_scan_build from a build script".into()))?,
        );
        let krate = KernelCrate::read(&self.crate_dir)?;
        let name = self.name.clone().unwrap_or_else(|| krate.lib.clone());
        check_names(&name, &self.arches)?;
        println!("cargo:rerun-if-env-changed={NO_PTX}");
        let files: Vec<(String, PathBuf)> =
            self.arches.iter().map(|a| (a.clone(), out_dir.join(format!("{name}_{a}.ptx")))).collect();
        if !self.always && env::var(NO_PTX).is_ok_and(|v| v == "1") {
            // Nothing to rebuild on a kernel edit: the emulator runs the host build of the crate.
            for (_, file) in &files {
                write(file, "")?;
            }
        } else {
            println!("cargo:rerun-if-env-changed={TOOLCHAIN_ENV}");
            let toolchain = Toolchain::find(&toolchain::chosen(&self.toolchain))?;
            let root = ptx_root(&out_dir);
            let stem = format!("{name}-{}", crate_tag(&krate.dir, &self.features));
            let nested = Nested { krate: &krate, features: &self.features, toolchain, root, stem };
            nested.build_all(&files)?;
        }
        let listing = out_dir.join(format!("{name}.ptx.rs"));
        write(&listing, &listing_text(&files))?;
        Ok(Built { name, files, listing })
    }
}

/// The names must make file names and a Rust string: letters, digits, `_` and `-`.
fn check_names(name: &str, arches: &[String]) -> Result<(), Error> {
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !plain(name) {
        return Err(Error(format!("PTX module name `{name}`: use letters, digits, `_` and `-`")));
    }
    if arches.is_empty() {
        return Err(Error("no architecture to build for: name at least one, e.g. `sm_70`".into()));
    }
    for a in arches {
        if arch_version(a).is_none() {
            return Err(Error(format!(
                "architecture `{a}`: expected `sm_` and a compute capability, e.g. `sm_70` or `sm_90`"
            )));
        }
    }
    Ok(())
}

/// `sm_86` → (8, 6); `sm_90a` → (9, 0).
pub fn arch_version(arch: &str) -> Option<(u32, u32)> {
    let digits = arch.strip_prefix("sm_")?.trim_end_matches('a');
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The Rust expression `ptx!` includes: `&[(arch, (major, minor), PTX text), …]`.
fn listing_text(files: &[(String, PathBuf)]) -> String {
    let mut s = String::from("// Generated by reduce-scan-build: the PTX of one kernel crate, per architecture.\n&[\n");
    for (arch, file) in files {
        let (major, minor) = arch_version(arch).expect("checked");
        s.push_str(&format!("    ({arch:?}, ({major}, {minor}), include_str!({:?})),\n", file.display().to_string()));
    }
    s.push_str("]\n");
    s
}

/// Writes `text` to `path` unless it holds that already: a file rewritten with the same text
/// would still make cargo rebuild every crate that includes it.
fn write(path: &Path, text: &str) -> Result<(), Error> {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| Error(format!("cannot write {}: {e}", path.display())))
}

/// The kernel crate: its folder and its library's name.
struct KernelCrate {
    dir: PathBuf,
    package: String,
    lib: String,
}

impl KernelCrate {
    /// Reads the package name (and a `[lib] name`, if any) from `dir/Cargo.toml`.
    fn read(dir: &Path) -> Result<Self, Error> {
        let manifest = dir.join("Cargo.toml");
        let text = fs::read_to_string(&manifest).map_err(|e| {
            Error(format!("no kernel crate at {}: cannot read {} ({e})", dir.display(), manifest.display()))
        })?;
        let package = toml_value(&text, "package", "name")
            .ok_or_else(|| Error(format!("{} has no [package] name", manifest.display())))?;
        let lib = toml_value(&text, "lib", "name").unwrap_or_else(|| package.replace('-', "_"));
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let root = dir.join(toml_value(&text, "lib", "path").unwrap_or_else(|| "src/lib.rs".into()));
        let source = fs::read_to_string(&root).map_err(|e| {
            Error(format!(
                "the kernel crate {package} has no library at {} ({e}): a kernel crate is a library",
                root.display()
            ))
        })?;
        if !declares_no_std(&source) {
            return Err(Error(format!(
                "the kernel crate {package} is not `no_std`: the GPU has no standard library; put `#![no_std]` at the top \
                 of {}",
                root.display()
            )));
        }
        Ok(KernelCrate { dir, package, lib })
    }
}

/// Does a crate root say `#![no_std]` (or `#![cfg_attr(…, no_std)]`), outside comments?
fn declares_no_std(source: &str) -> bool {
    source.lines().map(str::trim).filter(|l| !l.starts_with("//")).any(|l| {
        let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        l.starts_with("#![no_std]") || (l.starts_with("#![cfg_attr(") && l.contains(",no_std)"))
    })
}

/// The string value of `key` in `[table]` of a Cargo.toml (the plain `key = "value"` form).
fn toml_value(text: &str, table: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            current = line.trim_matches(|c| c == '[' || c == ']').trim().to_string();
        } else if current == table
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().trim_matches('"').to_string());
        }
    }
    None
}

/// The tag of one kernel crate's PTX files: a hash of its folder and features, so that two
/// crates of the same name (two checkouts sharing a target folder) never share a file.
fn crate_tag(crate_dir: &Path, features: &[String]) -> String {
    let key = format!("{}|{}", crate_dir.display(), features.join(","));
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{:012x}", hash >> 16)
}

/// The nested builds' folder: `ptx/` in the outer build's target folder (the first ancestor of
/// `OUT_DIR` holding `CACHEDIR.TAG`), so that debug, release and test builds, and every kernel
/// crate built into that target folder, share it.
fn ptx_root(out_dir: &Path) -> PathBuf {
    out_dir.ancestors().find(|p| p.join("CACHEDIR.TAG").is_file()).unwrap_or(out_dir).join("ptx")
}

/// The nested builds of one kernel crate: one `cargo rustc` per architecture, each in the
/// target folder `ptx/{arch}/` that every kernel crate built for that architecture shares (so
/// `core` for the GPU is compiled once per architecture and target folder, not once per crate),
/// each writing its PTX, dep-info and log under `ptx/out/{name}-{tag}_{arch}.*`, files of this
/// crate alone.
struct Nested<'a> {
    krate: &'a KernelCrate,
    features: &'a [String],
    toolchain: Toolchain,
    root: PathBuf,
    /// `{name}-{tag}`: the stem of this crate's files in `ptx/out/`.
    stem: String,
}

impl Nested<'_> {
    /// Builds every architecture at once (each its own `cargo rustc`, sharing the outer build's
    /// jobserver; after a kernel edit the three took 23.4 s one, then two together, on the
    /// 2-core machine), reads each build's output as it comes, and copies each PTX to its file.
    /// A compile error is printed once: the first failing architecture's, and the builds
    /// still running are stopped.
    fn build_all(&self, files: &[(String, PathBuf)]) -> Result<(), Error> {
        let mut running: Vec<Running> = files.iter().map(|(arch, _)| self.spawn(arch)).collect::<Result<_, _>>()?;
        let finished = std::thread::scope(|s| {
            let logs: Vec<_> = running
                .iter_mut()
                .zip(files)
                .map(|(r, (arch, _))| {
                    let (stderr, first) = (r.child.stderr.take(), r.first);
                    s.spawn(move || self.collect_log(arch, stderr, first))
                })
                .collect();
            let mut result = Ok(());
            for (i, (log, (arch, file))) in logs.into_iter().zip(files).enumerate() {
                let log = log.join().unwrap_or_default();
                result = self.finish(arch, &mut running[i], &log, file);
                if result.is_err() {
                    for r in &mut running[i + 1..] {
                        let _ = r.child.kill();
                    }
                    break;
                }
            }
            result
        });
        for r in &mut running {
            let _ = r.child.wait();
        }
        finished?;
        self.rerun_on_sources(files)
    }

    /// The shared target folder of `arch`'s builds.
    fn dir(&self, arch: &str) -> PathBuf {
        self.root.join(arch)
    }

    /// This crate's file of `arch` with this extension (`s`: the PTX, `d`: the sources it was
    /// compiled from, `log`: the build's output).
    fn file(&self, arch: &str, ext: &str) -> PathBuf {
        self.root.join("out").join(format!("{}_{arch}.{ext}", self.stem))
    }

    /// The folder of cargo's own outputs of `arch`'s builds (the profile's, under the target's).
    fn cargo_output(&self, arch: &str) -> PathBuf {
        self.dir(arch).join(format!("nvptx64-nvidia-cuda/{PROFILE_NAME}"))
    }

    /// Starts `cargo rustc` for `arch`, on the PTX toolchain.
    fn spawn(&self, arch: &str) -> Result<Running, Error> {
        let dir = self.dir(arch);
        let first = !dir.join("nvptx64-nvidia-cuda").exists();
        let ptx = self.file(arch, "s");
        fs::create_dir_all(ptx.parent().expect("ptx/out"))
            .map_err(|e| Error(format!("cannot create {}: {e}", self.root.display())))?;
        if !ptx.exists() {
            // A build cargo takes for up to date would not write the file again.
            self.forget(arch);
        }
        let mut cmd = Command::new(&self.toolchain.cargo);
        clean_env(&mut cmd);
        cmd.current_dir(&self.krate.dir)
            .env("RUSTC", &self.toolchain.rustc)
            .env("RUSTUP_TOOLCHAIN", &self.toolchain.name)
            .env("CARGO_ENCODED_RUSTFLAGS", rustflags(arch))
            .env("CARGO_TERM_COLOR", "never")
            .arg("rustc")
            .arg(if first { "--verbose" } else { "--quiet" })
            .args(["--manifest-path", "Cargo.toml", "--package", &self.krate.package, "--lib"]);
        for (key, value) in PROFILE {
            cmd.arg("--config").arg(format!("profile.{PROFILE_NAME}.{key}={value}"));
        }
        cmd.args(["--profile", PROFILE_NAME, "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
            .args(["--crate-type", "cdylib"]);
        if !self.features.is_empty() {
            cmd.arg("--features").arg(self.features.join(","));
        }
        cmd.arg("--target-dir").arg(&dir).arg("--").arg(format!("--emit=asm={}", ptx.display())).arg("-Clinker=true");
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let before = modified(&ptx);
        let child = cmd.spawn().map_err(|e| Error(format!("cannot run cargo to build the kernels for {arch}: {e}")))?;
        Ok(Running { child, first, before, started: std::time::Instant::now() })
    }

    /// Removes cargo's record of this crate's build for `arch`, so that the next build compiles
    /// it (its PTX file was deleted).
    fn forget(&self, arch: &str) {
        let fingerprints = self.dir(arch).join(format!("nvptx64-nvidia-cuda/{PROFILE_NAME}/.fingerprint"));
        let prefix = format!("{}-", self.krate.package);
        for entry in fs::read_dir(fingerprints).into_iter().flatten().filter_map(Result::ok) {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }

    /// Waits for `arch`'s build, keeps its log and the sources it read, and copies its PTX to
    /// `file`.
    fn finish(&self, arch: &str, running: &mut Running, log: &str, file: &Path) -> Result<(), Error> {
        let status = running.child.wait().map_err(|e| Error(format!("the PTX build for {arch}: {e}")))?;
        let log_path = self.file(arch, "log");
        let _ = fs::write(&log_path, log);
        if !status.success() {
            let _ = std::io::stderr().write_all(diagnostics(log).as_bytes());
            return Err(Error(format!(
                "the kernel crate {} does not compile for the GPU ({arch}, nvptx64-nvidia-cuda); the diagnostics above \
                 come from rustc (full log: {})",
                self.krate.package,
                log_path.display()
            )));
        }
        self.warn(arch, log, &log_path, running);
        let asm = self.file(arch, "s");
        let ptx = fs::read_to_string(&asm)
            .map_err(|e| Error(format!("the nvptx64 build for {arch} left no PTX at {}: {e}", asm.display())))?;
        if !ptx.contains(".entry") {
            println!("cargo:warning=the PTX of {} for {arch} holds no kernel entry point", self.krate.package);
        }
        let built = self.cargo_output(arch);
        if modified(&asm) != running.before {
            // Compiled now: cargo's dep-info of the cdylib (absolute paths, every local source,
            // path dependencies' included) is this crate's until another crate of the same name
            // is built here, so it is kept beside the PTX.
            let depinfo = built.join(format!("{}.d", self.krate.lib));
            fs::copy(&depinfo, self.file(arch, "d")).map_err(|e| {
                Error(format!("the nvptx64 build for {arch} left no dep-info at {}: {e}", depinfo.display()))
            })?;
        }
        // The cdylib cargo expects (the no-op linker writes none): without it, cargo would
        // compile the crate again on every build.
        write(&built.join("deps").join(format!("{}.ptx", self.krate.lib)), &ptx)?;
        write(file, &ptx)
    }

    /// The build's output, with cargo's progress lines shown on the terminal (cargo hides a
    /// build script's own output) during a first build.
    fn collect_log(&self, arch: &str, stderr: Option<std::process::ChildStderr>, first: bool) -> String {
        let mut tty = if first { fs::OpenOptions::new().write(true).open("/dev/tty").ok() } else { None };
        let mut log = String::new();
        if let Some(stderr) = stderr {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(t) = tty.as_mut()
                    && is_progress(&line)
                {
                    let _ = writeln!(t, "   reduce-scan-build {} ({arch}): {}", self.krate.package, line.trim());
                }
                log.push_str(&line);
                log.push('\n');
            }
        }
        log
    }

    /// Cargo warnings for rustc's warnings, and for a long first build where no terminal showed
    /// its progress (a CI log, an IDE): how long it took and where its log is.
    fn warn(&self, arch: &str, log: &str, log_path: &Path, running: &Running) {
        let warnings = log.lines().filter(|l| l.starts_with("warning:") && !expected_warning(l)).count();
        if warnings > 0 {
            println!(
                "cargo:warning=kernels of {} for {arch}: {warnings} rustc warning line(s) in the nvptx64 build; see {}",
                self.krate.package,
                log_path.display()
            );
        }
        let seconds = running.started.elapsed().as_secs();
        if running.first && seconds >= 20 && fs::OpenOptions::new().write(true).open("/dev/tty").is_err() {
            println!(
                "cargo:warning=the first PTX build of {} for {arch} took {seconds} s (it compiled `core` for the GPU; \
                 later builds reuse it); its log: {}",
                self.krate.package,
                log_path.display()
            );
        }
    }

    /// Every source file the nested builds read, from cargo's dep-info of each (absolute
    /// paths: the kernel crate's sources and its path dependencies', the device layer's), so
    /// that an edit of any of them rebuilds the PTX, and nothing else does.
    fn rerun_on_sources(&self, files: &[(String, PathBuf)]) -> Result<(), Error> {
        let mut seen = std::collections::BTreeSet::new();
        for (arch, _) in files {
            let text = fs::read_to_string(self.file(arch, "d")).unwrap_or_default();
            seen.extend(dep_info_sources(&text).into_iter().filter(|p| watched(p)));
        }
        seen.insert(self.krate.dir.join("Cargo.toml").display().to_string());
        for path in seen {
            println!("cargo:rerun-if-changed={path}");
        }
        Ok(())
    }
}

/// A source the PTX build should watch: an absolute path outside the toolchain and cargo's
/// registry and git checkouts (which change only with a version, that is with a Cargo.toml).
fn watched(path: &str) -> bool {
    Path::new(path).is_absolute()
        && !["/.rustup/", "/registry/src/", "/git/checkouts/", "/rustlib/"].iter().any(|p| path.contains(p))
}

/// When a file was last written, if it exists.
fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// A started nested build: whether it is the first of its folder, when its PTX file was
/// written before it, and when it started.
struct Running {
    child: std::process::Child,
    first: bool,
    before: Option<std::time::SystemTime>,
    started: std::time::Instant,
}

/// The files a Makefile-style dep-info file names as prerequisites.
fn dep_info_sources(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(": "))
        .flat_map(|(_, deps)| deps.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|p| p.ends_with(".rs"))
        .collect()
}

/// Cargo's progress lines (`Compiling core v0.0.0 (…)`, `Finished …`), not the commands that
/// `--verbose` adds.
fn is_progress(line: &str) -> bool {
    let l = line.trim_start();
    ["Compiling", "Finished", "Updating", "Locking", "Downloading", "Downloaded"].iter().any(|w| l.starts_with(w))
}

/// What of a failed build's log to show: rustc's diagnostics, without `--verbose`'s command
/// lines.
fn diagnostics(log: &str) -> String {
    // Cargo's "Caused by: process didn't exit successfully: `rustc …`" repeats the command.
    let noise = |l: &str| {
        let l = l.trim_start();
        l.starts_with("Running `")
            || l.starts_with("Fresh ")
            || l.starts_with("Caused by:")
            || l.starts_with("process didn't exit")
    };
    log.lines().filter(|l| !noise(l) && !is_progress(l)).map(|l| format!("{l}\n")).collect()
}

/// rustc calls every PTX ISA feature unstable; sm_90's `+ptx80` is asked for on purpose.
/// Cargo's summary lines (`` warning: `x` (lib) generated 1 warning``) repeat the others.
fn expected_warning(line: &str) -> bool {
    line.contains("unstable feature specified for `-Ctarget-feature`: `ptx80`")
        || (line.contains(" generated ") && line.contains(" warning"))
}

/// The nested build's flags for `arch` (`CARGO_ENCODED_RUSTFLAGS`, separated by 0x1f): its
/// `target-cpu`, and for sm_90 PTX ISA 8.0, the first that has Hopper's bulk copies
/// (`cp.async.bulk`, `mbarrier.arrive.expect_tx`). LLVM's default for sm_90 is ISA 7.8; the
/// version line is the only change it makes to other kernels' PTX.
pub fn rustflags(arch: &str) -> String {
    match arch_version(arch) {
        Some((major, _)) if major >= 9 => format!("-Ctarget-cpu={arch}\x1f-Ctarget-feature=+ptx80"),
        _ => format!("-Ctarget-cpu={arch}"),
    }
}

/// Drops what the outer build set for itself (flags, target, profile, package identity),
/// keeping the toolchain (`RUSTUP_TOOLCHAIN`, `RUSTC`) and the jobserver.
fn clean_env(cmd: &mut Command) {
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let keep = matches!(
            key.as_str(),
            "CARGO_HOME" | "CARGO_MAKEFLAGS" | "CARGO_NET_OFFLINE" | "CARGO_REGISTRIES_CRATES_IO_PROTOCOL"
        );
        let drop = (key.starts_with("CARGO_") && !keep)
            || key.starts_with("DEP_")
            || matches!(
                key.as_str(),
                "RUSTFLAGS"
                    | "RUSTDOCFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "TARGET"
                    | "HOST"
                    | "OUT_DIR"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "RUSTC_LINKER"
                    | "__CARGO_DEFAULT_LIB_METADATA"
            );
        if drop {
            cmd.env_remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_name_their_compute_capability() {
        assert_eq!(arch_version("sm_70"), Some((7, 0)));
        assert_eq!(arch_version("sm_86"), Some((8, 6)));
        assert_eq!(arch_version("sm_90a"), Some((9, 0)));
        assert_eq!(arch_version("sm_100"), Some((10, 0)));
        for bad in ["sm70", "sm_", "sm_7", "compute_70", "sm_7x"] {
            assert_eq!(arch_version(bad), None, "{bad}");
        }
    }

    #[test]
    fn sm_90_and_newer_get_ptx_isa_8() {
        assert_eq!(rustflags("sm_70"), "-Ctarget-cpu=sm_70");
        assert_eq!(rustflags("sm_90"), "-Ctarget-cpu=sm_90\x1f-Ctarget-feature=+ptx80");
    }

    #[test]
    fn bad_names_are_refused_in_one_line() {
        let e = check_names("dot kernels", &["sm_70".into()]).unwrap_err().to_string();
        assert!(e.contains("`dot kernels`") && !e.contains('\n'), "{e}");
        let e = check_names("dot", &["sm70".into()]).unwrap_err().to_string();
        assert!(e.contains("`sm70`") && e.contains("sm_70"), "{e}");
        assert!(check_names("dot", &[]).is_err());
        assert!(check_names("dot_kernels", &["sm_70".into(), "sm_90".into()]).is_ok());
    }

    #[test]
    fn the_listing_names_each_file_with_its_compute_capability() {
        let files =
            vec![("sm_70".to_string(), PathBuf::from("/o/k_sm_70.ptx")), ("sm_90".into(), "/o/k_sm_90.ptx".into())];
        let text = listing_text(&files);
        assert!(text.contains(r#"("sm_70", (7, 0), include_str!("/o/k_sm_70.ptx")),"#), "{text}");
        assert!(text.contains(r#"("sm_90", (9, 0), include_str!("/o/k_sm_90.ptx")),"#), "{text}");
    }

    #[test]
    fn the_package_and_library_names_come_from_the_manifest() {
        let text = "[package]\nname = \"dot-kernels\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"x\"\n";
        assert_eq!(toml_value(text, "package", "name").as_deref(), Some("dot-kernels"));
        assert_eq!(toml_value(text, "lib", "name"), None);
        let with_lib = format!("{text}\n[lib]\nname = \"dots\"\n");
        assert_eq!(toml_value(&with_lib, "lib", "name").as_deref(), Some("dots"));
    }

    #[test]
    fn a_kernel_crate_must_say_no_std() {
        assert!(declares_no_std("//! docs\n#![no_std]\nuse x;"));
        assert!(declares_no_std("#![cfg_attr(not(test), no_std)]\n"));
        assert!(!declares_no_std("// #![no_std]\nuse std::vec;"));
        assert!(!declares_no_std("pub fn f() {}"));
        let tmp = tempfile::Builder::new().prefix("reduce-scan-build-std-").tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
        std::fs::write(dir.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
        let e = KernelCrate::read(dir).err().expect("refused").to_string();
        assert!(e.contains("not `no_std`") && e.contains("src/lib.rs") && !e.contains('\n'), "{e}");
        let e = KernelCrate::read(&dir.join("nowhere")).err().expect("refused").to_string();
        assert!(e.contains("no kernel crate at") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn two_crates_of_one_name_have_their_own_files() {
        let a = crate_tag(Path::new("/a/kernels"), &[]);
        assert_eq!(a, crate_tag(Path::new("/a/kernels"), &[]));
        assert_ne!(a, crate_tag(Path::new("/b/kernels"), &[]));
        assert_ne!(a, crate_tag(Path::new("/a/kernels"), &["no-entries".into()]));
        assert!(watched("/w/k/src/lib.rs") && !watched("src/lib.rs"));
        assert!(!watched("/h/.rustup/toolchains/n/lib/rustlib/src/rust/library/core/src/lib.rs"));
        assert!(!watched("/h/.cargo/registry/src/index/bytemuck-1/src/lib.rs"));
    }

    #[test]
    fn dep_info_lists_the_sources() {
        let d = "/t/deps/k.s: /w/k/src/lib.rs /w/device/src/thread.rs\n\n/w/k/src/lib.rs:\n/w/device/src/thread.rs:\n\n# env-dep:A=b: c.rs\n";
        assert_eq!(dep_info_sources(d), ["/w/k/src/lib.rs", "/w/device/src/thread.rs"]);
    }
}
