//! The scan rows of the `reduce` command line (`reduce --op scan`): every selected scan
//! variant × inclusive/exclusive, checked element by element against the CPU scan, timed,
//! printed as a table, CSV or JSON (the same formats as the reduction rows).

use std::fmt::Write as _;
use std::io::Write;

use super::{Kind, ScanMeasurement, ScanVariant, all, curriculum, find, measure};
use crate::backend::{Backend, BackendKind, DeviceInfo};
use crate::input::Input;
use crate::report::{Format, json_str};
use crate::{Error, Result};

/// `writeln!` that ignores a closed pipe.
macro_rules! outln {
    ($out:expr, $($t:tt)*) => {{
        let _ = writeln!($out, $($t)*);
    }};
}

/// What `reduce --op scan` was asked for (the CLI's own options, parsed there).
#[derive(Clone, Debug)]
pub struct Options {
    /// `--n`.
    pub n: Option<u64>,
    /// `--log2`.
    pub log2: Option<u32>,
    /// `--variant`: a scan variant, `all` (the curriculum: bit, blelloch, lookback) or
    /// `tuning` (lookback and every tuning shape of it).
    pub variant: String,
    /// `--seed`.
    pub seed: u64,
    /// `--repeat`.
    pub repeat: Option<u32>,
    /// `--format`.
    pub format: Format,
    /// `--backend`.
    pub backend: BackendKind,
    /// `--list`.
    pub list: bool,
    /// `--compare-cub`: time CUB's `DeviceScan::InclusiveSum` in the same run (needs nvcc).
    pub compare_cub: bool,
}

/// What happened to one (variant, kind).
#[derive(Clone, Debug)]
pub enum ScanRow {
    /// It ran; the measurement says whether it passed.
    Ran(ScanMeasurement),
    /// Not run, for the reason given.
    Skipped {
        /// Variant.
        variant: &'static str,
        /// Kind.
        kind: Kind,
        /// Why.
        reason: String,
    },
    /// It failed to run.
    Failed {
        /// Variant.
        variant: &'static str,
        /// Kind.
        kind: Kind,
        /// The error.
        error: String,
    },
}

impl ScanRow {
    /// Wrong result or error?
    pub fn failed(&self) -> bool {
        match self {
            ScanRow::Ran(m) => !m.pass(),
            ScanRow::Skipped { .. } => false,
            ScanRow::Failed { .. } => true,
        }
    }

    fn verdict(&self) -> String {
        match self {
            ScanRow::Ran(m) => match m.mismatch {
                None => "PASS".into(),
                Some((i, e, g)) => format!("FAIL (index {i}: expected {}, got {})", show(e), show(g)),
            },
            ScanRow::Skipped { reason, .. } => format!("SKIP ({reason})"),
            ScanRow::Failed { error, .. } => format!("ERROR ({error})"),
        }
    }
}

fn show(v: Option<i32>) -> String {
    v.map_or("nothing".into(), |v| v.to_string())
}

/// CUB's time for the same `n`, when `--compare-cub` could get one.
#[derive(Clone, Debug)]
pub enum CubRow {
    /// Not asked for.
    NotAsked,
    /// Median time in µs.
    Timed(f64),
    /// Asked for but unavailable (why).
    Unavailable(String),
}

impl CubRow {
    fn median_us(&self) -> Option<f64> {
        match self {
            CubRow::Timed(t) => Some(*t),
            _ => None,
        }
    }
}

fn selected(name: &str) -> Result<Vec<&'static ScanVariant>> {
    Ok(match name {
        "all" => curriculum().collect(),
        "tuning" => all().filter(|v| v.name.starts_with("lookback")).collect(),
        name => vec![find(name)?],
    })
}

const WIDTHS: [usize; 9] = [16, 9, 8, 14, 11, 9, 7, 8, 0];
const HEADERS: [&str; 9] =
    ["variant", "kind", "launches", "grid×block", "time (µs)", "GB/s r+w", "% peak", "vs CUB", "verdict"];

fn line(cells: &[String]) -> String {
    let mut s = String::new();
    for (c, w) in cells.iter().zip(WIDTHS) {
        let _ = write!(s, "{c:<w$}  ");
    }
    s.trim_end().to_string()
}

/// The scan table's header line.
pub fn table_header() -> String {
    line(&HEADERS.map(String::from))
}

fn ratio(cub: &CubRow, m: &ScanMeasurement) -> Option<f64> {
    // CUB's InclusiveSum is the reference for inclusive rows only.
    (m.kind == Kind::Inclusive).then(|| cub.median_us().map(|c| c / m.median_us())).flatten()
}

/// One table line.
pub fn table_row(row: &ScanRow, device: &DeviceInfo, cub: &CubRow) -> String {
    let dash = || "—".to_string();
    match row {
        ScanRow::Ran(m) => {
            let bw = m.bytes_per_second();
            line(&[
                m.variant.to_string(),
                m.kind.name().to_string(),
                m.geometry.launches.to_string(),
                format!("{}×{}", m.geometry.grid, m.geometry.block),
                format!("{:.2}", m.median_us()),
                format!("{:.1}", bw / 1e9),
                device.peak_bandwidth.map_or_else(dash, |p| format!("{:.1}", 100.0 * bw / p)),
                ratio(cub, m).map_or_else(dash, |r| format!("{r:.2}×")),
                row.verdict(),
            ])
        }
        ScanRow::Skipped { variant, kind, .. } | ScanRow::Failed { variant, kind, .. } => line(&[
            variant.to_string(),
            kind.name().to_string(),
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
            row.verdict(),
        ]),
    }
}

/// The table line of CUB's own row.
pub fn table_cub_row(n: usize, device: &DeviceInfo, cub: &CubRow) -> Option<String> {
    let dash = || "—".to_string();
    match cub {
        CubRow::NotAsked => None,
        CubRow::Timed(t) => {
            let bw = n as f64 * 8.0 / (t * 1e-6);
            Some(line(&[
                "cub".into(),
                "inclusive".into(),
                dash(),
                dash(),
                format!("{t:.2}"),
                format!("{:.1}", bw / 1e9),
                device.peak_bandwidth.map_or_else(dash, |p| format!("{:.1}", 100.0 * bw / p)),
                "1.00×".into(),
                "reference (cub::DeviceScan::InclusiveSum, nvcc)".into(),
            ]))
        }
        CubRow::Unavailable(why) => {
            Some(line(&["cub".into(), "inclusive".into(), dash(), dash(), dash(), dash(), dash(), dash(), {
                format!("SKIP ({why})")
            }]))
        }
    }
}

/// CSV header line.
pub fn csv_header() -> &'static str {
    "variant,kind,n,launches,grid,block,tile,time_us_median,time_us_min,gb_per_s_rw,pct_peak,cub_time_us,speedup_vs_cub,verdict"
}

/// One CSV line.
pub fn csv_row(row: &ScanRow, device: &DeviceInfo, cub: &CubRow) -> String {
    match row {
        ScanRow::Ran(m) => {
            let bw = m.bytes_per_second();
            let min = m.times_us.iter().copied().fold(f64::INFINITY, f64::min);
            format!(
                "{},{},{},{},{},{},{},{:.3},{:.3},{:.2},{},{},{},{}",
                m.variant,
                m.kind.name(),
                m.n,
                m.geometry.launches,
                m.geometry.grid,
                m.geometry.block,
                m.geometry.tile,
                m.median_us(),
                min,
                bw / 1e9,
                device.peak_bandwidth.map_or(String::new(), |p| format!("{:.2}", 100.0 * bw / p)),
                cub.median_us().map_or(String::new(), |t| format!("{t:.3}")),
                ratio(cub, m).map_or(String::new(), |r| format!("{r:.3}")),
                if m.pass() { "PASS".to_string() } else { row.verdict().replace(',', ";") }
            )
        }
        ScanRow::Skipped { variant, kind, reason } => {
            format!("{variant},{kind},,,,,,,,,,,,SKIP: {}", reason.replace(',', ";"))
        }
        ScanRow::Failed { variant, kind, error } => {
            format!("{variant},{kind},,,,,,,,,,,,ERROR: {}", error.replace(',', ";"))
        }
    }
}

/// The CSV line of CUB's own row (when it was timed).
pub fn csv_cub_row(n: usize, cub: &CubRow) -> Option<String> {
    match cub {
        CubRow::Timed(t) => Some(format!(
            "cub,inclusive,{n},,,,,{t:.3},,{:.2},,{t:.3},1.000,REFERENCE",
            n as f64 * 8.0 / (t * 1e-6) / 1e9
        )),
        CubRow::Unavailable(why) => Some(format!("cub,inclusive,{n},,,,,,,,,,,SKIP: {}", why.replace(',', ";"))),
        CubRow::NotAsked => None,
    }
}

/// The whole scan report as one JSON document.
pub fn json(device: &DeviceInfo, backend: &str, n: usize, rows: &[ScanRow], cub: &CubRow) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"op\":\"scan\",\"device\":{},\"backend\":{},\"is_gpu\":{},\"compute_capability\":\"{}.{}\",\"peak_bandwidth_bytes_per_s\":{},\"n\":{n},",
        json_str(&device.name),
        json_str(backend),
        device.is_gpu,
        device.compute_capability.0,
        device.compute_capability.1,
        device.peak_bandwidth.map_or("null".to_string(), |p| format!("{p:.0}")),
    );
    let _ = match cub {
        CubRow::NotAsked => write!(s, "\"cub\":null,"),
        CubRow::Timed(t) => write!(s, "\"cub\":{{\"op\":\"InclusiveSum\",\"median_us\":{t:.3}}},"),
        CubRow::Unavailable(why) => write!(s, "\"cub\":{{\"op\":\"InclusiveSum\",\"unavailable\":{}}},", json_str(why)),
    };
    s.push_str("\"rows\":[");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match row {
            ScanRow::Ran(m) => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"kind\":\"{}\",\"n\":{},\"launches\":{},\"grid\":{},\"block\":{},\"tile\":{},\"times_us\":[{}],\"median_us\":{:.3},\"bytes_per_s_rw\":{:.0},\"speedup_vs_cub\":{},\"last\":{},\"verdict\":{}}}",
                    json_str(m.variant),
                    m.kind,
                    m.n,
                    m.geometry.launches,
                    m.geometry.grid,
                    m.geometry.block,
                    m.geometry.tile,
                    m.times_us.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(","),
                    m.median_us(),
                    m.bytes_per_second(),
                    ratio(cub, m).map_or("null".to_string(), |r| format!("{r:.3}")),
                    m.last.map_or("null".to_string(), |v| v.to_string()),
                    json_str(&row.verdict()),
                );
            }
            ScanRow::Skipped { variant, kind, reason } => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"kind\":\"{kind}\",\"verdict\":\"SKIP\",\"reason\":{}}}",
                    json_str(variant),
                    json_str(reason)
                );
            }
            ScanRow::Failed { variant, kind, error } => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"kind\":\"{kind}\",\"verdict\":\"ERROR\",\"error\":{}}}",
                    json_str(variant),
                    json_str(error)
                );
            }
        }
    }
    s.push_str("]}");
    s
}

/// CUB's `DeviceScan::InclusiveSum` timing for `n` elements, when asked.
fn time_cub(asked: bool, backend: &Backend, n: usize, repeat: u32) -> CubRow {
    if !asked {
        return CubRow::NotAsked;
    }
    if !backend.is_gpu() {
        return CubRow::Unavailable("CUB runs on a GPU only".into());
    }
    cub_inclusive_sum(n, repeat)
}

fn cub_inclusive_sum(n: usize, repeat: u32) -> CubRow {
    match crate::cub::time(crate::cub::CubOp::InclusiveSum, n, repeat) {
        Ok(t) => CubRow::Timed(t.median_us),
        Err(e) => CubRow::Unavailable(e.to_string()),
    }
}

/// Runs `reduce --op scan`: prints the rows, returns whether every row passed.
pub fn run(opts: &Options, out: &mut dyn Write) -> Result<bool> {
    let variants = selected(&opts.variant)?;
    if opts.list {
        for v in all() {
            outln!(out, "{:<18} {:<7} {}", v.name, if v.tuning { "tuning" } else { "scan" }, v.concept);
        }
        return Ok(true);
    }
    let (backend, no_gpu) = Backend::select(opts.backend)?;
    let n: u64 = match (opts.n, opts.log2) {
        (Some(n), _) => n,
        (None, Some(k)) => 1u64 << k,
        (None, None) if backend.is_gpu() => 1 << 24,
        (None, None) => 1 << 20,
    };
    if n == 0 || n > u32::MAX as u64 {
        return Err(Error::Invalid(format!("n = {n}; n must be in 1..={}", u32::MAX)));
    }
    let n = n as usize;
    let repeat = opts.repeat.unwrap_or(if backend.is_gpu() { 20 } else { 3 });
    if repeat == 0 {
        return Err(Error::Invalid("--repeat 0: at least one timed run is needed".into()));
    }
    let info = backend.info().clone();
    let format = opts.format;
    let human = format == Format::Table;
    if human {
        outln!(out, "device: {info}");
        if !backend.is_gpu() {
            match &no_gpu {
                Some(cause) => outln!(out, "EMULATOR RESULTS ({cause}); times are CPU times, not GPU times"),
                None => outln!(out, "EMULATOR RESULTS — times are CPU times, not GPU times"),
            }
        }
        eprint!("generating {n} inputs (seed {}) and the CPU scans… ", opts.seed);
    }
    let input = Input::full_range(n, opts.seed);
    let expected: Vec<(Kind, Vec<i32>)> = Kind::ALL.iter().map(|&k| (k, k.reference(&input.data))).collect();
    let buffer = backend.upload(&input.data)?;
    drop(input);
    let cub = time_cub(opts.compare_cub, &backend, n, repeat);
    if human {
        eprintln!("done");
        outln!(
            out,
            "scan of n = {n} i32 ({:.1} MiB), median of {repeat} timed runs; time = all launches of a run \
             (CUDA events{}); GB/s counts each element read once and written once (8 bytes); every output \
             element is compared with the CPU scan; each variant has its own block size (--block is not used)",
            n as f64 * 4.0 / (1 << 20) as f64,
            if backend.is_gpu() { "" } else { ": here, wall clock" },
        );
        outln!(out, "{}", table_header());
    } else if format == Format::Csv {
        outln!(out, "{}", csv_header());
    }

    let mut rows = Vec::new();
    for v in variants {
        for (kind, reference) in &expected {
            let kind = *kind;
            let need = 8 * n as u64 + v.scratch_bytes(n);
            let row = if backend.is_gpu() && need > info.memory_bytes {
                ScanRow::Skipped {
                    variant: v.name,
                    kind,
                    reason: format!(
                        "needs {:.1} GiB of device memory; the device has {:.1} GiB",
                        need as f64 / (1u64 << 30) as f64,
                        info.memory_bytes as f64 / (1u64 << 30) as f64
                    ),
                }
            } else {
                match measure(&backend, v, kind, &buffer, n, repeat, reference) {
                    Ok(m) => ScanRow::Ran(m),
                    Err(e @ Error::Unsupported(_)) => ScanRow::Skipped { variant: v.name, kind, reason: e.to_string() },
                    Err(e) => ScanRow::Failed { variant: v.name, kind, error: e.to_string() },
                }
            };
            match format {
                Format::Table => outln!(out, "{}", table_row(&row, &info, &cub)),
                Format::Csv => outln!(out, "{}", csv_row(&row, &info, &cub)),
                Format::Json => {}
            }
            let _ = out.flush();
            rows.push(row);
        }
    }
    match format {
        Format::Table => {
            if let Some(l) = table_cub_row(n, &info, &cub) {
                outln!(out, "{l}");
            }
        }
        Format::Csv => {
            if let Some(l) = csv_cub_row(n, &cub) {
                outln!(out, "{l}");
            }
        }
        Format::Json => {
            let backend_name = if backend.is_gpu() { "gpu" } else { "emulator" };
            outln!(out, "{}", json(&info, backend_name, n, &rows, &cub));
        }
    }
    let failed = rows.iter().filter(|r| r.failed()).count();
    if human && failed > 0 {
        outln!(out, "{failed} scan row(s) failed");
    }
    Ok(failed == 0)
}
