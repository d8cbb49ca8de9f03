//! PTX modules: the project's kernels (`reduce-scan-kernels`, compiled by `build.rs` for each
//! architecture in [`ARCHES`] and embedded in this library, [`KERNELS`]), and any kernel crate's
//! that a user's build script compiled with `reduce-scan-build` ([`ptx!`](crate::ptx!)); and the
//! choice among a module's architectures at run time.

use crate::error::{Error, Result};

/// One kernel crate's PTX, per architecture: what a GPU loads as one CUDA module
/// (`cuModuleLoadData`) to launch that crate's kernels. The emulator never reads it: it runs the
/// crate compiled for the host.
#[derive(Clone, Copy, Debug)]
pub struct Module {
    /// The module's name (the kernel crate's library name), which names it in messages and
    /// keeps one loaded copy of it per GPU.
    pub name: &'static str,
    /// Each build: (architecture, minimum compute capability, PTX text), from the baseline to
    /// the newest. An empty text is a build without PTX (`REDUCE_SCAN_NO_PTX=1`).
    pub arches: &'static [(&'static str, (u32, u32), &'static str)],
}

impl Module {
    /// The module of these builds.
    pub const fn new(name: &'static str, arches: &'static [(&'static str, (u32, u32), &'static str)]) -> Self {
        Module { name, arches }
    }

    /// The PTX to load on a device of compute capability `cc`: the newest build the device
    /// can run, unless [`ARCH_OVERRIDE`] names another.
    pub fn for_compute_capability(&self, cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
        choose(self.arches, cc).map_err(|e| match e {
            Error::Unsupported(m) if m.starts_with("this binary was built") => {
                Error::Unsupported(format!("the PTX module `{}` is empty: {m}", self.name))
            }
            other => other,
        })
    }

    /// Was it built with its PTX?
    pub fn built(&self) -> bool {
        !self.arches.is_empty() && self.arches.iter().all(|(_, _, ptx)| !ptx.is_empty())
    }
}

/// The project's own kernels, as a [`Module`] (what every registered variant launches).
pub static KERNELS: Module = Module::new("reduce_scan_kernels", &ARCHES);

/// The PTX a build script made of a kernel crate with `reduce-scan-build`, as a [`Module`]:
/// `ptx!("dot_kernels")` names the crate by its library name (the `name` the build gave it), and
/// includes the `{name}.ptx.rs` listing the build left in this crate's `OUT_DIR`.
///
/// ```ignore
/// static PTX: reduce_scan::ptx::Module = reduce_scan::ptx!("dot_kernels");
/// ```
#[macro_export]
macro_rules! ptx {
    ($name:expr) => {
        $crate::ptx::Module::new($name, include!(concat!(env!("OUT_DIR"), "/", $name, ".ptx.rs")))
    };
}

/// Each PTX build: (architecture, minimum compute capability, PTX text). Ordered from the
/// baseline, which every supported GPU loads, to the newest.
pub const ARCHES: [(&str, (u32, u32), &str); 3] = [
    ("sm_70", (7, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_70.ptx"))),
    ("sm_80", (8, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_80.ptx"))),
    ("sm_90", (9, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_90.ptx"))),
];

/// The PTX module of the kernels that launch from the device (the nested reductions), built for
/// sm_70 with the kernels crate's `no-entries` and `device-runtime` features: only those
/// kernels are entries, and it calls the CUDA device runtime (`__cudaCDP2GetParameterBufferV2`,
/// `__cudaCDP2LaunchDeviceV2`), so it must be linked with `libcudadevrt.a` before it loads.
/// Empty in the emulator's build (`REDUCE_SCAN_NO_PTX=1`).
pub const NESTED_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_nested_sm_70.ptx"));

/// Environment variable that forces one PTX build (e.g. `REDUCE_PTX_ARCH=sm_70` to run
/// the baseline on a newer GPU).
pub const ARCH_OVERRIDE: &str = "REDUCE_PTX_ARCH";

/// A module's builds: (architecture, minimum compute capability, PTX text), from the baseline to
/// the newest ([`Module::arches`]).
type Builds = &'static [(&'static str, (u32, u32), &'static str)];

/// PTX to load in place of the embedded kernels', set by [`load_instead`] or
/// [`load_module_instead`].
static INSTEAD: std::sync::OnceLock<Builds> = std::sync::OnceLock::new();

/// Loads `ptx` (sm_70 or older PTX) instead of the embedded kernels' on every GPU opened after
/// this call. Once per process.
pub fn load_instead(ptx: &'static str) -> Result<()> {
    load_module_instead(Module::new("instead", Box::leak(Box::new([("sm_70", (7, 0), ptx)]))))
}

/// Loads `module`'s PTX instead of the embedded kernels' on every GPU opened after this call,
/// the newest of its builds the GPU runs (as for the embedded kernels): what `./x learn N --gpu`
/// does with the learner's own kernels (built for sm_70 and sm_80). Once per process.
pub fn load_module_instead(module: Module) -> Result<()> {
    INSTEAD.set(module.arches).map_err(|_| Error::Invalid("load_instead: another PTX was set already".into()))
}

/// Whether [`load_module_instead`] replaced the embedded kernels: the replacement (a learner's
/// kernels) need not hold the project's helpers, such as `publish_answer`.
pub fn replaced() -> bool {
    INSTEAD.get().is_some()
}

/// The project's PTX to load on a device of compute capability `cc`: the newest build the device
/// can run, unless [`ARCH_OVERRIDE`] names another (or [`load_module_instead`] gave others).
pub fn for_compute_capability(cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
    if let Some(arches) = INSTEAD.get() {
        return choose(arches, cc);
    }
    choose(&ARCHES, cc)
}

/// The PTX of `module` to load on a device of compute capability `cc`: the project's kernels as
/// [`for_compute_capability`] chooses them, any other module as [`Module::for_compute_capability`].
pub fn of_module(module: &Module, cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
    if module.name == KERNELS.name { for_compute_capability(cc) } else { module.for_compute_capability(cc) }
}

/// [`for_compute_capability`] among `arches`; an empty PTX text is refused (a binary built
/// without the PTX).
fn choose(arches: &[(&'static str, (u32, u32), &'static str)], cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
    if let Ok(want) = std::env::var(ARCH_OVERRIDE) {
        let Some(&(arch, min, ptx)) = arches.iter().find(|(a, ..)| *a == want) else {
            let known: Vec<_> = arches.iter().map(|a| a.0).collect();
            return Err(Error::Invalid(format!("{ARCH_OVERRIDE}={want}: not one of {known:?}")));
        };
        if min > cc {
            return Err(Error::Unsupported(format!(
                "{ARCH_OVERRIDE}={want} needs compute capability {}.{}, the device has {}.{}",
                min.0, min.1, cc.0, cc.1
            )));
        }
        return if ptx.is_empty() { Err(no_ptx()) } else { Ok((arch, ptx)) };
    }
    arches
        .iter()
        .rev()
        .find(|(_, min, _)| *min <= cc)
        .map(|&(arch, _, ptx)| (arch, ptx))
        .ok_or_else(|| {
            let oldest = arches.first().map_or("sm_70", |a| a.0);
            Error::Unsupported(format!("compute capability {}.{} is older than {oldest}", cc.0, cc.1))
        })
        .and_then(|(arch, ptx)| if ptx.is_empty() { Err(no_ptx()) } else { Ok((arch, ptx)) })
}

/// Was this binary built with the kernels' PTX? Not when built for the emulator only
/// (`REDUCE_SCAN_NO_PTX=1`, what `./x run` does on a machine without a GPU).
pub fn built() -> bool {
    ARCHES.iter().all(|(_, _, ptx)| !ptx.is_empty())
}

/// The refusal of a GPU run by a binary built without the PTX.
fn no_ptx() -> Error {
    Error::Unsupported(
        "this binary was built for the emulator only, without the kernels' PTX (REDUCE_SCAN_NO_PTX=1, what `./x run` \
         does without a GPU); for the GPU, build it with the PTX: `./x run --backend gpu`"
            .into(),
    )
}

/// The `.visible .entry` names in a PTX text.
pub fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_without_ptx_refuses_the_gpu_in_one_line() {
        let empty = [("sm_70", (7, 0), ""), ("sm_90", (9, 0), "")];
        let e = choose(&empty, (9, 0)).unwrap_err().to_string();
        assert!(e.contains("built for the emulator only") && e.contains("./x run --backend gpu"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(built(), "this test binary was built with the PTX");
    }

    #[test]
    fn a_users_empty_module_is_named_in_the_refusal() {
        static EMPTY: Module = Module::new("dot_kernels", &[("sm_70", (7, 0), ""), ("sm_90", (9, 0), "")]);
        assert!(!EMPTY.built());
        let e = EMPTY.for_compute_capability((9, 0)).unwrap_err().to_string();
        assert!(e.contains("`dot_kernels`") && e.contains("emulator only") && !e.contains('\n'), "{e}");
        static ONE: Module = Module::new("k", &[("sm_80", (8, 0), ".entry k(")]);
        assert_eq!(ONE.for_compute_capability((9, 0)).unwrap().0, "sm_80");
        assert!(ONE.for_compute_capability((7, 5)).is_err(), "older than the module's only build");
        assert!(KERNELS.built());
    }

    #[test]
    fn newest_arch_the_device_runs() {
        assert_eq!(for_compute_capability((9, 0)).unwrap().0, "sm_90");
        assert_eq!(for_compute_capability((8, 6)).unwrap().0, "sm_80");
        assert_eq!(for_compute_capability((7, 5)).unwrap().0, "sm_70");
        assert!(for_compute_capability((6, 1)).is_err());
    }

    #[test]
    fn every_build_has_entries() {
        for (arch, _, ptx) in ARCHES {
            assert!(!entries(ptx).is_empty(), "{arch} has no entries");
            assert!(ptx.contains(&format!(".target {arch}")), "{arch} PTX targets another arch");
        }
    }
}
