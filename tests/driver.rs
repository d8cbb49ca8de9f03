//! The NVIDIA driver is opened at run time (`runtime/src/backend/driver`), never linked: a
//! binary starts on any machine, with no library path, runs on the emulator where no GPU can
//! be used, and says in one line why not.
//!
//! The programs checked are this test executable itself, run again as a child process with
//! `REDUCE_SCAN_DRIVER_CHILD` set ([`child`]: `main` then does one job and exits) and with no
//! `LD_LIBRARY_PATH`. A machine without a driver is made anywhere by naming a missing file in
//! `REDUCE_SCAN_LIBCUDA`; a driver without a device, by naming one of the stand-in drivers that
//! the root package's build script compiles (`build.rs`), written to a private folder.

use std::ffi::CStr;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Failed, Trial};
use reduce_scan::{Backend, BackendKind, Reducer, Sum};

/// Set in a child run: which job `main` does ([`child`]).
const CHILD: &str = "REDUCE_SCAN_DRIVER_CHILD";
/// The library the runtime loads instead of `libcuda.so.1` (docs/building.md).
const LIBCUDA: &str = "REDUCE_SCAN_LIBCUDA";

/// Every call answers `CUDA_ERROR_NO_DEVICE` (build.rs).
static NO_DEVICE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcuda_no_device.so"));
/// `cuInit` succeeds, `cuDeviceGetCount` answers 0 (build.rs).
static ZERO_DEVICES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcuda_zero_devices.so"));

/// In a child run, does its job and returns the exit status: `select` runs a checked sum on
/// `Backend::select(Auto)`'s backend and prints the device, the sum and why there is no GPU;
/// `gpu` prints `Backend::gpu()`'s error (or the GPU's name).
pub fn child() -> Option<i32> {
    let job = std::env::var(CHILD).ok()?;
    let run = || -> reduce_scan::Result<String> {
        match job.as_str() {
            "select" => {
                let (backend, no_gpu) = Backend::select(BackendKind::Auto)?;
                let input = backend.upload(&[3, 1, 4, 1, 5, 9, 2, 6])?;
                let sum = Reducer::<i32, Sum>::new(&backend).reduce(&input)?;
                Ok(format!("device: {}\nsum: {sum}\nno GPU: {}", backend.info().name, no_gpu.unwrap_or_default()))
            }
            "gpu" => Ok(match Backend::gpu() {
                Ok(b) => format!("gpu: {}", b.info().name),
                Err(e) => e.to_string(),
            }),
            other => Ok(format!("unknown child job {other}")),
        }
    };
    Some(match run() {
        Ok(out) => {
            println!("{out}");
            0
        }
        Err(e) => {
            println!("error: {e}");
            1
        }
    })
}

/// This executable run as a child doing `job`, with no library path and, where given, `libcuda`
/// in `REDUCE_SCAN_LIBCUDA`: its standard output, once it exited with status 0.
fn run_child(job: &str, libcuda: Option<&Path>) -> Result<String, Failed> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(&exe);
    cmd.env(CHILD, job).env_remove("LD_LIBRARY_PATH").env_remove(LIBCUDA);
    if let Some(lib) = libcuda {
        cmd.env(LIBCUDA, lib);
    }
    let out = cmd.output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(
            format!("{} ({job}, {LIBCUDA}={libcuda:?}): {}\n{stdout}{stderr}", exe.display(), out.status).into()
        );
    }
    Ok(stdout)
}

/// The value of `key: ` in a child's output.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(": ")).unwrap_or_default()
}

/// A folder of this process's own (random name, created exclusively, mode 0700), removed when
/// dropped.
struct Private(PathBuf);

impl Private {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let name = format!("reduce-scan-driver-{}-{:x}", std::process::id(), nanos);
        let dir = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(Private(dir))
    }

    /// Writes `bytes` to a new file `name` (mode 0600) in the folder.
    fn write(&self, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.0.join(name);
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?.write_all(bytes)?;
        Ok(path)
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn check(ok: bool, what: &str, out: &str) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(format!("{what}; the child printed:\n{out}").into()) }
}

/// No driver: the child starts, falls back to the emulator, sums right, and says why in one
/// line. Made with a missing file in `REDUCE_SCAN_LIBCUDA` on any machine; on a machine without
/// a driver, also as it comes (the real `libcuda.so.1` not found); on one with a GPU, the child
/// with no library path finds the driver and sums on the GPU.
fn without_a_driver_a_binary_starts_and_runs_on_the_emulator() -> Result<(), Failed> {
    let dir = Private::new()?;
    let absent = dir.0.join("absent/libcuda.so.1");
    let out = run_child("select", Some(&absent))?;
    let why = field(&out, "no GPU");
    check(field(&out, "device") == "CPU emulator" && field(&out, "sum") == "31", "not the emulator's sum 31", &out)?;
    let head = format!("no usable GPU: {LIBCUDA}={} cannot be loaded (", absent.display());
    check(why.starts_with(&head) && why.ends_with(')'), &format!("the reason is not `{head}…)`"), &out)?;
    let out = run_child("select", None)?;
    match Backend::gpu() {
        Ok(gpu) => check(
            field(&out, "device") == gpu.info().name && field(&out, "sum") == "31",
            "with no library path the child did not sum on the GPU",
            &out,
        ),
        Err(e) => {
            let here = e.to_string();
            check(field(&out, "device") == "CPU emulator" && field(&out, "sum") == "31", "not the emulator", &out)?;
            check(field(&out, "no GPU") == here, &format!("the child's reason is not this process's: {here}"), &out)?;
            if here.contains("libcuda.so.1") {
                let line = "no usable GPU: no NVIDIA driver: libcuda.so.1 was not found (";
                check(here.starts_with(line), &format!("no driver here, but the reason is not `{line}…`"), &out)?;
            }
            Ok(())
        }
    }
}

/// A driver without a device (the stand-ins of build.rs): `Backend::gpu()` says so in one line,
/// through the driver's own description of its error, and `Auto` runs on the emulator.
fn a_driver_without_a_device_says_so_in_one_line() -> Result<(), Failed> {
    let dir = Private::new()?;
    let no_device = dir.write("libcuda_no_device.so", NO_DEVICE)?;
    let zero = dir.write("libcuda_zero_devices.so", ZERO_DEVICES)?;
    for (lib, line) in [
        (
            &no_device,
            "no usable GPU: cuInit failed: \"no CUDA device (a stand-in libcuda.so.1 of the tests)\" (NoDevice)",
        ),
        (&zero, "no usable GPU: the driver reports no CUDA device"),
    ] {
        let out = run_child("gpu", Some(lib))?;
        check(out == format!("{line}\n"), &format!("not the one line `{line}`"), &out)?;
        let out = run_child("select", Some(lib))?;
        check(field(&out, "device") == "CPU emulator" && field(&out, "sum") == "31", "not the emulator", &out)?;
        check(field(&out, "no GPU") == line, &format!("Auto's reason is not `{line}`"), &out)?;
    }
    Ok(())
}

/// The ELF of this test executable (built as every binary of the workspace is) names no
/// libcuda among the libraries it needs, and has no run path: nothing has to be found before
/// `main` starts.
fn no_binary_needs_libcuda_to_start() -> Result<(), Failed> {
    let exe = std::env::current_exe()?;
    let (needed, run_paths) = dynamic_section(&exe)?;
    let shown = format!("{}: NEEDED {needed:?}, RPATH/RUNPATH {run_paths:?}", exe.display());
    check(needed.iter().any(|n| n.starts_with("libc.so")), "the dynamic section was not read (no libc)", &shown)?;
    check(!needed.iter().any(|n| n.contains("libcuda")), "the executable needs libcuda", &shown)?;
    check(run_paths.is_empty(), "the executable has a run path", &shown)
}

/// The `DT_NEEDED` names and the `DT_RPATH`/`DT_RUNPATH` values of a 64-bit little-endian ELF
/// file (what `readelf -d` lists).
fn dynamic_section(path: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let b = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let at = |offset: usize, width: usize| -> Result<u64, String> {
        let bytes = b.get(offset..offset + width).ok_or(format!("{}: truncated ELF", path.display()))?;
        Ok(bytes.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    };
    if b.get(..6) != Some(b"\x7fELF\x02\x01") {
        return Err(format!("{}: not a 64-bit little-endian ELF file", path.display()));
    }
    let (phoff, phentsize, phnum) = (at(0x20, 8)? as usize, at(0x36, 2)? as usize, at(0x38, 2)? as usize);
    // Program headers: (type, file offset, virtual address, size in the file).
    let headers = (0..phnum)
        .map(|i| {
            let h = phoff + i * phentsize;
            Ok((at(h, 4)?, at(h + 8, 8)?, at(h + 16, 8)?, at(h + 32, 8)?))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let &(_, offset, _, size) =
        headers.iter().find(|h| h.0 == 2).ok_or(format!("{}: no dynamic section", path.display()))?;
    let mut entries = Vec::new();
    for e in (offset..offset + size).step_by(16) {
        let (tag, value) = (at(e as usize, 8)?, at(e as usize + 8, 8)?);
        if tag == 0 {
            break;
        }
        entries.push((tag, value));
    }
    let strtab = entries.iter().find(|e| e.0 == 5).ok_or("no DT_STRTAB")?.1;
    let strtab = headers
        .iter()
        .find(|h| h.0 == 1 && h.2 <= strtab && strtab < h.2 + h.3)
        .map(|h| (strtab - h.2 + h.1) as usize)
        .ok_or("DT_STRTAB outside every loaded segment")?;
    let string = |o: u64| -> Result<String, String> {
        let tail = b.get(strtab + o as usize..).ok_or("a string outside the file")?;
        Ok(CStr::from_bytes_until_nul(tail).map_err(|e| e.to_string())?.to_string_lossy().into_owned())
    };
    let pick = |tags: &[u64]| {
        entries.iter().filter(|e| tags.contains(&e.0)).map(|e| string(e.1)).collect::<Result<Vec<_>, _>>()
    };
    Ok((pick(&[1])?, pick(&[15, 29])?))
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "driver::without_a_driver_a_binary_starts_and_runs_on_the_emulator",
            without_a_driver_a_binary_starts_and_runs_on_the_emulator,
        ),
        Trial::test(
            "driver::a_driver_without_a_device_says_so_in_one_line",
            a_driver_without_a_device_says_so_in_one_line,
        ),
        Trial::test("driver::no_binary_needs_libcuda_to_start", no_binary_needs_libcuda_to_start),
    ]
}
