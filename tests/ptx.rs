//! The PTX that `host/build.rs` embeds: every kernel of both registries (reductions and
//! scans) is an entry point, and every build assembles with NVIDIA's `ptxas` for its own and
//! every newer architecture with no local memory at all: no register spills and a 0-byte
//! stack frame in every kernel (a per-thread array indexed at run time, or too many live
//! values, would put data in slow local memory).
//!
//! `ptxas` comes from `$PTXAS`, else `.tools/ptxas/ptxas` (where `./x test` installs the
//! pinned CUDA 12.9 copy from the `nvidia-cuda-nvcc-cu12` wheel), else the `PATH`. Without
//! one the ptxas tests fail and say how to get it: CI always has it. A ptxas that has no
//! target for an architecture (CUDA 13 dropped sm_70) marks that check ignored, with the
//! reason, rather than passing it.

use std::path::PathBuf;
use std::process::Command;

use host::ptx::{ARCHES, entries};
use host::{registry, scan};
use libtest_mimic::{Completion, Failed, Trial};

fn ptxas() -> Result<PathBuf, Failed> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Ok(PathBuf::from(p));
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/ptxas/ptxas");
    if local.is_file() {
        return Ok(local);
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Ok(PathBuf::from("ptxas"));
    }
    Err("ptxas not found: set PTXAS, put ptxas on the PATH, or run `./x test`, which installs it in .tools/".into())
}

pub fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for (arch, min_cc, ptx) in ARCHES {
        out.push(Trial::test(format!("ptx::entries::{arch}"), move || {
            let have = entries(ptx);
            let reductions = registry::all().filter(|v| v.min_cc <= min_cc).map(|v| (v.name, v.symbols()));
            let scans = scan::all().filter(|v| v.min_cc <= min_cc).map(|v| (v.name, v.symbols()));
            for (name, symbols) in reductions.chain(scans) {
                for s in symbols {
                    if !have.contains(&s) {
                        return Err(format!("variant {name}: kernel `{s}` is not an .entry of the {arch} PTX").into());
                    }
                }
            }
            Ok(())
        }));
        for (target, target_cc, _) in ARCHES.iter().filter(|(_, cc, _)| *cc >= min_cc) {
            let target = *target;
            let _ = target_cc;
            out.push(Trial::ignorable_test(format!("ptx::ptxas::{arch}_for_{target}"), move || {
                let ptxas = ptxas()?;
                let dir = std::env::temp_dir().join(format!("reduce-ptx-{}", std::process::id()));
                std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
                let file = dir.join(format!("{arch}_{target}.ptx"));
                std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
                let o = Command::new(&ptxas)
                    .args([&format!("-arch={target}"), "-v", "-o", "/dev/null"])
                    .arg(&file)
                    .output()
                    .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
                let _ = std::fs::remove_file(&file);
                let log = String::from_utf8_lossy(&o.stderr);
                if !o.status.success() && log.contains("is not defined for option 'gpu-name'") {
                    return Ok(Completion::ignored_with(format!("{} has no {target} target", ptxas.display())));
                }
                if !o.status.success() {
                    return Err(format!("ptxas -arch={target} rejects the {arch} PTX:\n{log}").into());
                }
                // No kernel may use local memory: no spills, no stack frame.
                let mut kernel = "";
                let mut checked = 0;
                for line in log.lines() {
                    if let Some(rest) = line.split("Function properties for ").nth(1) {
                        kernel = rest.trim();
                    }
                    if line.contains("stack frame") {
                        checked += 1;
                        if !line.contains(" 0 bytes stack frame") || !line.contains(" 0 bytes spill stores") {
                            return Err(format!("{kernel} uses local memory for {target}: {}", line.trim()).into());
                        }
                    }
                }
                if checked < entries(ptx).len() {
                    return Err(format!("ptxas reported on {checked} of {} kernels", entries(ptx).len()).into());
                }
                Ok(Completion::Completed)
            }));
        }
    }
    out
}
