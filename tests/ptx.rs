//! The PTX that `host/build.rs` embeds: every registered kernel is an entry point, and
//! every build assembles with NVIDIA's `ptxas` for its own and every newer architecture.
//!
//! `ptxas` comes from `$PTXAS`, else `.tools/ptxas/ptxas` (where `./x test` installs the
//! pinned CUDA 12.9 copy from the `nvidia-cuda-nvcc-cu12` wheel), else the `PATH`. Without
//! one the ptxas tests fail and say how to get it: CI always has it. A ptxas that has no
//! target for an architecture (CUDA 13 dropped sm_70) marks that check ignored, with the
//! reason, rather than passing it.

use std::path::PathBuf;
use std::process::Command;

use host::ptx::{ARCHES, entries};
use host::registry;
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
            for v in registry::all().filter(|v| v.min_cc <= min_cc) {
                for s in v.symbols() {
                    if !have.contains(&s) {
                        return Err(
                            format!("variant {}: kernel `{s}` is not an .entry of the {arch} PTX", v.name).into()
                        );
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
                // No kernel may spill registers to local memory.
                let mut kernel = "";
                for line in log.lines() {
                    if let Some(rest) = line.split("Compiling entry function '").nth(1) {
                        kernel = rest.split('\'').next().unwrap_or("");
                    }
                    if line.contains("spill stores") && !line.contains(" 0 bytes spill stores") {
                        return Err(format!("{kernel} spills for {target}: {line}").into());
                    }
                }
                Ok(Completion::Completed)
            }));
        }
    }
    out
}
