//! The newest committed GPU measurement set, built into the binary, so that a machine without
//! a GPU shows each lesson's GPU figures beside the emulator's rows.
//!
//! On the emulator the times are CPU times: they order the emulator's own work, not the GPU's,
//! and a lesson such as coalescing does not show in them. The figures a lesson is about (the
//! GPU time, global load efficiency, active threads per warp instruction, shared-memory bank
//! conflicts) were measured on a GPU and committed under `docs/measurements/`; the emulator's
//! table prints them beside its rows, named by device and date.
//!
//! The set is [`SET`]; its files are `metrics_{family}_2e24.csv` (`reduce --metrics` under
//! Nsight Compute at n = 2^24, block 512, `scripts/gpu/metrics.sh`) and `device.txt`. A new
//! set is one edit: the directory in [`committed_set!`](crate::committed_set!).

use std::collections::HashMap;
use std::sync::OnceLock;

/// The directory of the committed set under `docs/measurements/`, as a literal (the one place
/// that names it: `include_str!` needs a literal path).
#[macro_export]
macro_rules! committed_set {
    () => {
        "2026-11-25-h100"
    };
}

/// A file of the committed set, built in.
macro_rules! set_file {
    ($name:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/measurements/", committed_set!(), "/", $name))
    };
}

/// The set's directory, from the repository root.
pub const SET: &str = concat!("docs/measurements/", committed_set!());

/// The set's CSVs: every reduction family and the scans, at n = 2^24, block 512.
const FILES: [&str; 5] = [
    set_file!("metrics_global_2e24.csv"),
    set_file!("metrics_shared_2e24.csv"),
    set_file!("metrics_modern_2e24.csv"),
    set_file!("metrics_sumsq_2e24.csv"),
    set_file!("metrics_scan_2e24.csv"),
];

/// The emulator's counters of every variant at n = 2^20, block 512, committed beside ncu's in the
/// set's `counters/` (`scripts/agreement.py`'s inputs): the bank conflicts it counts by address.
const EMULATOR_FILES: [&str; 5] = [
    set_file!("counters/emu_global_2e20.csv"),
    set_file!("counters/emu_shared_2e20.csv"),
    set_file!("counters/emu_modern_2e20.csv"),
    set_file!("counters/emu_sumsq_2e20.csv"),
    set_file!("counters/emu_scan_2e20.csv"),
];

/// The set's `device.txt`: its commit, date and GPU.
const DEVICE: &str = set_file!("device.txt");

/// The n and block of every figure in the set's CSVs.
pub const SHAPE: &str = "n = 2^24, block 512";

/// One row's committed GPU figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// The kernel time, median of 20 timed runs (CUDA events), µs.
    pub time_us: f64,
    /// Global load efficiency: bytes used per byte fetched in 32-byte sectors, %.
    pub gld_efficiency_pct: Option<f64>,
    /// Active threads per warp instruction, as % of 32: the divergence measure.
    pub warp_efficiency_pct: Option<f64>,
    /// Shared-memory bank conflicts, loads and stores.
    pub bank_conflicts: Option<f64>,
}

/// Where the set came from: the GPU's name, the date and the commit measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The GPU, short (e.g. `H100`).
    pub gpu: String,
    /// The date of the measurement (`YYYY-MM-DD`).
    pub date: String,
    /// The commit the set's kernels were built from.
    pub commit: String,
}

/// The set's provenance, read from its `device.txt`.
pub fn provenance() -> Provenance {
    provenance_of(DEVICE)
}

/// [`provenance`] of a `device.txt` text: `commit: X …`, `measured: DATE…`, and nvidia-smi's
/// CSV line, whose first field is the GPU's name.
pub fn provenance_of(device_txt: &str) -> Provenance {
    let field = |key: &str| {
        device_txt
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let name = device_txt.lines().find(|l| l.starts_with("NVIDIA ")).and_then(|l| l.split(',').next()).unwrap_or("GPU");
    let gpu = name.split_whitespace().nth(1).unwrap_or(name).to_string();
    let date = field("measured:");
    Provenance { gpu, date: date.get(..10).unwrap_or(&date).to_string(), commit: field("commit:") }
}

/// The committed figures of a reduction variant, or of a scan variant and kind
/// (`kind = Some("inclusive")`); `None` where the set has no such row.
pub fn figures(variant: &str, kind: Option<&str>) -> Option<Figures> {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| table(&FILES)).get(&(variant.to_string(), kind.map(String::from))).copied()
}

/// Whether the emulator, counting by address, finds `variant`'s shared accesses (a scan's with
/// its `kind`) free of bank conflicts in the committed set's emulator run: where ncu's figure for
/// such a kernel is not 0, ncu counted conflicts that no two lanes' addresses make
/// (`docs/counters.md`).
pub fn conflict_free_by_address(variant: &str, kind: Option<&str>) -> bool {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE
        .get_or_init(|| table(&EMULATOR_FILES))
        .get(&(variant.to_string(), kind.map(String::from)))
        .is_some_and(|f| f.bank_conflicts == Some(0.0))
}

/// Figures by (variant, kind), from a set of CSV files.
type Table = HashMap<(String, Option<String>), Figures>;

/// The rows of `files`, each a `reduce --metrics --format csv` text, by (variant, kind).
fn table(files: &[&str]) -> Table {
    files.iter().flat_map(|f| parse(f)).collect()
}

/// The rows of one `reduce --metrics --format csv` file: (variant, kind) → figures.
fn parse(csv: &str) -> Vec<((String, Option<String>), Figures)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (variant, kind, time) = (col("variant"), col("kind"), col("time_us_median"));
    let num = |cells: &[&str], i: Option<usize>| i.and_then(|i| cells.get(i)).and_then(|c| c.parse::<f64>().ok());
    lines
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let name = cells.get(variant?)?.to_string();
            let kind = kind.and_then(|k| cells.get(k)).map(|k| k.to_string());
            let conflicts =
                match (num(&cells, col("shared_ld_bank_conflicts")), num(&cells, col("shared_st_bank_conflicts"))) {
                    (Some(ld), Some(st)) => Some(ld + st),
                    (one, other) => one.or(other),
                };
            let figures = Figures {
                time_us: num(&cells, time)?,
                gld_efficiency_pct: num(&cells, col("gld_efficiency_pct")),
                warp_efficiency_pct: num(&cells, col("warp_execution_efficiency_pct")),
                bank_conflicts: conflicts,
            };
            Some(((name, kind), figures))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set covers the curriculum it was measured at (a variant added later has no figures
    /// until the next set: its row shows empty GPU cells), and every row it has names a variant.
    #[test]
    fn the_set_covers_the_curriculum() {
        let names: Vec<&str> = crate::registry::all().map(|v| v.name).collect();
        let covered = names.iter().filter(|n| figures(n, None).is_some()).count();
        assert!(covered >= 25, "{covered} of {} reduction variants have committed figures", names.len());
        // Scans registered after the set was measured: their rows show empty GPU cells until
        // the next set (their own figures are in docs/measurements/2026-11-25-h100/bulk/).
        const AFTER_THE_SET: [&str; 2] = ["lookback_bulk", "lookback_warpspec"];
        for v in crate::scan::curriculum().filter(|v| !AFTER_THE_SET.contains(&v.name)) {
            for kind in ["inclusive", "exclusive"] {
                assert!(figures(v.name, Some(kind)).is_some(), "{} {kind}: no row in {SET}", v.name);
            }
        }
        for ((name, kind), _) in FILES.iter().flat_map(|f| parse(f)) {
            let known = match kind {
                None => crate::registry::find(&name).is_ok(),
                Some(_) => crate::scan::find(&name).is_ok(),
            };
            assert!(known, "{SET}: a row for `{name}`, which is no variant");
        }
    }

    #[test]
    fn the_coalescing_lesson_is_in_the_figures() {
        let less = figures("neighbored_less", None).unwrap();
        let inter = figures("interleaved", None).unwrap();
        assert!(inter.gld_efficiency_pct.unwrap() > 3.0 * less.gld_efficiency_pct.unwrap(), "{less:?} {inter:?}");
        assert!(inter.time_us < less.time_us, "{less:?} {inter:?}");
    }

    #[test]
    fn provenance_names_the_gpu_date_and_commit() {
        let p = provenance_of(
            "commit: e032fa9 (the default)\nmeasured: 2026-11-25T07:08:42Z\nname, driver\nNVIDIA H100 80GB HBM3, 580\n",
        );
        assert_eq!(p, Provenance { gpu: "H100".into(), date: "2026-11-25".into(), commit: "e032fa9".into() });
        let set = provenance();
        assert!(!set.gpu.is_empty() && set.date.len() == 10 && !set.commit.is_empty(), "{set:?}");
    }

    /// The set built in is the newest GPU set that has the files: a newer measurement set
    /// moves [`committed_set!`] with it.
    #[test]
    fn the_set_is_the_newest_with_these_files() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/measurements");
        let newest = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|d| {
                root.join(d).join("metrics_global_2e24.csv").exists() && root.join(d).join("device.txt").exists()
            })
            .max_by(|a, b| a.get(..10).cmp(&b.get(..10)).then(b.cmp(a)));
        assert_eq!(newest.as_deref(), Some(committed_set!()), "docs/measurements/{newest:?} is newer than {SET}");
    }

    /// The emulator plays the committed GPU's geometry by default (`emu::COMMITTED_GPU_SMS`):
    /// its SM count and name are the set's `device.txt`'s, so a newer set moves them too.
    #[test]
    fn the_emulators_default_geometry_is_the_sets_gpu() {
        let line = DEVICE.lines().find(|l| l.starts_with("device: ")).expect("a `device:` line in device.txt");
        let sms: u32 = line
            .split(", ")
            .find_map(|part| part.strip_suffix(" SMs"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `N SMs` in {line}"));
        assert_eq!(crate::emu::COMMITTED_GPU_SMS, sms, "{SET}/device.txt: {line}");
        assert_eq!(crate::emu::COMMITTED_GPU, provenance().gpu, "{SET}/device.txt");
        let emulator = crate::backend::Backend::with_emulator(
            crate::emu::Emulator::new().with_sms(crate::emu::EmulatedSms::CommittedGpu),
        );
        assert_eq!(emulator.info().multiprocessors, sms);
    }

    #[test]
    fn a_row_without_a_number_is_left_out() {
        let rows = parse("variant,time_us_median,gld_efficiency_pct\na,1.5,25\nb,,30\n");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].1.gld_efficiency_pct, Some(25.0));
        assert_eq!(rows[0].1.bank_conflicts, None);
    }
}
