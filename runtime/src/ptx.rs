//! PTX modules: any kernel crate's PTX that a build script compiled with `reduce-scan-build`
//! ([`ptx!`](crate::ptx!)), one text per architecture, and the choice among them at run time.
//!
//! The runtime compiles and embeds no PTX: a crate that depends on it embeds its own kernels,
//! nothing else. A module may hold the two helpers the runtime can use ([`Module::with_helpers`]:
//! the `reduce-scan` library's does); without them, a timed run is held by a host function and a
//! synchronous answer is copied.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// A module's builds: (architecture, minimum compute capability, PTX text), from the baseline to
/// the newest. An empty text is a build without PTX (`REDUCE_SCAN_NO_PTX=1`).
pub type Builds = &'static [(&'static str, (u32, u32), &'static str)];

/// One kernel crate's PTX, per architecture: what a GPU loads as one CUDA module
/// (`cuModuleLoadData`) to launch that crate's kernels. The emulator never reads it: it runs the
/// crate compiled for the host.
#[derive(Debug)]
pub struct Module {
    /// The module's name (the kernel crate's library name), which names it in messages and
    /// keeps one loaded copy of it per GPU.
    pub name: &'static str,
    /// Each build: (architecture, minimum compute capability, PTX text), from the baseline to
    /// the newest.
    pub arches: Builds,
    /// The module of this crate's kernels that launch from the device, if any
    /// ([`with_nested`](Self::with_nested)).
    nested: Option<&'static Module>,
    /// Must be linked with the CUDA device runtime before it loads.
    device_runtime: bool,
    /// Other builds that replace these ([`load_instead`](Self::load_instead)).
    instead: OnceLock<Builds>,
    /// Holds the runtime's helper kernels ([`with_helpers`](Self::with_helpers)).
    helpers: bool,
}

impl Module {
    /// The module of these builds.
    pub const fn new(name: &'static str, arches: Builds) -> Self {
        Module { name, arches, nested: None, device_runtime: false, instead: OnceLock::new(), helpers: false }
    }

    /// The same module, whose kernels that launch kernels from the device (CUDA's dynamic
    /// parallelism) are in `nested`, a module of their own that must be linked with the CUDA
    /// device runtime ([`linked_with_device_runtime`](Self::linked_with_device_runtime)): a
    /// kernel whose entry `nested` holds is looked up there.
    pub const fn with_nested(self, nested: &'static Module) -> Self {
        let (d, h) = (self.device_runtime, self.helpers);
        self.with(Some(nested), d, h)
    }

    /// The same module, marked as one that calls the CUDA device runtime
    /// (`cudaGetParameterBuffer`, `cudaLaunchDevice`: a kernel that launches kernels): the GPU
    /// backend links it with `libcudadevrt.a` (`cuLinkAddFile`, as `nvcc -rdc=true` does) before
    /// it loads.
    pub const fn linked_with_device_runtime(self) -> Self {
        let (n, h) = (self.nested, self.helpers);
        self.with(n, true, h)
    }

    /// The same module, marked as one that holds the runtime's helper kernels, with the
    /// contracts of the project's `kernels/src/timing.rs`: `stream_hold(ns: u32)` (one thread
    /// that keeps the stream busy `ns` nanoseconds) and `publish_answer(src, value, flag, seq,
    /// bytes)` (one thread that copies an answer into mapped host words and releases a flag).
    /// Once such a module is loaded on a GPU, [`Backend::time`](crate::Backend::time) holds the
    /// stream with its `stream_hold` before a timed run (how the `reduce-scan` library's figures
    /// were measured), and [`Backend::read_element`](crate::Backend::read_element) has the answer
    /// published by its `publish_answer`; otherwise the stream is held by a host function
    /// (`cuLaunchHostFunc`) and the answer is copied. A replacement's builds
    /// ([`load_instead`](Self::load_instead)) are asked for each helper by name.
    pub const fn with_helpers(self) -> Self {
        let (n, d) = (self.nested, self.device_runtime);
        self.with(n, d, true)
    }

    /// The same name and builds with these settings (a const fn cannot drop `self`'s
    /// `OnceLock`, which is empty here: it is forgotten).
    const fn with(self, nested: Option<&'static Module>, device_runtime: bool, helpers: bool) -> Self {
        let m =
            Module { name: self.name, arches: self.arches, nested, device_runtime, instead: OnceLock::new(), helpers };
        std::mem::forget(self);
        m
    }

    /// Does it have the runtime's helper kernel `name` (`stream_hold`, `publish_answer`)? Where
    /// it holds the helpers ([`with_helpers`](Self::with_helpers)) and its builds have that entry.
    pub fn helper(&self, name: &str) -> bool {
        self.helpers && self.has_entry(name)
    }

    /// The module of this module's kernels that launch from the device, if any.
    pub fn nested(&self) -> Option<&'static Module> {
        self.nested
    }

    /// Must it be linked with the CUDA device runtime before it loads?
    pub fn needs_device_runtime(&self) -> bool {
        self.device_runtime
    }

    /// Does a build of it (the replacement's, where [`load_instead`](Self::load_instead) gave
    /// one) have the entry `name`?
    pub fn has_entry(&self, name: &str) -> bool {
        self.builds().iter().any(|(_, _, ptx)| entries(ptx).contains(&name))
    }

    /// Loads `arches` instead of this module's own builds on every GPU that loads it after this
    /// call: what `./x learn N --gpu` does with the learner's kernels, in place of the project's.
    /// Once per process.
    pub fn load_instead(&self, arches: Builds) -> Result<()> {
        self.instead
            .set(arches)
            .map_err(|_| Error::Invalid(format!("load_instead: the PTX of `{}` was replaced already", self.name)))
    }

    /// Did [`load_instead`](Self::load_instead) replace its builds?
    pub fn replaced(&self) -> bool {
        self.instead.get().is_some()
    }

    /// Its builds: the replacement's, else its own.
    fn builds(&self) -> Builds {
        self.instead.get().copied().unwrap_or(self.arches)
    }

    /// The PTX to load on a device of compute capability `cc`: the newest build the device
    /// can run, unless [`ARCH_OVERRIDE`] names another.
    pub fn for_compute_capability(&self, cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
        choose(self.builds(), cc).map_err(|e| match e {
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

/// The PTX a build script made of a kernel crate with `reduce-scan-build`, as a [`Module`]:
/// `ptx!("dot_kernels")` names the crate by its library name (the `name` the build gave it), and
/// includes the `{name}.ptx.rs` listing the build left in this crate's `OUT_DIR`.
///
/// ```ignore
/// static PTX: reduce_scan_runtime::ptx::Module = reduce_scan_runtime::ptx!("dot_kernels");
/// ```
#[macro_export]
macro_rules! ptx {
    ($name:expr) => {
        $crate::ptx::Module::new($name, include!(concat!(env!("OUT_DIR"), "/", $name, ".ptx.rs")))
    };
}

/// Environment variable that forces one PTX build (e.g. `REDUCE_PTX_ARCH=sm_70` to run
/// the baseline on a newer GPU).
pub const ARCH_OVERRIDE: &str = "REDUCE_PTX_ARCH";

/// [`Module::for_compute_capability`] among `arches`, following [`ARCH_OVERRIDE`]; an empty PTX
/// text is refused (a binary built without the PTX).
fn choose(arches: Builds, cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
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

/// The refusal of a GPU run by a binary built without the PTX.
fn no_ptx() -> Error {
    Error::Unsupported(
        "this binary was built for the emulator only, without the kernels' PTX (REDUCE_SCAN_NO_PTX=1, what `./x run` \
         does without a GPU); for the GPU, build it with the PTX (without REDUCE_SCAN_NO_PTX; `./x run --backend gpu` \
         here)"
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
    fn a_users_empty_module_is_named_in_the_refusal() {
        static EMPTY: Module = Module::new("dot_kernels", &[("sm_70", (7, 0), ""), ("sm_90", (9, 0), "")]);
        assert!(!EMPTY.built());
        let e = EMPTY.for_compute_capability((9, 0)).unwrap_err().to_string();
        assert!(e.contains("`dot_kernels`") && e.contains("emulator only") && !e.contains('\n'), "{e}");
        static ONE: Module = Module::new("k", &[("sm_80", (8, 0), ".visible .entry k(")]);
        assert_eq!(ONE.for_compute_capability((9, 0)).unwrap().0, "sm_80");
        assert!(ONE.for_compute_capability((7, 5)).is_err(), "older than the module's only build");
        assert!(ONE.has_entry("k") && !ONE.has_entry("j"));
    }

    #[test]
    fn newest_arch_the_device_runs() {
        static M: Module = Module::new("m", &[("sm_70", (7, 0), "a"), ("sm_80", (8, 0), "b"), ("sm_90", (9, 0), "c")]);
        assert_eq!(M.for_compute_capability((9, 0)).unwrap().0, "sm_90");
        assert_eq!(M.for_compute_capability((8, 6)).unwrap().0, "sm_80");
        assert_eq!(M.for_compute_capability((7, 5)).unwrap().0, "sm_70");
        assert!(M.for_compute_capability((6, 1)).is_err());
    }

    #[test]
    fn a_replacement_is_loaded_once_instead() {
        static M: Module = Module::new("m", &[("sm_70", (7, 0), ".visible .entry own(")]);
        assert!(M.has_entry("own") && !M.replaced());
        M.load_instead(&[("sm_70", (7, 0), ".visible .entry theirs(")]).unwrap();
        assert!(M.replaced() && M.has_entry("theirs") && !M.has_entry("own"));
        let e = M.load_instead(&[]).unwrap_err().to_string();
        assert!(e.contains("`m`") && e.contains("already"), "{e}");
    }

    #[test]
    fn a_helper_is_one_of_a_module_with_helpers_that_has_its_entry() {
        static PLAIN: Module = Module::new("p", &[("sm_70", (7, 0), ".visible .entry stream_hold(")]);
        static WITH: Module = Module::new("w", &[("sm_70", (7, 0), ".visible .entry stream_hold(")]).with_helpers();
        assert!(!PLAIN.helper("stream_hold"), "a module is asked for helpers only where it says it has them");
        assert!(WITH.helper("stream_hold") && !WITH.helper("publish_answer"));
    }
}
