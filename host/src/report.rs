//! The report the CLI prints: one row per variant, as an aligned table, CSV or JSON.

use std::fmt::Write as _;

use crate::backend::DeviceInfo;
use crate::reduce::Measurement;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON document.
    Json,
}

/// What happened to one variant.
#[derive(Clone, Debug)]
pub enum Row {
    /// It ran; the measurement says whether it passed.
    Ran(Measurement),
    /// It was not run, for the reason given (e.g. the block size is not allowed for it).
    Skipped {
        /// Variant name.
        variant: &'static str,
        /// Why.
        reason: String,
    },
    /// It failed to run.
    Failed {
        /// Variant name.
        variant: &'static str,
        /// The error.
        error: String,
    },
}

impl Row {
    /// Did this row fail (wrong sum or error)?
    pub fn failed(&self) -> bool {
        match self {
            Row::Ran(m) => !m.pass(),
            Row::Skipped { .. } => false,
            Row::Failed { .. } => true,
        }
    }

    fn verdict(&self) -> String {
        match self {
            Row::Ran(m) if m.pass() => "PASS".into(),
            Row::Ran(m) => format!("FAIL (expected {}, got {})", m.expected.wrapped, m.sum),
            Row::Skipped { reason, .. } => format!("SKIP ({reason})"),
            Row::Failed { error, .. } => format!("ERROR ({error})"),
        }
    }
}

/// Column widths of the table.
const WIDTHS: [usize; 8] = [24, 14, 11, 9, 8, 12, 12, 0];
const HEADERS: [&str; 8] = ["variant", "grid×block", "time (µs)", "GB/s", "% peak", "clock64 Δ", "sum", "verdict"];

/// The table's header line.
pub fn table_header() -> String {
    let mut s = String::new();
    for (h, w) in HEADERS.iter().zip(WIDTHS) {
        let _ = write!(s, "{h:<w$}  ");
    }
    s.trim_end().to_string()
}

fn cells(row: &Row, device: &DeviceInfo) -> [String; 8] {
    match row {
        Row::Ran(m) => {
            let bw = m.bytes_per_second();
            let peak = device.peak_bandwidth.map_or("—".to_string(), |p| format!("{:.1}", 100.0 * bw / p));
            [
                m.variant.to_string(),
                format!("{}×{}", m.geometry.grid, m.geometry.block),
                format!("{:.2}", m.median_us()),
                format!("{:.1}", bw / 1e9),
                peak,
                m.cycles.map_or("—".to_string(), |c| c.to_string()),
                m.sum.to_string(),
                row.verdict(),
            ]
        }
        Row::Skipped { variant, .. } | Row::Failed { variant, .. } => {
            [variant.to_string(), "—".into(), "—".into(), "—".into(), "—".into(), "—".into(), "—".into(), row.verdict()]
        }
    }
}

/// One table line.
pub fn table_row(row: &Row, device: &DeviceInfo) -> String {
    let mut s = String::new();
    for (c, w) in cells(row, device).iter().zip(WIDTHS) {
        let _ = write!(s, "{c:<w$}  ");
    }
    s.trim_end().to_string()
}

/// Width of the `× CUB` column.
const CUB_WIDTH: usize = 7;

/// Our throughput over CUB's at the same `n`: CUB's median time over ours (> 1: faster than
/// CUB). `None` for rows that did not run.
pub fn cub_ratio(row: &Row, cub_median_us: f64) -> Option<f64> {
    match row {
        Row::Ran(m) => Some(cub_median_us / m.median_us()),
        _ => None,
    }
}

/// [`table_header`] with a `× CUB` column before the verdict.
pub fn table_header_with_cub() -> String {
    let mut s = String::new();
    for (i, (h, w)) in HEADERS.iter().zip(WIDTHS).enumerate() {
        if i == HEADERS.len() - 1 {
            let _ = write!(s, "{:<CUB_WIDTH$}  ", "× CUB");
        }
        let _ = write!(s, "{h:<w$}  ");
    }
    s.trim_end().to_string()
}

/// [`table_row`] with the `× CUB` cell ([`cub_ratio`]) before the verdict.
pub fn table_row_with_cub(row: &Row, device: &DeviceInfo, cub_median_us: f64) -> String {
    let ratio = cub_ratio(row, cub_median_us).map_or("—".to_string(), |r| format!("{r:.2}"));
    let cells = cells(row, device);
    let mut s = String::new();
    for (i, (c, w)) in cells.iter().zip(WIDTHS).enumerate() {
        if i == cells.len() - 1 {
            let _ = write!(s, "{ratio:<CUB_WIDTH$}  ");
        }
        let _ = write!(s, "{c:<w$}  ");
    }
    s.trim_end().to_string()
}

/// CSV header line.
pub fn csv_header() -> &'static str {
    "variant,n,grid,block,shared_bytes,time_us_median,time_us_min,gb_per_s,pct_peak,clock64_cycles,sum,expected,widened_sum,verdict"
}

/// [`csv_header`] plus CUB's median time at the same `n` and [`cub_ratio`].
pub fn csv_header_with_cub() -> String {
    format!("{},cub_median_us,x_cub", csv_header())
}

/// [`csv_row`] plus CUB's median time and [`cub_ratio`] (empty for rows that did not run).
pub fn csv_row_with_cub(row: &Row, device: &DeviceInfo, cub_median_us: f64) -> String {
    let ratio = cub_ratio(row, cub_median_us).map_or(String::new(), |r| format!("{r:.4}"));
    format!("{},{cub_median_us:.3},{ratio}", csv_row(row, device))
}

/// One CSV line.
pub fn csv_row(row: &Row, device: &DeviceInfo) -> String {
    match row {
        Row::Ran(m) => {
            let bw = m.bytes_per_second();
            let min = m.times_us.iter().copied().fold(f64::INFINITY, f64::min);
            format!(
                "{},{},{},{},{},{:.3},{:.3},{:.2},{},{},{},{},{},{}",
                m.variant,
                m.n,
                m.geometry.grid,
                m.geometry.block,
                m.geometry.shared_bytes,
                m.median_us(),
                min,
                bw / 1e9,
                device.peak_bandwidth.map_or(String::new(), |p| format!("{:.2}", 100.0 * bw / p)),
                m.cycles.map_or(String::new(), |c| c.to_string()),
                m.sum,
                m.expected.wrapped,
                m.expected.widened,
                if m.pass() { "PASS" } else { "FAIL" }
            )
        }
        Row::Skipped { variant, reason } => {
            format!("{variant},,,,,,,,,,,,,SKIP: {}", reason.replace(',', ";"))
        }
        Row::Failed { variant, error } => {
            format!("{variant},,,,,,,,,,,,,ERROR: {}", error.replace(',', ";"))
        }
    }
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The whole report as one JSON document.
pub fn json(device: &DeviceInfo, backend: &str, n: usize, block: u32, rows: &[Row]) -> String {
    json_with_cub(device, backend, n, block, rows, None)
}

/// [`json`], plus `"cub_median_us"` at the top and `"x_cub"` ([`cub_ratio`]) in every row that
/// ran, when CUB was timed at the same `n`.
pub fn json_with_cub(
    device: &DeviceInfo,
    backend: &str,
    n: usize,
    block: u32,
    rows: &[Row],
    cub_median_us: Option<f64>,
) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"device\":{},\"backend\":{},\"is_gpu\":{},\"compute_capability\":\"{}.{}\",\"peak_bandwidth_bytes_per_s\":{},\"n\":{n},\"block\":{block},\"rows\":[",
        json_str(&device.name),
        json_str(backend),
        device.is_gpu,
        device.compute_capability.0,
        device.compute_capability.1,
        device.peak_bandwidth.map_or("null".to_string(), |p| format!("{p:.0}")),
    );
    if let Some(c) = cub_median_us {
        // Spliced in before "rows": the key order of the plain report is unchanged.
        s.insert_str(s.len() - "\"rows\":[".len(), &format!("\"cub_median_us\":{c:.3},"));
    }
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        match row {
            Row::Ran(m) => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"n\":{},\"grid\":{},\"block\":{},\"shared_bytes\":{},\"times_us\":[{}],\"median_us\":{:.3},\"bytes_per_s\":{:.0},\"clock64_cycles\":{},\"sum\":{},\"expected\":{},\"widened_sum\":{},\"verdict\":\"{}\"}}",
                    json_str(m.variant),
                    m.n,
                    m.geometry.grid,
                    m.geometry.block,
                    m.geometry.shared_bytes,
                    m.times_us.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(","),
                    m.median_us(),
                    m.bytes_per_second(),
                    m.cycles.map_or("null".to_string(), |c| c.to_string()),
                    m.sum,
                    m.expected.wrapped,
                    m.expected.widened,
                    if m.pass() { "PASS" } else { "FAIL" }
                );
                if let Some(r) = cub_median_us.and_then(|c| cub_ratio(row, c)) {
                    s.insert_str(s.len() - 1, &format!(",\"x_cub\":{r:.4}"));
                }
            }
            Row::Skipped { variant, reason } => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"verdict\":\"SKIP\",\"reason\":{}}}",
                    json_str(variant),
                    json_str(reason)
                );
            }
            Row::Failed { variant, error } => {
                let _ = write!(
                    s,
                    "{{\"variant\":{},\"verdict\":\"ERROR\",\"error\":{}}}",
                    json_str(variant),
                    json_str(error)
                );
            }
        }
    }
    s.push_str("]}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn cub_column_is_cub_time_over_ours() {
        use crate::cpu::Reference;
        use crate::reduce::{Geometry, Measurement};
        let m = Measurement {
            variant: "single_pass",
            n: 1 << 20,
            geometry: Geometry { grid: 4, block: 256, dynamic_shared: 0, shared_bytes: 144, outputs: 1 },
            times_us: vec![4.0, 5.0, 6.0],
            sum: 7,
            expected: Reference { wrapped: 7, widened: 7 },
            cycles: None,
        };
        let device = crate::Backend::emulator().info().clone();
        let row = Row::Ran(m);
        assert_eq!(cub_ratio(&row, 10.0), Some(2.0));
        let line = table_row_with_cub(&row, &device, 10.0);
        assert!(line.contains("2.00") && line.ends_with("PASS"), "{line}");
        let header = table_header_with_cub();
        assert!(header.contains("sum") && header.ends_with("× CUB    verdict"), "{header}");
        assert!(csv_row_with_cub(&row, &device, 10.0).ends_with(",PASS,10.000,2.0000"));
        let skipped = Row::Skipped { variant: "redux", reason: "old GPU".into() };
        assert_eq!(cub_ratio(&skipped, 10.0), None);
        // Every CSV line has the header's columns, the verdict in the verdict column.
        let columns = csv_header().split(',').count();
        let line = csv_row(&skipped, &device);
        assert_eq!(line.split(',').count(), columns, "{line}");
        assert_eq!(line.split(',').nth(columns - 1), Some("SKIP: old GPU"));
        let failed = Row::Failed { variant: "redux", error: "boom".into() };
        assert_eq!(csv_row(&failed, &device).split(',').count(), columns);
        assert_eq!(
            csv_row_with_cub(&skipped, &device, 10.0).split(',').count(),
            csv_header_with_cub().split(',').count()
        );
        let j = json_with_cub(&device, "gpu", 1 << 20, 256, &[row], Some(10.0));
        assert!(j.contains("\"cub_median_us\":10.000,\"rows\":[") && j.contains(",\"x_cub\":2.0000}"), "{j}");
    }
}
