//! The plan's per-device table (`plan_by_device.csv`, beside this file): which `i32`-sum scan
//! variant runs on which GPU from which size on. A sweep on each GPU
//! (`scripts/gpu/warpspec_sweep.sh`) times `lookback`, every shape of `lookback_warpspec` and a
//! device-to-device copy; its fastest scan per size becomes that GPU's rows. A device no row names
//! takes the `*` rows (the rule for unknown devices), as does a device older than a row's
//! variant needs.

use super::registry::{ScanInstance, ScanVariant, fastest, find};
use crate::backend::DeviceInfo;
use crate::error::{Error, Result};
use crate::types::{Elem, Op, Value};

/// The table, as committed.
const TABLE: &str = include_str!("plan_by_device.csv");

/// One row of the table.
#[derive(Clone, Debug)]
pub struct DeviceRow {
    /// A part of the device's name (`H100`), or `*` for every other device.
    pub device: String,
    /// The smallest `n` the row covers.
    pub size_from: usize,
    /// The scan variant it runs.
    pub variant: &'static ScanVariant,
    /// The measurement that chose it (empty: not measured).
    pub source: String,
}

/// The rows of `text` (the table's format: `#` comments, a header, then
/// `device,size_from,variant,source`), or a one-line error naming the line.
pub fn parse(text: &str) -> Result<Vec<DeviceRow>> {
    let mut rows: Vec<DeviceRow> = Vec::new();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, "device,size_from,variant,source")) => {}
        other => {
            return Err(Error::Invalid(format!(
                "the scan plan's device table starts with the header `device,size_from,variant,source`, not {:?}",
                other.map(|(_, l)| l)
            )));
        }
    }
    for (i, line) in lines {
        let bad = |why: String| Error::Invalid(format!("the scan plan's device table, line {}: {why}", i + 1));
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let [device, size_from, variant, source] = fields[..] else {
            return Err(bad(format!("`{line}` has {} fields; a row has 4", fields.len())));
        };
        if device.is_empty() {
            return Err(bad("an empty device; name a part of the GPU's name, or * for the others".into()));
        }
        let size_from =
            size_from.parse::<usize>().map_err(|_| bad(format!("size_from `{size_from}` is not a size")))?;
        let variant = find(variant).map_err(|e| bad(e.to_string()))?;
        if !variant.supports(Elem::I32, Op::Sum) {
            return Err(bad(format!("`{}` does not scan i32 sums", variant.name)));
        }
        match rows.last() {
            Some(last) if last.device == device && last.size_from >= size_from => {
                return Err(bad(format!("size_from {size_from} after {}: a device's rows go up", last.size_from)));
            }
            Some(last) if last.device != device && rows.iter().any(|r| r.device == device) => {
                return Err(bad(format!("the rows of `{device}` are not together")));
            }
            _ if size_from != 1 && rows.last().is_none_or(|r| r.device != device) => {
                return Err(bad(format!(
                    "the first row of `{device}` starts at size_from {size_from}; it starts at 1"
                )));
            }
            _ => {}
        }
        rows.push(DeviceRow { device: device.into(), size_from, variant, source: source.into() });
    }
    if !rows.iter().any(|r| r.device == "*") {
        return Err(Error::Invalid("the scan plan's device table has no `*` rows (the rule for other devices)".into()));
    }
    Ok(rows)
}

/// The committed table.
pub fn table() -> Result<Vec<DeviceRow>> {
    parse(TABLE)
}

/// The variant the table gives the device called `device` (compute capability `cc`) for `n`
/// elements: the row of the first device group whose name is part of `device`'s (else the `*`
/// rows) with the largest `size_from` ≤ `n`. A group whose row needs a newer GPU than `cc` is
/// passed over for the next matching group (finally `*`).
pub fn variant_for(rows: &[DeviceRow], device: &str, cc: (u32, u32), n: usize) -> Option<&'static ScanVariant> {
    let mut groups: Vec<&str> = Vec::new();
    for r in rows {
        if !groups.contains(&r.device.as_str()) && (r.device == "*" || device.contains(&r.device)) {
            groups.push(&r.device);
        }
    }
    groups.sort_by_key(|g| *g == "*");
    groups.into_iter().find_map(|g| {
        let row = rows.iter().rev().find(|r| r.device == g && r.size_from <= n.max(1))?;
        (cc >= row.variant.min_cc).then_some(row.variant)
    })
}

/// The `i32`-sum scan variant for `n` elements on `device`: the plan's per-device table
/// (`host/src/scan/plan_by_device.csv`, this module), by the device's name
/// and the size, with the `*` rows for a device it does not name; [`fastest`] should the table
/// have no row (its unit tests keep that from happening).
pub fn fastest_on(device: &DeviceInfo, n: usize) -> &'static ScanVariant {
    let cc = device.compute_capability;
    // Parsed once per process: every `Scanner::enqueue` asks.
    static ROWS: std::sync::OnceLock<Vec<DeviceRow>> = std::sync::OnceLock::new();
    let rows = ROWS.get_or_init(|| table().unwrap_or_default());
    variant_for(rows, &device.name, cc, n).unwrap_or_else(|| fastest(cc))
}

/// **The library's plan**: the row a [`Scanner`](super::Scanner)`::<T, O>` runs on `device` for
/// `n` elements: [`fastest_on`] for `i32` sums (by device and size), `lookback`'s row of the pair
/// for every other.
pub fn choose_on<T: Value>(op: Op, device: &DeviceInfo, n: usize) -> Result<ScanInstance<T>> {
    let v = if (T::ELEM, op) == (Elem::I32, Op::Sum) { fastest_on(device, n) } else { find("lookback")? };
    v.instance::<T>(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_reads_and_covers_every_device() {
        let rows = table().unwrap();
        for (name, cc) in [("NVIDIA H100 80GB HBM3", (9, 0)), ("NVIDIA H200", (9, 0)), ("Tesla V100", (7, 0))] {
            for n in [1, 1 << 16, 1 << 20, 1 << 28] {
                let v = variant_for(&rows, name, cc, n).expect("every device and size has a row");
                assert!(cc >= v.min_cc, "{name}, n = {n}: {} needs {:?}", v.name, v.min_cc);
            }
        }
        assert_eq!(variant_for(&rows, "CPU emulator", (9, 0), 10).map(|v| v.name), Some("lookback"));
    }

    #[test]
    fn sizes_devices_and_the_fallback() {
        let text = "# c\ndevice,size_from,variant,source\nH100,1,lookback,\nH100,1048576,lookback_warpspec,x.csv\n\
                    *,1,lookback,\n";
        let rows = parse(text).unwrap();
        let h100 = "NVIDIA H100 80GB HBM3";
        assert_eq!(variant_for(&rows, h100, (9, 0), 1_048_575).unwrap().name, "lookback");
        assert_eq!(variant_for(&rows, h100, (9, 0), 1 << 20).unwrap().name, "lookback_warpspec");
        assert_eq!(variant_for(&rows, h100, (9, 0), 1 << 28).unwrap().name, "lookback_warpspec");
        assert_eq!(variant_for(&rows, "NVIDIA H200", (9, 0), 1 << 28).unwrap().name, "lookback");
        // A device that matches but is too old for the row's variant takes the * rows.
        assert_eq!(variant_for(&rows, "H100 (pretend sm_80)", (8, 0), 1 << 28).unwrap().name, "lookback");
    }

    #[test]
    fn a_bad_table_says_which_line() {
        let head = "device,size_from,variant,source\n";
        for (body, what) in [
            ("H100,1,nope,\n*,1,lookback,\n", "line 2"),
            ("H100,2,lookback,\n*,1,lookback,\n", "starts at 1"),
            ("H100,1,lookback,\nH100,1,lookback,\n*,1,lookback,\n", "go up"),
            ("H100,1,lookback,\n*,1,lookback,\nH100,9,lookback,\n", "not together"),
            ("H100,1,lookback\n", "4"),
            ("H100,1,lookback,\n", "`*` rows"),
            ("H100,x,lookback,\n*,1,lookback,\n", "not a size"),
        ] {
            let e = parse(&format!("{head}{body}")).unwrap_err().to_string();
            assert!(e.contains(what), "{body:?}: {e}");
        }
        assert!(parse("nope\n").unwrap_err().to_string().contains("header"));
    }
}
