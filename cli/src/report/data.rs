//! The measurements of one run, read from the CSVs its directory holds (the files
//! `scripts/gpu/` writes; see `docs/measurements/2026-11-22-h100/`): `variants_*.csv`,
//! `twins_*.csv`, `sum_vs_cub.csv`, `scans.csv`, `ncu_*.csv` and `device.txt`. Every file is
//! optional; a run directory with none of them is an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// One reduction variant at one n (`variants_*.csv`).
#[derive(Clone, Debug)]
pub struct VariantRow {
    /// Variant name.
    pub variant: String,
    /// Elements.
    pub n: u64,
    /// Median time, µs.
    pub time_us: f64,
    /// Throughput, GB/s.
    pub gb_per_s: Option<f64>,
    /// % of the device's peak bandwidth.
    pub pct_peak: Option<f64>,
    /// In-kernel clock64 cycles (sum-of-squares steps).
    pub clock64: Option<f64>,
}

/// One scan variant × kind at one n (`scans.csv`), `cub` rows included.
#[derive(Clone, Debug)]
pub struct ScanRow {
    /// Variant name (`bit`, `blelloch`, `lookback`, `cub`).
    pub variant: String,
    /// `inclusive` or `exclusive`.
    pub kind: String,
    /// Elements.
    pub n: u64,
    /// Median time, µs.
    pub time_us: f64,
    /// Read+write throughput, GB/s.
    pub gb_per_s: Option<f64>,
    /// % of peak.
    pub pct_peak: Option<f64>,
    /// CUB's time over ours, where the CSV has it.
    pub x_cub: Option<f64>,
}

/// One Nsight Compute metric of one kernel launch (`ncu_*.csv`).
#[derive(Clone, Debug)]
pub struct NcuRow {
    /// The profiled process (`reduce` for ours, the twin binary for CUDA C).
    pub process: String,
    /// Kernel name as ncu prints it.
    pub kernel: String,
    /// Metric name.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Its value.
    pub value: f64,
}

/// One element type × operator at one n (`types_vs_cub.csv`): `atomic_accumulate` and CUB.
#[derive(Clone, Debug)]
pub struct TypeRow {
    /// Element type (`f32`, …).
    pub ty: String,
    /// Operator (`sum`, `min`, `max`).
    pub op: String,
    /// Elements.
    pub n: u64,
    /// Our median, µs.
    pub time_us: f64,
    /// Bytes read per second at the median.
    pub gb_per_s: Option<f64>,
    /// CUB's median, µs.
    pub cub_us: Option<f64>,
    /// CUB's time over ours.
    pub x_cub: Option<f64>,
    /// PASS, or what went wrong.
    pub verdict: String,
}

/// Everything one run directory holds.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// The directory.
    pub dir: PathBuf,
    /// Its name, for labels.
    pub label: String,
    /// Device line from `device.txt`.
    pub device: Option<String>,
    /// Peak bandwidth (GB/s) from `device.txt`.
    pub peak_gb_per_s: Option<f64>,
    /// Every reduction variant row.
    pub variants: Vec<VariantRow>,
    /// CUDA C twin: (variant, n) → (C median µs, × C).
    pub twins: HashMap<(String, u64), (f64, f64)>,
    /// CUB DeviceReduce::Sum median (µs) per n: the median over the rounds of `sum_vs_cub.csv`.
    pub cub_reduce: Vec<(u64, f64)>,
    /// Every scan row.
    pub scans: Vec<ScanRow>,
    /// Every ncu metric.
    pub ncu: Vec<NcuRow>,
    /// Every element type × operator row (`types_vs_cub.csv`).
    pub types: Vec<TypeRow>,
    /// The counters of the agreement table (`counters/*.csv`: `reduce --metrics` on the GPU,
    /// and `emu_*.csv` on the emulator), by (source, variant): n and column → value. Scans:
    /// the inclusive rows.
    pub counters: HashMap<(CounterSource, String), (u64, HashMap<String, f64>)>,
    /// Nsight Compute's counters per cache level and stall reasons (`cache_levels_*.csv`,
    /// `scripts/gpu/cache_levels.sh`), by kernel: ncu's metric name → value.
    pub levels: HashMap<String, HashMap<String, f64>>,
}

/// Who counted: Nsight Compute on the GPU, or the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterSource {
    /// `reduce --metrics` on a GPU (`counters/<family>_<n>.csv`).
    Ncu,
    /// `reduce --metrics` on the emulator (`counters/emu_<family>_<n>.csv`).
    Emulator,
}

/// `theirs` in place of `mine`, where there is any.
fn replace<T>(mine: &mut Vec<T>, theirs: Vec<T>) {
    if !theirs.is_empty() {
        *mine = theirs;
    }
}

impl Run {
    /// Lays `later` over this run (see [`load_layers`]).
    fn overlay(&mut self, later: Run) {
        self.device = later.device.or(self.device.take());
        self.peak_gb_per_s = later.peak_gb_per_s.or(self.peak_gb_per_s);
        let replaced = |v: &str, n: u64| later.variants.iter().any(|w| w.variant == v && w.n == n);
        self.variants.retain(|v| !replaced(&v.variant, v.n));
        // A twin ratio belongs to the Rust time it was measured with: a re-measured row drops
        // the old one (the later layer's twins, if any, come back below).
        self.twins.retain(|(v, n), _| !replaced(v, *n));
        self.variants.extend(later.variants);
        self.twins.extend(later.twins);
        replace(&mut self.cub_reduce, later.cub_reduce);
        replace(&mut self.scans, later.scans);
        replace(&mut self.types, later.types);
        self.ncu.retain(|m| !later.ncu.iter().any(|l| l.kernel == m.kernel));
        self.ncu.extend(later.ncu);
        self.counters.extend(later.counters);
    }

    /// The reduction row of `variant` at `n`.
    pub fn variant(&self, variant: &str, n: u64) -> Option<&VariantRow> {
        self.variants.iter().find(|r| r.variant == variant && r.n == n)
    }

    /// Every n some reduction row has, ascending.
    pub fn variant_ns(&self) -> Vec<u64> {
        let mut ns: Vec<u64> = self.variants.iter().map(|r| r.n).collect();
        ns.sort_unstable();
        ns.dedup();
        ns
    }

    /// CUB's reduce time at `n`.
    pub fn cub_at(&self, n: u64) -> Option<f64> {
        self.cub_reduce.iter().find(|(m, _)| *m == n).map(|(_, t)| *t)
    }

    /// The inclusive scan row of `variant` at `n`.
    pub fn scan(&self, variant: &str, n: u64) -> Option<&ScanRow> {
        self.scans.iter().find(|r| r.variant == variant && r.kind == "inclusive" && r.n == n)
    }

    /// The metrics of our kernel `symbol` (process `reduce`), in file order; where ncu
    /// profiled the kernel more than once, the first launch's value of each metric.
    pub fn ncu_of(&self, symbol: &str) -> Vec<&NcuRow> {
        let mut out: Vec<&NcuRow> = Vec::new();
        for r in self.ncu.iter().filter(|r| r.process == "reduce" && r.kernel == symbol) {
            if !out.iter().any(|o| o.metric == r.metric) {
                out.push(r);
            }
        }
        out
    }
}

/// One CSV file as rows of header → value (lines starting `==` skipped: ncu's chatter).
fn records(path: &Path) -> Result<Vec<HashMap<String, String>>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
    let body: String = text.lines().filter(|l| !l.starts_with("==")).map(|l| format!("{l}\n")).collect();
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(body.as_bytes());
    let bad = |e: csv::Error| Error::Invalid(format!("{}: not a CSV file: {e}", path.display()));
    let headers = reader.headers().map_err(bad)?.clone();
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(bad)?;
        rows.push(headers.iter().zip(rec.iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect());
    }
    Ok(rows)
}

/// A number from a cell (`165,344` → 165344); `None` when empty or not a number.
fn num(row: &HashMap<String, String>, key: &str) -> Option<f64> {
    row.get(key).and_then(|v| v.replace(',', "").trim().parse().ok())
}

fn text(row: &HashMap<String, String>, key: &str) -> String {
    row.get(key).cloned().unwrap_or_default()
}

/// The CSV files of `dir` whose names start with `prefix`, sorted.
fn files(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", dir.display())))?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|s| s.to_str()).unwrap_or("");
            name.starts_with(prefix) && name.ends_with(".csv")
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The median of some values (NaN-free).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 })
}

/// One run given as `A+B+…`: the directories' measurements layered, a later directory's
/// replacing an earlier one's (a re-measurement after a change): variant rows and twins by
/// (variant, n), profiler metrics by kernel, and each other kind of file (CUB, scans, types)
/// whole, where the later directory has it. A path without `+` is [`load`]. (So a run
/// directory's own name cannot hold a `+`.) A later layer may hold any of the files, even only
/// profiler metrics; the first must hold measurements.
pub fn load_layers(arg: &Path) -> Result<Run> {
    let text = arg.to_string_lossy();
    let mut paths = text.split('+').map(Path::new);
    let first = paths.next().ok_or_else(|| Error::Invalid("empty run directory".into()))?;
    let mut run = load(first)?;
    for later in paths {
        run.overlay(read_dir_run(later)?);
    }
    run.dir = arg.to_path_buf();
    run.label = text
        .split('+')
        .filter_map(|p| Path::new(p).file_name())
        .map(|s| s.to_string_lossy())
        .collect::<Vec<_>>()
        .join("+");
    Ok(run)
}

/// Reads a run directory; one that holds no measurements is an error.
pub fn load(dir: &Path) -> Result<Run> {
    let run = read_dir_run(dir)?;
    if run.variants.is_empty() && run.scans.is_empty() && run.cub_reduce.is_empty() && run.types.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no measurements (variants_*.csv, scans.csv or sum_vs_cub.csv)",
            dir.display()
        )));
    }
    Ok(run)
}

/// Every file of a run directory that is there (none may be).
fn read_dir_run(dir: &Path) -> Result<Run> {
    let label = dir.file_name().map_or_else(|| dir.display().to_string(), |s| s.to_string_lossy().into_owned());
    let mut run = Run { dir: dir.to_path_buf(), label, ..Run::default() };
    read_device(&mut run);
    // The twins files are the variants files plus the CUDA C columns: read one kind, not both.
    let twins = files(dir, "twins_")?;
    let mut variant_files = if twins.is_empty() { files(dir, "variants_")? } else { twins };
    // `reduce --sweep` CSVs add the sizes the single-size runs do not have (GB/s against n).
    variant_files.extend(files(dir, "sweep_")?);
    for path in variant_files {
        for r in records(&path)? {
            let (Some(n), Some(time_us)) = (num(&r, "n"), num(&r, "time_us_median")) else { continue };
            let name = text(&r, "variant");
            if run.variants.iter().any(|v| v.variant == name && v.n == n as u64) {
                continue;
            }
            run.variants.push(VariantRow {
                variant: text(&r, "variant"),
                n: n as u64,
                time_us,
                gb_per_s: num(&r, "gb_per_s"),
                pct_peak: num(&r, "pct_peak"),
                clock64: num(&r, "clock64_cycles"),
            });
        }
    }
    for path in files(dir, "twins_")? {
        for r in records(&path)? {
            if let (Some(n), Some(c), Some(x)) = (num(&r, "n"), num(&r, "c_median_us"), num(&r, "x_c")) {
                run.twins.insert((text(&r, "variant"), n as u64), (c, x));
            }
        }
    }
    read_cub(&mut run)?;
    read_types(&mut run)?;
    read_scans(&mut run)?;
    read_metrics(&mut run)?;
    read_counters(&mut run)?;
    read_levels(&mut run)?;
    // Raw ncu output only where `reduce --metrics` CSVs are not there.
    let raw = if run.ncu.is_empty() { files(dir, "ncu_")? } else { Vec::new() };
    for path in raw {
        for r in records(&path)? {
            let Some(value) = num(&r, "Metric Value") else { continue };
            run.ncu.push(NcuRow {
                process: text(&r, "Process Name"),
                kernel: text(&r, "Kernel Name"),
                metric: text(&r, "Metric Name"),
                unit: text(&r, "Metric Unit"),
                value,
            });
        }
    }
    Ok(run)
}

/// `cache_levels_*.csv`: ncu's raw page, one row per kernel; every metric (a name with `__`)
/// that is a number.
fn read_levels(run: &mut Run) -> Result<()> {
    for path in files(&run.dir, "cache_levels_")? {
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        for r in records(&path)? {
            let values = r.keys().filter(|k| k.contains("__")).filter_map(|k| Some((k.clone(), num(&r, k)?))).collect();
            run.levels.insert(text(&r, "Kernel Name"), values);
        }
    }
    Ok(())
}

/// `counters/*.csv` (the agreement table's inputs, `scripts/gpu/metrics.sh`): every numeric
/// column of each variant's row (for scans, the inclusive row).
fn read_counters(run: &mut Run) -> Result<()> {
    let dir = run.dir.join("counters");
    if !dir.is_dir() {
        return Ok(());
    }
    for path in files(&dir, "")? {
        let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("");
        let source = if name.starts_with("emu_") { CounterSource::Emulator } else { CounterSource::Ncu };
        if name.starts_with("agreement") {
            continue;
        }
        for r in records(&path)? {
            let (Some(n), false) = (num(&r, "n"), r.get("kind").is_some_and(|k| k != "inclusive")) else { continue };
            let values = r.keys().filter_map(|k| Some((k.clone(), num(&r, k)?))).collect();
            run.counters.insert((source, text(&r, "variant")), (n as u64, values));
        }
    }
    Ok(())
}

/// `metrics_*.csv` (`reduce --metrics`): one row per variant, one column per metric, as rows
/// of [`NcuRow`] under each PTX symbol of the variant (the cards look metrics up by symbol).
fn read_metrics(run: &mut Run) -> Result<()> {
    const META: &[&str] = &["variant", "kind", "n", "grid", "block", "shared_bytes", "launches", "tile", "verdict"];
    for path in files(&run.dir, "metrics_")? {
        for r in records(&path)? {
            if r.get("kind").is_some_and(|k| k != "inclusive") {
                continue;
            }
            let name = text(&r, "variant");
            let symbols: Vec<&'static str> = match (crate::registry::find(&name), crate::scan::find(&name)) {
                (Ok(v), _) => v.symbols(),
                (_, Ok(s)) => s.symbols(),
                _ => continue,
            };
            for key in crate::metrics::METRICS.iter().map(|m| m.column.key).filter(|k| !META.contains(k)) {
                let Some(value) = num(&r, key) else { continue };
                let unit = if key.ends_with("_pct") {
                    "%"
                } else if key.ends_with("_us") {
                    "µs"
                } else {
                    ""
                };
                for s in &symbols {
                    run.ncu.push(NcuRow {
                        process: "reduce".into(),
                        kernel: (*s).into(),
                        metric: key.into(),
                        unit: unit.into(),
                        value,
                    });
                }
            }
        }
    }
    Ok(())
}

/// `device.txt`: the `device:` line and its `peak N GB/s`.
fn read_device(run: &mut Run) {
    let Ok(text) = std::fs::read_to_string(run.dir.join("device.txt")) else { return };
    if let Some(at) = text.find("device: ") {
        let line = text[at + 8..].lines().next().unwrap_or("");
        run.device = Some(line.to_string());
        if let Some(p) = line.find("peak ") {
            run.peak_gb_per_s = line[p + 5..].split_whitespace().next().and_then(|v| v.parse().ok());
        }
    }
}

/// `sum_vs_cub.csv`: CUB's median per n over the rounds.
fn read_cub(run: &mut Run) -> Result<()> {
    let path = run.dir.join("sum_vs_cub.csv");
    if !path.exists() {
        return Ok(());
    }
    let mut by_n: Vec<(u64, Vec<f64>)> = Vec::new();
    for r in records(&path)? {
        let (Some(n), Some(t)) = (num(&r, "n"), num(&r, "cub_median_us")) else { continue };
        match by_n.iter_mut().find(|(m, _)| *m == n as u64) {
            Some((_, v)) => v.push(t),
            None => by_n.push((n as u64, vec![t])),
        }
    }
    run.cub_reduce = by_n.into_iter().filter_map(|(n, v)| median(v).map(|t| (n, t))).collect();
    run.cub_reduce.sort_by_key(|(n, _)| *n);
    Ok(())
}

/// `types_vs_cub.csv` (`measure.sh types_vs_cub`), where the run has one.
fn read_types(run: &mut Run) -> Result<()> {
    let path = run.dir.join("types_vs_cub.csv");
    if !path.exists() {
        return Ok(());
    }
    for r in records(&path)? {
        let (Some(n), Some(time_us)) = (num(&r, "n"), num(&r, "time_us_median")) else { continue };
        run.types.push(TypeRow {
            ty: text(&r, "type"),
            op: text(&r, "combine"),
            n: n as u64,
            time_us,
            gb_per_s: num(&r, "gb_per_s"),
            cub_us: num(&r, "cub_median_us"),
            x_cub: num(&r, "x_cub"),
            verdict: text(&r, "verdict"),
        });
    }
    Ok(())
}

/// `scans.csv`.
fn read_scans(run: &mut Run) -> Result<()> {
    // scans.csv, and copy*.csv: scan runs whose `d2d_copy` rows give the measured copy ceiling.
    let mut paths = files(&run.dir, "copy")?;
    paths.insert(0, run.dir.join("scans.csv"));
    for path in paths.into_iter().filter(|p| p.exists()) {
        read_scan_file(run, &path)?;
    }
    Ok(())
}

fn read_scan_file(run: &mut Run, path: &Path) -> Result<()> {
    for r in records(path)? {
        let (Some(n), Some(time_us)) = (num(&r, "n"), num(&r, "time_us_median")) else { continue };
        run.scans.push(ScanRow {
            variant: text(&r, "variant"),
            kind: text(&r, "kind"),
            n: n as u64,
            time_us,
            gb_per_s: num(&r, "gb_per_s_rw"),
            pct_peak: num(&r, "pct_peak"),
            x_cub: num(&r, "speedup_vs_cub"),
        });
    }
    Ok(())
}
