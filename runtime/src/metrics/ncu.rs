//! Running Nsight Compute: a child run of this executable under `ncu`, its CSV log read back
//! ([`Profiler`], [`run_ncu`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::columns::ncu_metrics_for;
use super::launch::{Launch, parse_csv};
use crate::{Error, Result};

/// `ncu`: `$NCU`, else the first on the `PATH`, else `/usr/local/cuda/bin/ncu`, else the
/// newest `/usr/local/cuda-*/bin/ncu` (the same search as for nvcc: [`crate::find_cuda_tool`]).
pub fn find_ncu() -> Option<PathBuf> {
    crate::find_cuda_tool("NCU", "ncu")
}

/// Runs child runs of this executable under ncu.
#[derive(Clone, Debug)]
pub struct Profiler {
    ncu: PathBuf,
    exe: PathBuf,
}

impl Profiler {
    /// A profiler for a run on a GPU, or why there is none, in one line
    /// ([`Error::Unsupported`]): there is no ncu. (The emulator counts for itself:
    /// [`emulated_launch`](super::emulated_launch).)
    pub fn new() -> Result<Self> {
        let ncu = find_ncu().ok_or_else(|| {
            Error::Unsupported(
                "--metrics needs Nsight Compute: no ncu (set NCU, put ncu on the PATH, or install the CUDA toolkit \
                 in /usr/local/cuda)"
                    .into(),
            )
        })?;
        let exe = std::env::current_exe()
            .map_err(|e| Error::Unsupported(format!("--metrics: cannot find this executable: {e}")))?;
        Ok(Self { ncu, exe })
    }

    /// The ncu it runs.
    pub fn ncu(&self) -> &Path {
        &self.ncu
    }

    /// Profiles `symbols` in a child run of this executable with `args`, and parses what
    /// ncu wrote.
    pub fn profile(&self, symbols: &[&str], args: &[String]) -> Result<Vec<Launch>> {
        parse_csv(&run_ncu(&self.ncu, &self.exe, symbols, args)?)
    }
}

/// The metrics asked of ncu on this machine: [`ncu_metrics_for`] GPU 0 (the child runs there),
/// every one where no GPU can be opened (a stand-in ncu in the tests).
pub fn ncu_metrics_here() -> Vec<&'static str> {
    let cc = crate::backend::Backend::gpu().ok().map(|b| b.info().compute_capability);
    ncu_metrics_for(cc)
}

/// Runs `exe args` under `ncu` with the [`ncu_metrics_here`], profiling only the kernels named
/// `symbols`, and returns ncu's CSV log. An error says, in one line, why ncu gave nothing:
/// no permission for the counters (`ERR_NVGPUCTRPERM`), an `==ERROR==` line, or the failure.
pub fn run_ncu(ncu: &Path, exe: &Path, symbols: &[&str], args: &[String]) -> Result<String> {
    run_ncu_with_env(ncu, exe, symbols, args, &[])
}

/// [`run_ncu`] with these variables set in the environment ncu and the child inherit.
pub fn run_ncu_with_env(
    ncu: &Path,
    exe: &Path,
    symbols: &[&str],
    args: &[String],
    env: &[(&str, &str)],
) -> Result<String> {
    // ncu writes its log into a private folder of ours (random name, mode 0700, removed after).
    let dir = crate::private::PrivateDir::new("reduce-ncu-")?;
    let log = dir.path().join("ncu.csv");
    let out = Command::new(ncu)
        .args(["--csv", "--metrics", &ncu_metrics_here().join(","), "--target-processes", "application-only"])
        .args(["-k", &format!("regex:^({})$", symbols.join("|")), "--log-file"])
        .arg(&log)
        .arg(exe)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Unsupported(format!("--metrics: cannot run {}: {e}", ncu.display())))?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    drop(dir);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let all = [text.as_str(), stdout.as_ref(), stderr.as_ref()];
    if all.iter().any(|t| t.contains("ERR_NVGPUCTRPERM")) {
        return Err(Error::Unsupported(
            "--metrics: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let \
             users profile (NVreg_RestrictProfilingToAdminUsers=0)"
                .into(),
        ));
    }
    if text.contains("\"ID\",") {
        return Ok(text);
    }
    let error = all.iter().flat_map(|t| t.lines()).find(|l| l.starts_with("==ERROR=="));
    match error {
        Some(line) => Err(Error::Unsupported(format!("--metrics: {}: {}", ncu.display(), line.trim()))),
        None if !out.status.success() && !stdout.contains(',') => Err(Error::Unsupported(format!(
            "--metrics: {} exited with {}: {}",
            ncu.display(),
            out.status,
            crate::last_line(&stderr)
        ))),
        // The child ran and nothing matched (e.g. it skipped the variant): no launches.
        None => Ok(text),
    }
}
