//! The plan's per-device table (`plan_by_device.csv`, beside this file): which scan variant
//! runs on which GPU, for which element type, from which size on. A sweep on each GPU
//! (`scripts/gpu/warpspec_sweep.sh`, with `TYPE` for the other element types) times `lookback`,
//! the shapes of `lookback_warpspec` and a device-to-device copy; its fastest scan per size
//! becomes that GPU's rows for that type. A device no row names takes the `*` rows (the rule for
//! unknown devices), as does a device older than a row's variant needs; a type no row of the
//! device names takes the device's `*` type rows, if any.

use super::registry::{ScanInstance, ScanVariant, fastest, find};
use crate::backend::DeviceInfo;
use crate::error::{Error, Result};
use crate::types::{Elem, Op, Value};

/// The table, as committed.
const TABLE: &str = include_str!("plan_by_device.csv");

/// The table's header.
const HEADER: &str = "device,type,size_from,variant,source";

/// One row of the table.
#[derive(Clone, Debug)]
pub struct DeviceRow {
    /// A part of the device's name (`H100`), or `*` for every other device.
    pub device: String,
    /// The element type the row is for, or `None` (`*`) for every type the device's rows do
    /// not name. The operator does not enter: sum, min and max move the same bytes.
    pub elem: Option<Elem>,
    /// The smallest `n` the row covers.
    pub size_from: usize,
    /// The scan variant it runs.
    pub variant: &'static ScanVariant,
    /// The measurement that chose it (empty: not measured).
    pub source: String,
}

impl DeviceRow {
    /// The row's group: device and type (`*` for every type).
    fn group(&self) -> (&str, Option<Elem>) {
        (&self.device, self.elem)
    }
}

/// The rows of `text` (the table's format: `#` comments, a header, then
/// `device,type,size_from,variant,source`), or a one-line error naming the line.
pub fn parse(text: &str) -> Result<Vec<DeviceRow>> {
    let mut rows: Vec<DeviceRow> = Vec::new();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, h)) if h == HEADER => {}
        other => {
            return Err(Error::Invalid(format!(
                "the scan plan's device table starts with the header `{HEADER}`, not {:?}",
                other.map(|(_, l)| l)
            )));
        }
    }
    for (i, line) in lines {
        let bad = |why: String| Error::Invalid(format!("the scan plan's device table, line {}: {why}", i + 1));
        rows.push(parse_row(line, &rows).map_err(|e| bad(e.to_string()))?);
    }
    if !rows.iter().any(|r| r.group() == ("*", None)) {
        return Err(Error::Invalid(
            "the scan plan's device table has no `*,*` rows (the rule for other devices and types)".into(),
        ));
    }
    Ok(rows)
}

/// One row, after `rows` (a group's rows together, its sizes going up from 1).
fn parse_row(line: &str, rows: &[DeviceRow]) -> Result<DeviceRow> {
    let bad = |why: String| Error::Invalid(why);
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let [device, elem, size_from, variant, source] = fields[..] else {
        return Err(bad(format!("`{line}` has {} fields; a row has 5 ({HEADER})", fields.len())));
    };
    if device.is_empty() {
        return Err(bad("an empty device; name a part of the GPU's name, or * for the others".into()));
    }
    let elem = match elem {
        "*" => None,
        name => Some(Elem::parse(name).map_err(|e| bad(format!("{e}, or * for every type")))?),
    };
    let size_from = size_from.parse::<usize>().map_err(|_| bad(format!("size_from `{size_from}` is not a size")))?;
    let variant = find(variant)?;
    let checked = elem.unwrap_or(Elem::I32);
    if !variant.supports(checked, Op::Sum) {
        return Err(bad(format!("`{}` does not scan {} sums", variant.name, checked.name())));
    }
    if elem.is_none() && !variant.is_generic() {
        return Err(bad(format!("`{}` scans i32 sums only; a `*` type row needs a generic scan", variant.name)));
    }
    let row = DeviceRow { device: device.into(), elem, size_from, variant, source: source.into() };
    let group = row.group();
    match rows.last() {
        Some(last) if last.group() == group && last.size_from >= size_from => {
            Err(bad(format!("size_from {size_from} after {}: a group's rows go up", last.size_from)))
        }
        Some(last) if last.group() != group && rows.iter().any(|r| r.group() == group) => {
            Err(bad(format!("the rows of `{device}`, type `{}` are not together", elem.map_or("*", Elem::name))))
        }
        _ if size_from != 1 && rows.last().is_none_or(|r| r.group() != group) => {
            Err(bad(format!("the first row of a group starts at size_from {size_from}; it starts at 1")))
        }
        _ => Ok(row),
    }
}

/// The committed table.
pub fn table() -> Result<Vec<DeviceRow>> {
    parse(TABLE)
}

/// The variant the table gives the device called `device` (compute capability `cc`) for `n`
/// elements of `elem`: among the groups whose device name is part of `device`'s (else `*`) and
/// whose type is `elem` (else `*`), the most specific first (a named device before `*`, then a
/// named type before `*`), the row with the largest `size_from` ≤ `n`. A group whose row needs
/// a newer GPU than `cc` is passed over for the next.
pub fn variant_for(
    rows: &[DeviceRow],
    device: &str,
    cc: (u32, u32),
    elem: Elem,
    n: usize,
) -> Option<&'static ScanVariant> {
    let mut groups: Vec<(&str, Option<Elem>)> = Vec::new();
    for r in rows {
        let device_matches = r.device == "*" || device.contains(&r.device);
        if device_matches && r.elem.is_none_or(|e| e == elem) && !groups.contains(&r.group()) {
            groups.push(r.group());
        }
    }
    groups.sort_by_key(|&(d, e)| (d == "*", e.is_none()));
    groups.into_iter().find_map(|g| {
        let row = rows.iter().rev().find(|r| r.group() == g && r.size_from <= n.max(1))?;
        (cc >= row.variant.min_cc).then_some(row.variant)
    })
}

/// The scan variant for `n` elements of `elem` on `device`: the plan's per-device table
/// (`host/src/scan/plan_by_device.csv`, this module), by the device's name, the type and the
/// size, with the `*` rows for a device or type it does not name; [`fastest`] should the table
/// have no row (its unit tests keep that from happening).
pub fn fastest_on(device: &DeviceInfo, elem: Elem, n: usize) -> &'static ScanVariant {
    let cc = device.compute_capability;
    // Parsed once per process: every `Scanner::enqueue` asks.
    static ROWS: std::sync::OnceLock<Vec<DeviceRow>> = std::sync::OnceLock::new();
    let rows = ROWS.get_or_init(|| table().unwrap_or_default());
    variant_for(rows, &device.name, cc, elem, n).unwrap_or_else(|| fastest(cc))
}

/// **The library's plan**: the row a [`Scanner`](super::Scanner)`::<T, O>` runs on `device` for
/// `n` elements: the pair's row of [`fastest_on`]'s variant (by device, type and size), or
/// `lookback`'s should that variant not run the pair.
pub fn choose_on<T: Value>(op: Op, device: &DeviceInfo, n: usize) -> Result<ScanInstance<T>> {
    let v = fastest_on(device, T::ELEM, n);
    if v.supports(T::ELEM, op) { v.instance::<T>(op) } else { find("lookback")?.instance::<T>(op) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_reads_and_covers_every_device_and_type() {
        let rows = table().unwrap();
        for (name, cc) in [("NVIDIA H100 80GB HBM3", (9, 0)), ("NVIDIA H200", (9, 0)), ("Tesla V100", (7, 0))] {
            for elem in Elem::ALL {
                for n in [1, 1 << 16, 1 << 20, 1 << 28] {
                    let v = variant_for(&rows, name, cc, elem, n).expect("every device, type and size has a row");
                    assert!(cc >= v.min_cc, "{name}, {}, n = {n}: {} needs {:?}", elem.name(), v.name, v.min_cc);
                    assert!(v.supports(elem, Op::Sum), "{name}, {}: {}", elem.name(), v.name);
                }
            }
        }
        assert_eq!(variant_for(&rows, "CPU emulator", (9, 0), Elem::F64, 10).map(|v| v.name), Some("lookback"));
    }

    #[test]
    fn devices_types_sizes_and_the_fallbacks() {
        let text = "# c\ndevice,type,size_from,variant,source\n\
                    H100,i32,1,lookback,\nH100,i32,1048576,lookback_warpspec,x.csv\n\
                    H100,*,1,lookback,\nH100,*,4096,lookback_warpspec_8x12x6,y.csv\n\
                    *,*,1,lookback,\n";
        let rows = parse(text).unwrap();
        let h100 = "NVIDIA H100 80GB HBM3";
        let at = |device: &str, cc, elem, n| variant_for(&rows, device, cc, elem, n).unwrap().name;
        assert_eq!(at(h100, (9, 0), Elem::I32, 1_048_575), "lookback");
        assert_eq!(at(h100, (9, 0), Elem::I32, 1 << 20), "lookback_warpspec");
        assert_eq!(at(h100, (9, 0), Elem::I32, 1 << 28), "lookback_warpspec");
        // A type the device's rows do not name takes the device's `*` type rows.
        assert_eq!(at(h100, (9, 0), Elem::F64, 4095), "lookback");
        assert_eq!(at(h100, (9, 0), Elem::F64, 4096), "lookback_warpspec_8x12x6");
        assert_eq!(at("NVIDIA H200", (9, 0), Elem::I32, 1 << 28), "lookback");
        // A device that matches but is too old for the row's variant takes the * rows.
        assert_eq!(at("H100 (pretend sm_80)", (8, 0), Elem::I32, 1 << 28), "lookback");
        assert_eq!(at("H100 (pretend sm_80)", (8, 0), Elem::U64, 1 << 28), "lookback");
    }

    #[test]
    fn a_bad_table_says_which_line() {
        let head = "device,type,size_from,variant,source\n";
        for (body, what) in [
            ("H100,i32,1,nope,\n*,*,1,lookback,\n", "line 2"),
            ("H100,i32,2,lookback,\n*,*,1,lookback,\n", "starts at 1"),
            ("H100,i32,1,lookback,\nH100,i32,1,lookback,\n*,*,1,lookback,\n", "go up"),
            ("H100,i32,1,lookback,\n*,*,1,lookback,\nH100,i32,9,lookback,\n", "not together"),
            ("H100,i32,1,lookback\n", "5"),
            ("H100,i32,1,lookback,\n", "`*,*` rows"),
            ("H100,i32,x,lookback,\n*,*,1,lookback,\n", "not a size"),
            ("H100,i16,1,lookback,\n*,*,1,lookback,\n", "i16"),
            ("H100,f64,1,lookback_bulk,\n*,*,1,lookback,\n", "f64 sums"),
            ("H100,*,1,lookback_bulk,\n*,*,1,lookback,\n", "generic"),
        ] {
            let e = parse(&format!("{head}{body}")).unwrap_err().to_string();
            assert!(e.contains(what), "{body:?}: {e}");
        }
        assert!(parse("nope\n").unwrap_err().to_string().contains("header"));
    }
}
