//! The library's kernels as PTX: the kernels crate (`reduce-scan-kernels`), compiled by this
//! crate's build script for each architecture in [`ARCHES`] and embedded ([`KERNELS`]), with the
//! kernels that launch from the device in a module of their own ([`NESTED`]); and, re-exported
//! from the runtime, what any kernel crate's PTX is ([`Module`], [`ptx!`](reduce_scan_runtime::ptx!)).

pub use reduce_scan_runtime::ptx::*;

use crate::backend::Entry;
use crate::error::Result;

/// The project's kernels, as a [`Module`] (what every registered variant launches); a kernel
/// that launches kernels from the device is found in [`NESTED`]. It holds the runtime's helpers
/// (`kernels/src/timing.rs`: `stream_hold`, `publish_answer`; [`Module::with_helpers`]): once it is
/// loaded, timed runs are held by its `stream_hold` and synchronous answers published by its
/// `publish_answer`, as they always were.
pub static KERNELS: Module = Module::new("reduce_scan_kernels", &ARCHES).with_nested(&NESTED).with_helpers();

/// Each PTX build: (architecture, minimum compute capability, PTX text). Ordered from the
/// baseline, which every supported GPU loads, to the newest.
pub const ARCHES: [(&str, (u32, u32), &str); 3] = [
    ("sm_70", (7, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_70.ptx"))),
    ("sm_80", (8, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_80.ptx"))),
    ("sm_90", (9, 0), include_str!(concat!(env!("OUT_DIR"), "/kernels_sm_90.ptx"))),
];

/// The PTX of the kernels that launch from the device (the nested reductions), built for
/// sm_70 with the kernels crate's `no-entries` and `device-runtime` features: only those
/// kernels are entries, and it calls the CUDA device runtime (`__cudaCDP2GetParameterBufferV2`,
/// `__cudaCDP2LaunchDeviceV2`), so it must be linked with `libcudadevrt.a` before it loads.
/// Empty in the emulator's build (`REDUCE_SCAN_NO_PTX=1`).
pub const NESTED_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_nested_sm_70.ptx"));

/// [`NESTED_PTX`] as the module the GPU backend links with the CUDA device runtime.
pub static NESTED: Module =
    Module::new("reduce_scan_kernels_nested", &[("sm_70", (7, 0), NESTED_PTX)]).linked_with_device_runtime();

/// The kernel `name` of [`KERNELS`], to ask the backend about
/// ([`Backend::occupancy`](crate::Backend::occupancy),
/// [`Backend::allow_dynamic_shared`](crate::Backend::allow_dynamic_shared)).
pub const fn entry(name: &'static str) -> Entry {
    Entry::of(&KERNELS, name)
}

/// Loads `module`'s builds instead of [`KERNELS`]' on every GPU opened after this call, the
/// newest of them the GPU runs: what `./x learn N --gpu` does with the learner's own kernels
/// (built for sm_70 and sm_80). Once per process.
pub fn load_module_instead(module: &Module) -> Result<()> {
    KERNELS.load_instead(module.arches)
}

/// Was this library built with its kernels' PTX? Not when built for the emulator only
/// (`REDUCE_SCAN_NO_PTX=1`, what `./x run` does on a machine without a GPU).
pub fn built() -> bool {
    KERNELS.built()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_without_ptx_refuses_the_gpu_in_one_line() {
        static EMPTY: Module = Module::new("k", &[("sm_70", (7, 0), ""), ("sm_90", (9, 0), "")]);
        let e = EMPTY.for_compute_capability((9, 0)).unwrap_err().to_string();
        assert!(e.contains("built for the emulator only") && e.contains("./x run --backend gpu"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert!(built(), "this test binary was built with the PTX");
    }

    #[test]
    fn newest_arch_the_device_runs() {
        assert_eq!(KERNELS.for_compute_capability((9, 0)).unwrap().0, "sm_90");
        assert_eq!(KERNELS.for_compute_capability((8, 6)).unwrap().0, "sm_80");
        assert_eq!(KERNELS.for_compute_capability((7, 5)).unwrap().0, "sm_70");
        assert!(KERNELS.for_compute_capability((6, 1)).is_err());
    }

    #[test]
    fn every_build_has_entries() {
        for (arch, _, ptx) in ARCHES {
            assert!(!entries(ptx).is_empty(), "{arch} has no entries");
            assert!(ptx.contains(&format!(".target {arch}")), "{arch} PTX targets another arch");
        }
    }

    #[test]
    fn the_kernels_hold_the_runtimes_helpers() {
        assert!(KERNELS.helper("stream_hold") && KERNELS.helper("publish_answer"));
        assert!(!NESTED.helper("stream_hold"));
    }

    #[test]
    fn a_nested_kernel_is_found_in_its_own_module() {
        assert!(NESTED.needs_device_runtime() && !KERNELS.needs_device_runtime());
        assert!(KERNELS.nested().is_some_and(|n| n.has_entry("recursive_reduce")));
        assert!(!NESTED.has_entry("interleaved"));
    }
}
