//! The toolchain the nested PTX builds run on: rustc's NVPTX backend needs nightly features
//! (`abi_ptx`, `-Zbuild-std`), so the kernels are compiled with one pinned nightly whatever
//! toolchain builds the host crate (stable, as a user's host crate is, or this repository's own
//! pinned one). The toolchain is found in rustup's folder, never on `PATH`.

use std::env;
use std::path::{Path, PathBuf};

use crate::Error;

/// The nightly the kernels are compiled with: the one verified with every kernel of this
/// project (rustc 1.97.0-nightly of 2026-05-19, LLVM 22).
pub const PINNED: &str = "nightly-2026-05-20";

/// The environment variable that names another toolchain for the PTX builds (a rustup
/// toolchain name, e.g. `nightly-2026-06-01`): for trying a newer nightly without editing the
/// build script.
pub const TOOLCHAIN_ENV: &str = "REDUCE_SCAN_PTX_TOOLCHAIN";

/// A toolchain's `cargo` and `rustc`, found in rustup's toolchain folder.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// Its rustup name (`nightly-2026-05-20`).
    pub name: String,
    /// Its `cargo`.
    pub cargo: PathBuf,
    /// Its `rustc`.
    pub rustc: PathBuf,
}

impl Toolchain {
    /// The toolchain `name` of the rustup installation this build runs under (`RUSTUP_HOME`,
    /// else `~/.rustup`), for the host `HOST` (the triple cargo gives build scripts), with the
    /// `rust-src` component (`-Zbuild-std` compiles `core` from it). Where it is missing, the
    /// error says in one line how to install it.
    pub fn find(name: &str) -> Result<Toolchain, Error> {
        let home = rustup_home().ok_or_else(|| missing(name, "no rustup folder (RUSTUP_HOME or ~/.rustup)"))?;
        let host = env::var("HOST").unwrap_or_else(|_| "x86_64-unknown-linux-gnu".into());
        Toolchain::find_in(&home, name, &host)
    }

    /// [`find`](Self::find) in the rustup folder `home`.
    pub fn find_in(home: &Path, name: &str, host: &str) -> Result<Toolchain, Error> {
        let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if !plain {
            return Err(Error(format!(
                "{TOOLCHAIN_ENV}={name}: a rustup toolchain name is letters, digits, `-`, `.` and `_`"
            )));
        }
        let toolchains = home.join("toolchains");
        let dir = [toolchains.join(format!("{name}-{host}")), toolchains.join(name)]
            .into_iter()
            .find(|d| d.join("bin/cargo").is_file())
            .ok_or_else(|| missing(name, "it is not installed"))?;
        if !dir.join("lib/rustlib/src/rust/library/core/Cargo.toml").is_file() {
            return Err(missing(name, "it has no rust-src component"));
        }
        Ok(Toolchain { name: name.to_string(), cargo: dir.join("bin/cargo"), rustc: dir.join("bin/rustc") })
    }
}

/// The name of the toolchain to use: [`TOOLCHAIN_ENV`] where set, else `default`.
pub fn chosen(default: &str) -> String {
    env::var(TOOLCHAIN_ENV).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
}

/// rustup's folder: `RUSTUP_HOME` (rustup sets it for the builds it runs), else `~/.rustup`.
fn rustup_home() -> Option<PathBuf> {
    env::var_os("RUSTUP_HOME").map(PathBuf::from).or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".rustup")))
}

/// The one-line refusal when the toolchain is missing: what to run.
fn missing(name: &str, why: &str) -> Error {
    Error(format!(
        "the kernels' PTX is compiled with Rust {name} (rustc's NVPTX backend needs nightly), and {why}: install it with \
         `rustup toolchain install {name} --profile minimal -c rust-src` (your crates stay on their own toolchain), \
         or build for the CPU emulator only with REDUCE_SCAN_NO_PTX=1"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rustup folder holding `toolchains/{dir}` with a cargo, and rust-src where `src`.
    fn fake_home(dir: &str, src: bool) -> tempfile::TempDir {
        let home = tempfile::Builder::new().prefix("reduce-scan-build-toolchain-").tempdir().unwrap();
        let tc = home.path().join("toolchains").join(dir);
        std::fs::create_dir_all(tc.join("bin")).unwrap();
        std::fs::write(tc.join("bin/cargo"), "").unwrap();
        if src {
            let core = tc.join("lib/rustlib/src/rust/library/core");
            std::fs::create_dir_all(&core).unwrap();
            std::fs::write(core.join("Cargo.toml"), "").unwrap();
        }
        home
    }

    #[test]
    fn the_toolchain_is_found_by_name_and_host() {
        let home = fake_home("nightly-2026-05-20-x86_64-unknown-linux-gnu", true);
        let tc = Toolchain::find_in(home.path(), "nightly-2026-05-20", "x86_64-unknown-linux-gnu").unwrap();
        assert!(tc.cargo.ends_with("nightly-2026-05-20-x86_64-unknown-linux-gnu/bin/cargo"), "{tc:?}");
        assert!(tc.rustc.ends_with("bin/rustc"));
    }

    #[test]
    fn a_missing_toolchain_or_rust_src_says_how_to_install_it_in_one_line() {
        let home = fake_home("nightly-2026-05-20-x86_64-unknown-linux-gnu", false);
        for (name, why) in [("nightly-2026-05-20", "no rust-src"), ("nightly-2031-01-01", "not installed")] {
            let e = Toolchain::find_in(home.path(), name, "x86_64-unknown-linux-gnu").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(&format!("rustup toolchain install {name}")), "{e}");
            assert!(e.contains("REDUCE_SCAN_NO_PTX=1") && !e.contains('\n'), "{e}");
        }
        let e = Toolchain::find_in(home.path(), "../x", "x86_64-unknown-linux-gnu").unwrap_err().to_string();
        assert!(e.contains("toolchain name"), "{e}");
    }
}
