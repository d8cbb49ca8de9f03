//! The PTX of the kernels crate (`reduce-scan-kernels`), compiled by `build.rs` for each
//! architecture in [`ARCHES`] and embedded in this library, and the choice among them at run
//! time.

use crate::error::{Error, Result};

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

/// PTX to load in place of the embedded kernels', set by [`load_instead`].
static INSTEAD: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Loads `ptx` (sm_70 or older PTX) instead of the embedded kernels' on every GPU opened after
/// this call: what `./x learn N --gpu` does with the learner's own kernels. Once per process.
pub fn load_instead(ptx: &'static str) -> Result<()> {
    INSTEAD.set(ptx).map_err(|_| Error::Invalid("load_instead: another PTX was set already".into()))
}

/// The PTX to load on a device of compute capability `cc`: the newest build the device can
/// run, unless [`ARCH_OVERRIDE`] names another (or [`load_instead`] gave one).
pub fn for_compute_capability(cc: (u32, u32)) -> Result<(&'static str, &'static str)> {
    if let Some(ptx) = INSTEAD.get() {
        return Ok(("sm_70", ptx));
    }
    choose(&ARCHES, cc)
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
        .ok_or_else(|| Error::Unsupported(format!("compute capability {}.{} is older than sm_70", cc.0, cc.1)))
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
