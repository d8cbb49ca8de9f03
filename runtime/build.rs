//! Build script of the runtime crate (`reduce-scan-runtime`).
//!
//! **Kernels → PTX.** Compiles `../kernels` (package `reduce-scan-kernels`) with rustc's
//!    NVPTX backend, once per GPU architecture in [`ARCHES`], and leaves `kernels_sm_XX.ptx`
//!    in `OUT_DIR` for `src/ptx.rs` to embed. This is a nested `cargo rustc` for
//!    `nvptx64-nvidia-cuda` with `-Zbuild-std=core` (no prebuilt std exists for that
//!    target), the workspace's `ptx` profile (fat LTO, one codegen unit, `panic = "abort"`),
//!    `--crate-type cdylib` so LTO keeps every exported kernel, and `--emit=asm`, which is
//!    the PTX. The cdylib's link step would need `llvm-bitcode-linker`, which rustup does not
//!    ship for this nightly; `-C linker=true` turns it into a no-op (the PTX is already
//!    written by then).
//!    Kernel compile errors come out as ordinary rustc diagnostics with file:line.
//!    A fourth build, for sm_70 with the kernels crate's `no-entries` and `device-runtime`
//!    features, leaves `kernels_nested_sm_70.ptx`: the kernels that launch from the device,
//!    alone, since their PTX needs the CUDA device runtime at link time.
//!    With `REDUCE_SCAN_NO_PTX=1` (the emulator's build, `./x run` without a GPU) it builds
//!    none: the PTX files are empty and the GPU backend refuses them with one line.
//!
//! Nothing here touches libcuda: the GPU backend opens the NVIDIA driver at run time
//! (`src/backend/driver`), so the build needs no CUDA folder and links no library for it.

use std::env;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// GPU architectures the kernels are compiled for. sm_70 is the baseline that every GPU
/// from Volta to Hopper loads; newer ones carry kernels that need newer instructions.
const ARCHES: [&str; 3] = ["sm_70", "sm_80", "sm_90"];

/// The kernels' package (folder `kernels/`), which the nested build compiles, and its
/// library's name, which names the PTX file it leaves.
const KERNELS_PACKAGE: &str = "reduce-scan-kernels";
const KERNELS_LIB: &str = "reduce_scan_kernels";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest_dir.parent().unwrap().to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());

    println!("cargo:rerun-if-env-changed={NO_PTX}");

    if env::var(NO_PTX).is_ok_and(|v| v == "1") {
        // The emulator's build (`./x run` with no GPU, or `--backend emulator`): the emulator
        // runs the kernels compiled for the host, never the PTX, so a kernel edit does not wait
        // for three nvptx64 builds. The PTX files are empty, and the GPU backend of such a
        // binary refuses to load them (src/ptx.rs): no stale PTX can be loaded.
        for arch in ARCHES {
            fs::write(out_dir.join(format!("kernels_{arch}.ptx")), "").unwrap();
        }
        fs::write(out_dir.join(NESTED_PTX), "").unwrap();
    } else {
        println!("cargo:rerun-if-changed={}", workspace.join("kernels/src").display());
        println!("cargo:rerun-if-changed={}", workspace.join("kernels/Cargo.toml").display());
        println!("cargo:rerun-if-changed={}", workspace.join("device/src").display());
        println!("cargo:rerun-if-changed={}", workspace.join("device/Cargo.toml").display());
        println!("cargo:rerun-if-changed={}", workspace.join("Cargo.toml").display());
        println!("cargo:rerun-if-changed={}", workspace.join("rust-toolchain.toml").display());
        build_ptx(&workspace, &out_dir);
    }
}

/// `REDUCE_SCAN_NO_PTX=1`: build without the kernels' PTX (the emulator's build).
const NO_PTX: &str = "REDUCE_SCAN_NO_PTX";

// ---------------------------------------------------------------------------------------
// Kernels → PTX

fn build_ptx(workspace: &Path, out_dir: &Path) {
    // One nested build per checkout: its PTX file has no hash in its name, so two checkouts
    // sharing a target directory (scripts/three_places.sh's copy shares this one's) must not
    // share a nested build, or one would read the other's PTX when its own build is fresh.
    let ptx_target = target_root(out_dir).join("ptx").join(checkout_tag(workspace));
    // The baseline first, alone: a compile error is then printed once, not three times.
    let (first, rest) = ARCHES.split_first().unwrap();
    let output = spawn_arch(first, first, &[], workspace, &ptx_target).wait_with_output();
    finish_arch(first, output, &ptx_target, out_dir.join(format!("kernels_{first}.ptx")));
    let mut children: Vec<_> = rest
        .iter()
        .map(|arch| (*arch, spawn_arch(arch, arch, &[], workspace, &ptx_target), format!("kernels_{arch}.ptx")))
        .collect();
    children.push((
        NESTED_DIR,
        spawn_arch(ARCHES[0], NESTED_DIR, NESTED_FEATURES, workspace, &ptx_target),
        NESTED_PTX.into(),
    ));
    for (name, child, file) in children {
        finish_arch(name, child.wait_with_output(), &ptx_target, out_dir.join(file));
    }
}

/// The nested kernels' own PTX module (they launch from the device, so their PTX is linked
/// with the CUDA device runtime before it loads): the baseline arch, with only the kernels
/// that `kernel! { launches; … }` defines as entries.
const NESTED_PTX: &str = "kernels_nested_sm_70.ptx";
const NESTED_DIR: &str = "nested_sm_70";
const NESTED_FEATURES: &[&str] = &["--features", "no-entries,device-runtime"];

/// A short tag of the checkout's path (FNV-1a), naming its nested build's directory.
fn checkout_tag(workspace: &Path) -> String {
    let path = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    let hash = path
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{:012x}", hash >> 16)
}

/// `target/` of the outer build (the first ancestor of OUT_DIR holding CACHEDIR.TAG), so
/// that debug, release and test builds share one nested build per architecture.
fn target_root(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|p| p.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.to_path_buf())
}

/// The nested build's flags for `arch`: its `target-cpu`, and for sm_90 PTX ISA 8.0, the first
/// that has Hopper's bulk copies (`cp.async.bulk`, `mbarrier.arrive.expect_tx`: the
/// `device::bulk` layer). LLVM's default for sm_90 is ISA 7.8; the version line is the only
/// change it makes to the other kernels' PTX.
fn rustflags(arch: &str) -> String {
    match arch {
        "sm_90" => format!("-Ctarget-cpu={arch}\x1f-Ctarget-feature=+ptx80"),
        _ => format!("-Ctarget-cpu={arch}"),
    }
}

/// The nested build of the kernels for `arch`, in `ptx_target/<dir>`, with the cargo arguments
/// `features`.
fn spawn_arch(arch: &str, dir: &str, features: &[&str], workspace: &Path, ptx_target: &Path) -> std::process::Child {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    // Drop what the outer build set for itself (flags, target, profile, package identity);
    // keep the toolchain (RUSTUP_TOOLCHAIN, RUSTC) and the jobserver.
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
    cmd.current_dir(workspace)
        .env("CARGO_ENCODED_RUSTFLAGS", rustflags(arch))
        .env("CARGO_TERM_COLOR", "never")
        .args(["rustc", "--quiet", "--package", KERNELS_PACKAGE, "--lib", "--profile", "ptx"])
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core", "--crate-type", "cdylib"])
        .args(features)
        .arg("--target-dir")
        .arg(ptx_target.join(dir))
        .args(["--", "--emit=asm", "-Clinker=true"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap_or_else(|e| panic!("cannot run cargo to build the kernels for {arch}: {e}"))
}

/// Checks the nested build `arch` (its directory name) and writes its PTX to `out`.
fn finish_arch(arch: &str, output: std::io::Result<Output>, ptx_target: &Path, out: PathBuf) {
    let output = output.unwrap_or_else(|e| panic!("nested kernels build for {arch}: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log = ptx_target.join(format!("{arch}.log"));
    let _ = fs::create_dir_all(ptx_target);
    let _ = fs::write(&log, stderr.as_bytes());
    if !output.status.success() {
        // Cargo prints a failing build script's stderr: the kernel's rustc diagnostics.
        let _ = std::io::stderr().write_all(stderr.as_bytes());
        eprintln!(
            "\nerror: the kernels crate ({KERNELS_PACKAGE}) does not compile for the GPU ({arch}, nvptx64-nvidia-cuda); \
             the diagnostics above come from rustc (full log: {})",
            log.display()
        );
        std::process::exit(1);
    }
    // rustc calls every PTX ISA feature unstable; `rustflags` asks for ptx80 on purpose.
    let expected = |l: &str| l.contains("unstable feature specified for `-Ctarget-feature`: `ptx80`");
    let warnings = stderr.lines().filter(|l| l.starts_with("warning:") && !expected(l)).count();
    if warnings > 0 {
        println!(
            "cargo:warning=kernels for {arch}: {warnings} rustc warning line(s) in the nvptx64 build; see {}",
            log.display()
        );
    }
    let asm = ptx_target.join(arch).join(format!("nvptx64-nvidia-cuda/ptx/deps/{KERNELS_LIB}.s"));
    let ptx = fs::read_to_string(&asm)
        .unwrap_or_else(|e| panic!("the nvptx64 build for {arch} left no PTX at {}: {e}", asm.display()));
    assert!(ptx.contains(".entry"), "the PTX for {arch} holds no kernel entry point");
    fs::write(out, ptx).unwrap();
}
